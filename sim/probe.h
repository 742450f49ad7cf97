// lockstep simulator: what sim/path_map.h and sim/id_index.h share: linear probing's growth and
// erase.
#pragma once

#include <bit>
#include <cstddef>
#include <vector>

namespace lockstep::sim {

// Empties slot i of `slots` (a power-of-two array probed linearly) and moves back each later
// entry of i's run that may sit in the hole (one whose home is not cyclically within (i, j]),
// so that a lookup may still stop at the first empty slot: no tombstones. `empty(slot)` says
// whether a slot is free, `home(slot)` where its entry would sit alone; Slot{} is empty.
// Makes `slots` `first` long when it is empty, twice as long otherwise, sets *shift to 64 minus
// log2 of the new length (the tables take a hash's top bits as its home), and puts each entry
// back at the first free slot from its home.
template <class Slot, class Empty, class Home>
void grow_slots(std::vector<Slot>& slots, size_t first, unsigned* shift, Empty empty, Home home) {
  std::vector<Slot> old = std::move(slots);
  const size_t capacity = old.empty() ? first : old.size() * 2;
  slots.assign(capacity, Slot{});
  *shift = 64 - static_cast<unsigned>(std::countr_zero(capacity));
  for (const Slot& s : old) {
    if (empty(s)) continue;
    size_t i = home(s);
    while (!empty(slots[i])) i = (i + 1) & (capacity - 1);
    slots[i] = s;
  }
}

template <class Slot, class Empty, class Home>
void erase_and_shift(std::vector<Slot>& slots, size_t i, Empty empty, Home home) {
  const size_t mask = slots.size() - 1;
  for (size_t j = (i + 1) & mask; !empty(slots[j]); j = (j + 1) & mask) {
    const size_t want = home(slots[j]);
    const bool stays = i <= j ? (i < want && want <= j) : (i < want || want <= j);
    if (stays) continue;
    slots[i] = slots[j];
    i = j;
  }
  slots[i] = Slot{};
}

}  // namespace lockstep::sim
