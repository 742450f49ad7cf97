// lockstep fidelity: shrinking a mismatching sequence (issue 18).
//
// shrink() removes operations from a sequence while `differs` still holds, the way delta
// debugging does: first everything after `first_bad` (the first operation that differed), then
// chunks of half the length, a quarter, ... down to single operations, repeated until no single
// removal keeps the difference, then pairs (a close and its reopen only go together). Every
// candidate keeps the generator's rules (sequence.h valid()): a removal that would leave a reopen
// of a live session or a fault on an ended one is not tried. `differs` runs the candidate on both
// backends, so it is called at most `budget` times; the result is the shortest sequence found by
// then (the input when nothing shorter differs, for example when the mismatch does not reproduce).
#pragma once

#include <cstddef>
#include <functional>

#include "fidelity/sequence.h"

namespace lockstep::fidelity {

struct ShrinkResult {
  Sequence sequence;
  size_t calls = 0;         // how many times `differs` ran
  bool reproduced = false;  // the (truncated or whole) input still differed
};

ShrinkResult shrink(const Sequence& seq, size_t first_bad, int servers,
                    const std::function<bool(const Sequence&)>& differs, size_t budget = 150);

}  // namespace lockstep::fidelity
