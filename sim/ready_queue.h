// lockstep simulator: the candidates due at the current instant, for the scheduler's choice.
//
// The scheduler picks the i-th runnable candidate (in the order they became due) and, before each
// choice, drops or defers the ones that can no longer run (EventFilter::classify). With ten
// thousand clients, thousands of events fall due at one instant; a vector erased in the middle
// and re-classified whole at every step made each step O(candidates). Here:
//   - candidates sit in slots in the order they came (a removed one leaves a hole), with a
//     Fenwick tree over the live ones once there are more than a few: the i-th live candidate
//     and its removal cost O(log n) (below that, the i-th is found by counting);
//   - filter() classifies the candidates that came since the last call, and again only those of
//     the owners whose state changed (EventFilter::take_changes; an index owner -> slots), or
//     all of them when more than a few owners changed;
//   - every so often it classifies all kept ones again and asserts they still run, so a state
//     change that forgot to report itself is an invariant failure, not a different schedule.
// The holes are squeezed out when they outnumber the live candidates. Every answer (the count,
// the i-th, the order, what is dropped and deferred and in which order per client) is the one
// a plain vector re-classified at every step gives.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/event.h"
#include "zk/invariant.h"

namespace lockstep::sim {

class ReadyQueue {
 public:
  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }

  void push(const Event& e) {
    if (live_ == 0 && !slots_.empty()) clear();  // all taken: start the slots again
    slots_.push_back(Slot{e, 0, true});
    ++live_;
    if (!indexed()) {
      if (slots_.size() > kScanned) build_tree();
      return;
    }
    tree_.push_back(0);
    const size_t k = slots_.size();  // 1-based index of the new slot
    // tree_[k] covers (k - lowbit(k), k]: the live ones before it in that range, and itself.
    tree_[k - 1] = static_cast<int32_t>(prefix(k - 1) - prefix(k - (k & (~k + 1))) + 1);
  }

  void clear() {
    slots_.clear();
    tree_.clear();
    clear_owner_lists();
    live_ = 0;
    classified_ = 0;
  }

  // Drops and defers what can no longer run (see the header). `changes`: the owners that
  // changed since the last call (EventFilter::take_changes).
  void filter(EventFilter& f, const std::vector<uint32_t>& changes) {
    if (slots_.size() > 2 * live_ + 64) compact();
    if (--verify_countdown_ <= 0) {
      verify_countdown_ = static_cast<int64_t>(64 + live_);
      for (size_t s = 0; s < classified_; ++s) {
        if (!slots_[s].live) continue;
        const bool changed =
            std::find(changes.begin(), changes.end(), slots_[s].owner) != changes.end();
        LOCKSTEP_ASSERT_MSG(changed || f.classify(slots_[s].event) == Disposition::kRun,
                            "a candidate event stopped being runnable though its owner's state "
                            "did not change (a change classify() reads is not reported)");
      }
    }
    if (changes.size() > 8) {  // many changed (a crash, a restart): all again, in order
      clear_owner_lists();
      for (size_t s = 0; s < classified_; ++s) {
        if (slots_[s].live && sort_out(f, s)) list_slot(s);
      }
    } else {
      for (uint32_t o : changes) {
        if (o >= by_owner_.size()) continue;
        std::vector<uint32_t>& list = by_owner_[o];
        size_t keep = 0;
        for (uint32_t s : list) {
          if (slots_[s].live && sort_out(f, s)) list[keep++] = s;
        }
        list.resize(keep);
      }
    }
    for (size_t s = classified_; s < slots_.size(); ++s) {
      slots_[s].owner = f.owner(slots_[s].event);
      if (sort_out(f, s)) list_slot(s);
    }
    classified_ = slots_.size();
  }

  // Removes and returns the i-th live candidate. REQUIRES: i < size().
  Event take(size_t i) {
    LOCKSTEP_ASSERT(i < live_);
    const size_t s = select(i);
    remove(s);
    return slots_[s].event;
  }

  // The live candidates, in order.
  template <class Fn>
  void for_each(Fn fn) const {
    for (const Slot& slot : slots_) {
      if (slot.live) fn(slot.event);
    }
  }

