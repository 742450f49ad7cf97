// lockstep simulator: the hash behind World::state_digest(), a read-only summary of a run's
// state for search strategies (explore/ counts the distinct states it visits).
//
// Digest mixes 64-bit words and strings in order (FNV-1a, then a splitmix64 finish), so the
// order of what is mixed matters; collections whose order is not part of the state (the events
// due, the nodes of a tree kept in a hash map) are folded with add(), which does not depend on
// the order of the items. Never fed pointer values. Plain value; no I/O.
#pragma once

#include <cstdint>
#include <string_view>

#include "zk/random.h"

namespace lockstep::sim {

class Digest {
 public:
  Digest& word(uint64_t v) {
    h_ ^= v;
    h_ *= 1099511628211ull;
    h_ ^= h_ >> 29;
    return *this;
  }
  Digest& text(std::string_view s) { return word(zk::fnv1a(s)).word(s.size()); }
  uint64_t value() const {
    uint64_t s = h_;
    return zk::splitmix64(&s);
  }

 private:
  uint64_t h_ = 1469598103934665603ull;
};

// A multiset of item digests, folded so that the order of the items does not matter.
class UnorderedDigest {
 public:
  void add(const Digest& item) {
    sum_ += item.value();
    ++count_;
  }
  uint64_t value() const { return Digest().word(sum_).word(count_).value(); }

 private:
  uint64_t sum_ = 0;
  uint64_t count_ = 0;
};

}  // namespace lockstep::sim
