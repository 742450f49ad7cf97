// lockstep traces: the herd report as a self-contained HTML page. One inline SVG plots, on
// log-log axes, the watch notifications per release (y) against the waiters queued (x), one
// labelled line (an SVG <polyline> of class "series") per recipe, so the naive lock's line
// climbing with N sits beside a herd-free lock's flat one; a table below gives every figure.
// No script and nothing external: the page renders as it is, in any browser or none.
//
// Deterministic: the same results give the same bytes. Pure function; no I/O (the command writes
// the page with write_file_atomically).
#pragma once

#include <string>
#include <vector>

#include "properties/herd.h"

namespace lockstep::traces {

// `results`: every (recipe, waiters) measured, in any order; a recipe's points are joined in
// order of waiters. `subtitle`: one line under the title (the command line, the seed).
std::string render_herd_html(const std::vector<properties::HerdResult>& results,
                             const std::string& subtitle);

}  // namespace lockstep::traces
