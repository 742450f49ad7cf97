// lockstep contract: FlatMap, a small ordered map — a sorted vector of (key, value) pairs with
// the part of std::map's interface its users need.
//
// For maps of a few entries that gain and lose one at nearly every operation: the checkers'
// per-holder and per-client state, a context's unfinished tasks and sleeps, a simulated
// client's live timers. A std::map makes and frees a node for each; a FlatMap keeps its entries
// in one buffer and moves a few of them. It iterates in key order, as std::map does, so code
// that reports or destroys in key order does so in the same order.
//
// Invariants: 1. the entries are sorted by key, each key once. 2. An insert or an erase
// invalidates every iterator and reference into the map (a vector's rules), except that
// erase(it) returns the iterator to the entry after the erased one. Not thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace zk {

template <class K, class V>
class FlatMap {
 public:
  using value_type = std::pair<K, V>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  iterator begin() { return entries_.begin(); }
  iterator end() { return entries_.end(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  iterator find(const K& k) {
    const iterator it = lower_bound(k);
    return it != entries_.end() && it->first == k ? it : entries_.end();
  }
  const_iterator find(const K& k) const {
    const const_iterator it = lower_bound(k);
    return it != entries_.end() && it->first == k ? it : entries_.end();
  }
  size_t count(const K& k) const { return find(k) != end() ? 1 : 0; }

  // The value of `k`, value-initialized when new.
  V& operator[](const K& k) { return try_emplace(k, V{}).first->second; }
  // Inserts (k, v) unless `k` is present; the entry of `k` and whether it is new.
  std::pair<iterator, bool> try_emplace(const K& k, V v) {
    iterator it = lower_bound(k);
    if (it != entries_.end() && it->first == k) return {it, false};
    return {entries_.insert(it, value_type(k, std::move(v))), true};
  }

  iterator erase(const_iterator it) { return entries_.erase(it); }
  size_t erase(const K& k) {
    const iterator it = find(k);
    if (it == entries_.end()) return 0;
    entries_.erase(it);
    return 1;
  }

 private:
  iterator lower_bound(const K& k) {
    return std::lower_bound(entries_.begin(), entries_.end(), k,
                            [](const value_type& x, const K& key) { return x.first < key; });
  }
  const_iterator lower_bound(const K& k) const {
    return std::lower_bound(entries_.begin(), entries_.end(), k,
                            [](const value_type& x, const K& key) { return x.first < key; });
  }

  std::vector<value_type> entries_;  // sorted by key, each key once
};

}  // namespace zk