 private:
  struct Slot {
    Event event;
    uint32_t owner = 0;  // EventFilter::owner, once classified
    bool live = true;
  };

  // Classifies slot s: true if it still runs; else it is removed (and deferred if so told).
  bool sort_out(EventFilter& f, size_t s) {
    const Disposition d = f.classify(slots_[s].event);
    if (d == Disposition::kRun) return true;
    remove(s);
    if (d == Disposition::kDefer) f.defer(slots_[s].event);
    return false;
  }

  void remove(size_t s) {
    LOCKSTEP_ASSERT(slots_[s].live);
    slots_[s].live = false;
    --live_;
    if (!indexed()) return;
    for (size_t k = s + 1; k <= tree_.size(); k += k & (~k + 1)) --tree_[k - 1];
  }

  int64_t prefix(size_t k) const {  // live slots among the first k
    int64_t sum = 0;
    for (; k > 0; k -= k & (~k + 1)) sum += tree_[k - 1];
    return sum;
  }

  size_t select(size_t i) const {  // the slot of the i-th live one (0-based)
    if (!indexed()) {  // a few slots: counted in place
      for (size_t s = 0;; ++s) {
        if (slots_[s].live && i-- == 0) return s;
      }
    }
    size_t pos = 0;
    int64_t remaining = static_cast<int64_t>(i) + 1;
    size_t step = 1;
    while (step * 2 <= tree_.size()) step *= 2;
    for (; step > 0; step /= 2) {
      if (pos + step <= tree_.size() && tree_[pos + step - 1] < remaining) {
        pos += step;
        remaining -= tree_[pos - 1];
      }
    }
    return pos;  // 1-based pos + 1 is the slot; 0-based it is pos
  }

  void compact() {
    size_t keep = 0, classified = 0;
    for (size_t s = 0; s < slots_.size(); ++s) {
      if (!slots_[s].live) continue;
      if (s < classified_) ++classified;
      slots_[keep++] = slots_[s];
    }
    slots_.resize(keep);
    classified_ = classified;
    if (keep > kScanned) {
      build_tree();
    } else {
      tree_.clear();
    }
    clear_owner_lists();
    for (size_t s = 0; s < classified_; ++s) list_slot(s);
  }

  void build_tree() {  // the Fenwick tree over the slots as they are
    const size_t n = slots_.size();
    tree_.assign(n, 0);
    for (size_t k = 1; k <= n; ++k) {
      tree_[k - 1] += slots_[k - 1].live ? 1 : 0;
      const size_t parent = k + (k & (~k + 1));
      if (parent <= n) tree_[parent - 1] += tree_[k - 1];
    }
  }

  void list_slot(size_t s) {  // files classified slot s under its owner
    const uint32_t o = slots_[s].owner;
    if (o >= by_owner_.size()) by_owner_.resize(o + 1);
    if (by_owner_[o].empty()) listed_owners_.push_back(o);
    by_owner_[o].push_back(static_cast<uint32_t>(s));
  }

  void clear_owner_lists() {  // O(owners listed since the last clear), not O(all owners)
    for (uint32_t o : listed_owners_) by_owner_[o].clear();
    listed_owners_.clear();
  }

  std::vector<Slot> slots_;
  // Up to this many slots the i-th live one is found by counting: cheaper than keeping the tree
  // for the handful of candidates most instants have.
  static constexpr size_t kScanned = 32;
  // Is the tree kept? (Built once the slots pass kScanned, dropped with them.)
  bool indexed() const { return !tree_.empty(); }
  std::vector<int32_t> tree_;  // Fenwick tree over slots_[i].live (1-based: tree_[k - 1])
  std::vector<std::vector<uint32_t>> by_owner_;  // owner -> its classified slots, in order
  std::vector<uint32_t> listed_owners_;  // owners whose list may be non-empty
  size_t live_ = 0;
  size_t classified_ = 0;  // slots_[0, classified_) were classified (the live ones run)
  int64_t verify_countdown_ = 64;
};

}  // namespace lockstep::sim
