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
//   7. event times: compared only for the operations timed() names, within kTimingToleranceMs
//      (the C client's timers run on a real clock, the server's expiry on tick boundaries);
//   6. a slot's session state changes (its subscription) are compared in their order; watch
//      events are compared per operation window and per slot as a sorted multiset: which
//      operation's reply or settle they arrived under is compared, their order inside one
//      window is not. Different sessions are different connections (no order between them),
//      and inside one client the simulator resumes the coroutines woken by one batch of
//      deliveries in an order its scheduler chooses (DESIGN: several coroutines per client), so
//      the recorder's order is not the delivery order. The simulator's delivery order itself is
//      in its event log (seeds 1029 and 1693 checked by hand: created/deleted before the
//      parent's children-changed, as on the real server).
#pragma once

#include <cstdint>
#include <map>
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
  // For a timed operation (timed() below): each event's time after the operation started, in
  // ms, in the order of `events`; compared within kTimingToleranceMs (freedom 7).
  std::vector<int64_t> event_ms;
  bool operator==(const Normalized&) const = default;
};

// Freedom 7: the operations whose event times are compared (a cut, a partition, a lost
// request or reply: the client's own timers decide them), and how far apart the two backends'
// times may be. The real server's expire and restart block the test's thread (the harness
// runs them), so their times are the harness's, not the client's, and are not compared.
bool timed(const Op& op);
inline constexpr int64_t kTimingToleranceMs = 250;

Normalized normalize(const RawOutcome& raw, const std::string& root, bool timed = false);

// One line: "ZOK path=/d/q-0000000001 stat={...} events=[...]".
std::string to_string(const Normalized& n);

// The names of the fields that differ ("error", "stat", "events", "timing", ...), in field
// order. "timing" only when the events are equal and one time is off by more than the
// tolerance.
std::vector<std::string> differences(const Normalized& sim, const Normalized& real);

// The largest |sim - real| event time of two timed outcomes with equal events, by event
// ("session:connecting", "deleted", ...), merged into `skew` (for the report).
void add_skews(const Normalized& sim, const Normalized& real, std::map<std::string, int64_t>* skew);

}  // namespace lockstep::fidelity
