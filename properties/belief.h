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
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

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

// Replays beliefs event by event, per holder (history order). The holders are few (a run's
// clients times their callers) and every grant, release and loss looks its holder up, so they
// live in a vector ordered by holder rather than in a tree: the same order, without a node per
// holder to chase.
class BeliefTracker {
 public:
  using Entry = std::pair<Holder, Belief>;

  // True when `e` is a fresh grant: an `ok acquire` of a holder that does not hold yet (ask
  // before apply()).
  bool is_fresh_grant(const Event& e) const {
    return e.op == Op::kAcquire && e.type == Type::kOk && !holds(holder_of(e));
  }
  // Does `h` believe it holds?
  bool holds(Holder h) const {
    const Belief* b = of(h);
    return b != nullptr && b->holds;
  }

  void apply(const Event& e) {
    // Of a holder's own events only its grants, releases and losses move its belief. Most
    // events move none: they return here, before the call that looks a holder up.
    const bool grant = e.op == Op::kAcquire && e.type == Type::kOk;
    if (grant || e.op == Op::kRelease || e.op == Op::kLost || client_wide(e.op)) move(e, grant);
  }

  // Every holder granted so far, in holder order; each holder's belief (holds false once it
  // ended).
  const std::vector<Entry>& beliefs() const { return beliefs_; }
  // nullptr for a holder never granted. REQUIRES for the pointer: no apply() since (a new
  // holder moves the others).
  const Belief* of(Holder h) const {
    const size_t i = position(h);
    return i == beliefs_.size() || beliefs_[i].first != h ? nullptr : &beliefs_[i].second;
  }
  const Belief* of(const Event& e) const { return of(holder_of(e)); }
  // How many holders believe they hold.
  uint32_t holding() const { return holding_; }
  // How many events so far could have moved a belief (grants, releases, losses, facts about a
  // whole client): a caller that keeps something derived from the beliefs need look again only
  // when this changed.
  uint64_t moves() const { return moves_; }
  // How many of them hold on after a session-dead notice (Belief::noticed).
  uint32_t noticed() const { return noticed_; }

 private:
  static uint64_t key(Holder h) { return uint64_t{h.first} << 32 | h.second; }
  // The index of the first entry whose holder is not before `h`.
  size_t position(Holder h) const {
    const auto it = std::lower_bound(
        beliefs_.begin(), beliefs_.end(), key(h),
        [](const Entry& x, uint64_t k) { return key(x.first) < k; });
    return static_cast<size_t>(it - beliefs_.begin());
  }

  // apply() of an event that may move a belief (`grant`: it is an `ok acquire`).
  void move(const Event& e, bool grant) {
    ++moves_;
    if (client_wide(e.op)) {
      for (size_t i = position({e.client, 0});
           i < beliefs_.size() && beliefs_[i].first.first == e.client; ++i) {
        apply_counted(beliefs_[i].second, e);
      }
      return;
    }
    const Holder h = holder_of(e);
    const size_t i = position(h);
    if (i == beliefs_.size() || beliefs_[i].first != h) {
      if (!grant) return;  // a holder that never held believes nothing to change
      beliefs_.insert(beliefs_.begin() + static_cast<ptrdiff_t>(i), Entry{h, Belief{}});
    }
    apply_counted(beliefs_[i].second, e);
  }

  void apply_counted(Belief& b, const Event& e) {
    const bool held = b.holds;
    const bool noticed = b.noticed.has_value();
    apply_to(b, e);
    if (b.holds != held) holding_ = b.holds ? holding_ + 1 : holding_ - 1;
    if (b.noticed.has_value() != noticed) noticed_ = noticed ? noticed_ - 1 : noticed_ + 1;
  }

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

  std::vector<Entry> beliefs_;  // ordered by holder, each once
  uint64_t moves_ = 0;          // calls of move()
  uint32_t holding_ = 0;        // entries whose belief holds
  uint32_t noticed_ = 0;        // entries whose belief holds and has a notice
};

}  // namespace lockstep::properties
