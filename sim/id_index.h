// lockstep simulator: an index from 64-bit ids to pointers, for tables whose owner keeps them in
// order elsewhere (World::Impl's sessions: a std::map, iterated in id order by the digest, the
// session audit and the heartbeat model, and looked up by id on every request, notification
// and expiry check); and IdCounts, a count per id (a tree's ephemeral nodes per session).
//
// A std::map lookup among 10,000 sessions chases a dozen scattered tree nodes; here it reads one
// slot of a flat array (id, pointer). Open addressing with linear probing over a power-of-two
// array, at most half full; a slot's place is the top bits of the id times a 64-bit odd
// constant; erase shifts the rest of its run back (no tombstones). Lookups only: it has no
// iteration, so its order cannot show.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/probe.h"
#include "zk/invariant.h"

namespace lockstep::sim {

template <class T>
class IdIndex {
 public:
  size_t size() const { return size_; }
  T* find(uint64_t id) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = home(id);; i = next(i)) {
      if (slots_[i].ptr == nullptr) return nullptr;
      if (slots_[i].id == id) return slots_[i].ptr;
    }
  }
  // REQUIRES: `id` is not indexed; ptr is not null.
  void insert(uint64_t id, T* ptr) {
    LOCKSTEP_ASSERT(ptr != nullptr);
    if ((size_ + 1) * 2 > slots_.size()) grow();
    size_t i = home(id);
    for (; slots_[i].ptr != nullptr; i = next(i)) {
      LOCKSTEP_ASSERT_MSG(slots_[i].id != id, "IdIndex: " + std::to_string(id) + " is indexed");
    }
    slots_[i] = Slot{id, ptr};
    ++size_;
  }
  // Returns whether `id` was indexed.
  bool erase(uint64_t id) {
    if (slots_.empty()) return false;
    for (size_t i = home(id);; i = next(i)) {
      if (slots_[i].ptr == nullptr) return false;
      if (slots_[i].id != id) continue;
      --size_;
      erase_and_shift(
          slots_, i, [](const Slot& s) { return s.ptr == nullptr; },
          [this](const Slot& s) { return home(s.id); });
      return true;
    }
  }

 private:
  struct Slot {
    uint64_t id = 0;
    T* ptr = nullptr;  // null: empty
  };
  size_t home(uint64_t id) const {
    return static_cast<size_t>((id * 0x9e3779b97f4a7c15ull) >> shift_);
  }
  size_t next(size_t i) const { return (i + 1) & (slots_.size() - 1); }
  void grow() {
    grow_slots(
        slots_, 16, &shift_, [](const Slot& s) { return s.ptr == nullptr; },
        [this](const Slot& s) { return home(s.id); });
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  unsigned shift_ = 64;
};

// A positive count per 64-bit id, in the same flat table: an id whose count falls to 0 leaves
// it. A std::unordered_map here (DataTree's ephemerals per session) cost a bucket, a node and
// an allocation per first ephemeral of a session: a chase of cold lines per create and per delete
// among thousands of sessions. Lookups only, like IdIndex.
class IdCounts {
 public:
  size_t size() const { return size_; }
  uint32_t count(uint64_t id) const {
    if (slots_.empty()) return 0;
    for (size_t i = home(id);; i = next(i)) {
      if (slots_[i].count == 0) return 0;
      if (slots_[i].id == id) return slots_[i].count;
    }
  }
  void increment(uint64_t id) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    size_t i = home(id);
    for (; slots_[i].count != 0; i = next(i)) {
      if (slots_[i].id == id) {
        LOCKSTEP_ASSERT(slots_[i].count < UINT32_MAX);
        ++slots_[i].count;
        return;
      }
    }
    slots_[i] = Slot{id, 1};
    ++size_;
  }
  // REQUIRES: count(id) > 0.
  void decrement(uint64_t id) {
    LOCKSTEP_ASSERT_MSG(!slots_.empty(), "IdCounts: " + std::to_string(id) + " has no count");
    for (size_t i = home(id);; i = next(i)) {
      LOCKSTEP_ASSERT_MSG(slots_[i].count != 0,
                          "IdCounts: " + std::to_string(id) + " has no count");
      if (slots_[i].id != id) continue;
      if (--slots_[i].count > 0) return;
      --size_;
      erase_and_shift(
          slots_, i, [](const Slot& s) { return s.count == 0; },
          [this](const Slot& s) { return home(s.id); });
      return;
    }
  }

 private:
  struct Slot {
    uint64_t id = 0;
    uint32_t count = 0;  // 0: empty
  };
  size_t home(uint64_t id) const {
    return static_cast<size_t>((id * 0x9e3779b97f4a7c15ull) >> shift_);
  }
  size_t next(size_t i) const { return (i + 1) & (slots_.size() - 1); }
  void grow() {
    grow_slots(
        slots_, 16, &shift_, [](const Slot& s) { return s.count == 0; },
        [this](const Slot& s) { return home(s.id); });
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  unsigned shift_ = 64;
};

}  // namespace lockstep::sim
