// lockstep simulator: an index from 64-bit ids to pointers, for tables whose owner keeps them in
// order elsewhere (World::Impl's sessions: a std::map, iterated in id order by the digest, the
// session audit and the heartbeat model, and looked up by id on every request, notification
// and expiry check); and IdCounts, a count per id (a tree's ephemeral nodes per session).
//
// A std::map lookup among 10,000 sessions chases a dozen scattered tree nodes; here it reads one
// slot of a flat array (id, pointer or count). Open addressing with linear probing over a
// power-of-two array, at most half full; a slot's place is the top bits of the id times a 64-bit
// odd constant; erase shifts the rest of its run back (no tombstones). Lookups, and for IdIndex
// a sweep of its slots that only the session audit makes (it asserts and logs nothing), so the
// table's order cannot show in a run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/probe.h"
#include "zk/invariant.h"

namespace lockstep::sim {

// The flat table under both: slots of (id, value), where a value equal to Value{} (a null
// pointer, a zero count) marks an empty slot.
template <class Value>
class IdTable {
 public:
  size_t size() const { return size_; }
  // Asks the cache for the slot where a look-up of `id` starts, ahead of the look-up.
  void prefetch(uint64_t id) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[home(id)]);
  }

 protected:
  struct Slot {
    uint64_t id = 0;
    Value value{};
  };
  static bool empty(const Slot& s) { return s.value == Value{}; }
  // The slot holding `id`, or the empty slot that ends its run. REQUIRES: the table has slots.
  size_t probe(uint64_t id) const {
    size_t i = home(id);
    while (!empty(slots_[i]) && slots_[i].id != id) i = next(i);
    return i;
  }
  // Keeps the table at most half full with one entry more.
  void reserve_one() {
    if ((size_ + 1) * 2 <= slots_.size()) return;
    grow_slots(slots_, 16, &shift_, empty, [this](const Slot& s) { return home(s.id); });
  }
  // REQUIRES: slot i is the empty one probe(id) found; value is not Value{}.
  void fill(size_t i, uint64_t id, Value value) {
    slots_[i] = Slot{id, value};
    ++size_;
  }
  // Empties slot i, moving the rest of its run back.
  void vacate(size_t i) {
    --size_;
    erase_and_shift(slots_, i, empty, [this](const Slot& s) { return home(s.id); });
  }

  std::vector<Slot> slots_;

 private:
  size_t home(uint64_t id) const {
    return static_cast<size_t>((id * 0x9e3779b97f4a7c15ull) >> shift_);
  }
  size_t next(size_t i) const { return (i + 1) & (slots_.size() - 1); }

  size_t size_ = 0;
  unsigned shift_ = 64;
};

template <class T>
class IdIndex : public IdTable<T*> {
 public:
  T* find(uint64_t id) const {
    if (this->slots_.empty()) return nullptr;
    return this->slots_[this->probe(id)].value;  // null when the probe ends at an empty slot
  }
  // REQUIRES: `id` is not indexed; ptr is not null.
  void insert(uint64_t id, T* ptr) {
    LOCKSTEP_ASSERT(ptr != nullptr);
    this->reserve_one();
    const size_t i = this->probe(id);
    LOCKSTEP_ASSERT_MSG(this->empty(this->slots_[i]),
                        "IdIndex: " + std::to_string(id) + " is indexed");
    this->fill(i, id, ptr);
  }
  // The table's slots in their order, for a sweep that must not chase a tree: slot_count()
  // slots, at_slot(i) the value in slot i or nullptr when it is empty. A slot's entry may move
  // when the table grows or an entry before it is erased.
  size_t slot_count() const { return this->slots_.size(); }
  T* at_slot(size_t i) const { return this->slots_[i].value; }
  void prefetch_slot(size_t i) const { __builtin_prefetch(&this->slots_[i]); }
  // Returns whether `id` was indexed.
  bool erase(uint64_t id) {
    if (this->slots_.empty()) return false;
    const size_t i = this->probe(id);
    if (this->empty(this->slots_[i])) return false;
    this->vacate(i);
    return true;
  }
};

// A positive count per 64-bit id: an id whose count falls to 0 leaves the table. A
// std::unordered_map here (DataTree's ephemerals per session) cost a bucket, a node and an
// allocation per first ephemeral of a session: a chase of cold lines per create and per delete
// among thousands of sessions. Lookups only, like IdIndex.
class IdCounts : public IdTable<uint32_t> {
 public:
  uint32_t count(uint64_t id) const { return slots_.empty() ? 0 : slots_[probe(id)].value; }
  void increment(uint64_t id) {
    reserve_one();
    const size_t i = probe(id);
    if (empty(slots_[i])) {
      fill(i, id, 1);
      return;
    }
    LOCKSTEP_ASSERT(slots_[i].value < UINT32_MAX);
    ++slots_[i].value;
  }
  // REQUIRES: count(id) > 0.
  void decrement(uint64_t id) {
    const size_t i = slots_.empty() ? 0 : probe(id);
    LOCKSTEP_ASSERT_MSG(!slots_.empty() && !empty(slots_[i]),
                        "IdCounts: " + std::to_string(id) + " has no count");
    if (--slots_[i].value == 0) vacate(i);
  }
};

}  // namespace lockstep::sim
