// lockstep properties: beliefs — who believes it holds the lock, at what re-entrant depth —
// replayed from a history event by event. The checkers (properties/checkers.cc) judge these
// beliefs; the timeline (traces/timeline.cc) draws them: one rule, so that a lane drawn
// "holding x2" is what the mutual-exclusion checker counts.
//
// The rule (properties/checkers.h states it for readers of verdicts):
//   - a holder (a client, or with shared callers one caller task of it) believes it holds from
//     its fresh `ok acquire` until it invokes the release of its outermost hold, or reports
//     `info lost`, crashes, reopens or gives up;
//   - a re-entrant `ok acquire` deepens the hold (to at least the depth the grant reports), and
//     an inner release's `ok` makes it one shallower: neither ends the belief.
// Facts about the whole client (client_wide: crash, reopen, give up, session events, done) apply
// to every caller of it. A BeliefTracker is a value, not thread-safe, with no globals.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "properties/history.h"

namespace lockstep::properties {

// Who holds: a client, or with shared callers one caller task of it (Event::task). Every belief
// is a holder's; facts about the whole client (client_wide) end or mark those of all its callers.
using Holder = std::pair<uint32_t, uint32_t>;  // (client, task)
inline Holder holder_of(const Event& e) { return {e.client, e.task}; }
inline bool client_wide(Op op) {
  return op == Op::kCrash || op == Op::kReopen || op == Op::kGiveUp || op == Op::kSession ||
         op == Op::kDone;
}

// What one holder believes.
struct Belief {
  bool holds = false;
  uint32_t depth = 0;
  int64_t token = 0;
  recipes::Role role = recipes::Role::kExclusive;
  uint64_t since = 0;               // index of the fresh grant
  std::optional<uint64_t> noticed;  // the session-dead notice received while holding
};

// Replays beliefs event by event, per holder (history order).
class BeliefTracker {
 public:
  // True when `e` is a fresh grant: an `ok acquire` of a holder that does not hold yet (ask
  // before apply()).
  bool is_fresh_grant(const Event& e) const {
    if (e.op != Op::kAcquire || e.type != Type::kOk) return false;
    auto it = beliefs_.find(holder_of(e));
    return it == beliefs_.end() || !it->second.holds;
  }

  void apply(const Event& e) {
    if (client_wide(e.op)) {
      for (auto& [h, b] : beliefs_) {
        if (h.first == e.client) apply_to(b, e);
      }
      return;
    }
    apply_to(beliefs_[holder_of(e)], e);
  }

  const std::map<Holder, Belief>& beliefs() const { return beliefs_; }
  const Belief* of(Holder h) const {
    auto it = beliefs_.find(h);
    return it == beliefs_.end() ? nullptr : &it->second;
  }
  const Belief* of(const Event& e) const { return of(holder_of(e)); }

 private:
  static void apply_to(Belief& b, const Event& e) {
    switch (e.op) {
      case Op::kAcquire:
        if (e.type != Type::kOk) break;
        if (!b.holds) {
          b = Belief{true, std::max<uint32_t>(1, e.hold_count), e.token, e.role, e.index, {}};
        } else {
          b.depth = std::max(b.depth + 1, e.hold_count);
        }
        break;
      case Op::kRelease:
        if (e.type == Type::kInvoke && b.depth <= 1) b = Belief{};
        if (e.type == Type::kOk && b.depth > 1) --b.depth;
        break;
      case Op::kLost:
      case Op::kCrash:
      case Op::kReopen:
      case Op::kGiveUp: b = Belief{}; break;
      case Op::kSession:
        if (b.holds && !b.noticed &&
            (e.session_state == zk::SessionState::kExpired ||
             e.session_state == zk::SessionState::kClosed)) {
          b.noticed = e.index;
        }
        break;
      default: break;
    }
  }

  std::map<Holder, Belief> beliefs_;
};

}  // namespace lockstep::properties
