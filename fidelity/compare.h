// lockstep fidelity: what of an outcome is comparable between the simulator and a real server.
//
// normalize() is the ONE place that states where the real server is free to differ from the
// simulator; every comparison goes through it:
//   1. children order: the server returns hash-set order (the simulator a seeded permutation),
//      so children are compared as a sorted set;
//   2. session ids: random 64-bit values, so an ephemeral owner is named by the slot and the
//      generation of the session that owns it ("s1#0"), or "other";
//   3. zxids (czxid, mzxid, pzxid) and times (ctime, mtime): values differ, so they are dropped;
//      version, cversion, aversion, num_children, data_length and the owner are compared;
//   4. paths: both runs use the same root, which is stripped; sequence suffixes are compared
//      exactly (both roots start with an empty history);
//   5. timing: a watch event is compared by (slot, type, state, path) and by the operation it
//      arrived under, after a settle round trip on every session (runner.h), never by time;
//   6. watch events are compared per operation window and per slot as a sorted multiset: which
//      operation's reply or settle they arrived under is compared, their order inside one
//      window is not. Different sessions are different connections (no order between them),
//      and inside one client the simulator resumes the coroutines woken by one batch of
//      deliveries in an order its scheduler chooses (DESIGN: several coroutines per client), so
//      the recorder's order is not the delivery order. The simulator's delivery order itself is
//      in its event log (seeds 1029 and 1693 checked by hand: created/deleted before the
//      parent's children-changed, as on the real server).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fidelity/runner.h"

namespace lockstep::fidelity {

// An outcome reduced to what must be equal on both backends, as text (empty = absent).
struct Normalized {
  std::string error;
  std::string path;
  std::string data;
  std::string stat;
  std::string children;
  std::string state;
  std::string events;
  bool operator==(const Normalized&) const = default;
};

Normalized normalize(const RawOutcome& raw, const std::string& root);

// One line: "ZOK path=/d/q-0000000001 stat={...} events=[...]".
std::string to_string(const Normalized& n);

// The names of the fields that differ ("error", "stat", "events", ...), in field order.
std::vector<std::string> differences(const Normalized& sim, const Normalized& real);

}  // namespace lockstep::fidelity
