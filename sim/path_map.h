// lockstep simulator: a hash map from paths to values, for the server's path-keyed tables (a
// DataTree's nodes, a server's watch tables).
//
// Why not std::unordered_map<std::string, V>: at 10,000 clients these tables hold 10,000 entries
// each, three servers keep their own, and a grant looks paths up in them a dozen times; almost
// every lookup misses the cache. In libstdc++'s map a found entry costs four places in memory:
// the bucket, the node before the bucket's first (a singly linked list), the node, and the
// key's characters in their own allocation (a path is longer than a string's inline 15). Here it
// costs two: a slot in one flat array (the full 64-bit hash and a pointer) and one allocation
// holding the key's characters and then the value, so the compare and the caller's first reads
// share lines.
//
// Open addressing with linear probing over a power-of-two array, at most 3/4 full; a slot's
// place is the hash's top bits; erase shifts the rest of its run back (no tombstones), so a
// lookup stops at the first empty slot. Entries never move: a value's address is stable until
// its entry is erased. Iteration follows the hashes: nothing the simulator shows may depend on
// it (callers that show entries sort them, as they did before).
//
// Single-threaded; not copyable (neither table is copied).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/probe.h"
#include "zk/invariant.h"

namespace lockstep::sim {

// The hash of a path, 8 bytes at a time (data_tree.cc).
uint64_t path_hash(std::string_view s);

// A path with its path_hash(), for a caller that looks one path up in several maps (a
// transaction's path and its parent's, on each server's tree and in its two watch tables): the
// hash is taken once instead of at every lookup. Every one holds its path's hash: made from a
// path (the empty one by default), or by with_hash from a hash taken before.
class HashedPath {
 public:
  explicit HashedPath(std::string_view path = {}) : path_(path), hash_(path_hash(path)) {}
  // REQUIRES: hash == path_hash(path) (one taken earlier of the same characters). Checked in
  // the sanitizer build (LOCKSTEP_CHECK_PRECONDITIONS): there every carried hash is taken again
  // here and compared, so each lookup made with one is proven.
  static HashedPath with_hash(std::string_view path, uint64_t hash) {
#ifdef LOCKSTEP_CHECK_PRECONDITIONS
    LOCKSTEP_ASSERT_MSG(hash == path_hash(path),
                        "HashedPath::with_hash: the hash is not " + std::string(path) + "'s");
#endif
    return HashedPath(path, hash, Taken{});
  }
  std::string_view path() const { return path_; }
  uint64_t hash() const { return hash_; }

 private:
  struct Taken {};
  HashedPath(std::string_view path, uint64_t hash, Taken) : path_(path), hash_(hash) {}
  std::string_view path_;
  uint64_t hash_;
};

template <class V>
class PathMap {
  struct Entry;

 public:
  // What iteration yields: the key and the value, by reference.
  template <class Value>
  struct Item {
    std::string_view first;
    Value& second;
  };
  template <class Value>
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Item<Value>;
    using difference_type = std::ptrdiff_t;

    Iterator() = default;
    Item<Value> operator*() const { return {key(e()), value(e())}; }
    Iterator& operator++() {
      ++i_;
      skip();
      return *this;
    }
    friend bool operator==(const Iterator& a, const Iterator& b) { return a.i_ == b.i_; }

   private:
    friend class PathMap;
    Iterator(const PathMap* m, size_t i) : m_(m), i_(i) { skip(); }
    Entry* e() const { return m_->slots_[i_].entry; }
    void skip() {
      while (i_ < m_->slots_.size() && m_->slots_[i_].entry == nullptr) ++i_;
    }
    const PathMap* m_ = nullptr;
    size_t i_ = 0;
  };
  using iterator = Iterator<V>;
  using const_iterator = Iterator<const V>;

  PathMap() = default;
  PathMap(const PathMap&) = delete;
  PathMap& operator=(const PathMap&) = delete;
  ~PathMap() { clear(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  iterator begin() { return iterator(this, 0); }
  iterator end() { return iterator(this, slots_.size()); }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, slots_.size()); }

  V* find(std::string_view k) { return find_in(k, path_hash(k)); }
  const V* find(std::string_view k) const {
    return const_cast<PathMap*>(this)->find_in(k, path_hash(k));
  }
  V* find(const HashedPath& k) { return find_in(k.path(), k.hash()); }
  // REQUIRES: `k` is not in the map.
  V& insert(std::string_view k, V v) { return place(k, path_hash(k), std::move(v)); }
  V& insert(const HashedPath& k, V v) { return place(k.path(), k.hash(), std::move(v)); }
  // The value of `k`, made (value-initialized) if it is not in the map.
  V& operator[](std::string_view k) {
    const uint64_t h = path_hash(k);
    if (V* v = find_in(k, h)) return *v;
    return place(k, h, V{});
  }
  // Returns whether `k` was there. `k` may view the entry's own key. Invalidates iterators (the
  // slots after it may move back); values of other entries stay where they are.
  bool erase(std::string_view k) {
    const size_t i = slot_of(k, path_hash(k));
    if (i == slots_.size()) return false;
    erase_slot(i);
    return true;
  }
  // The value of `k`, moved out, and its entry erased (as erase); nothing if `k` is not there.
  // One lookup where a find and then an erase would make two.
  std::optional<V> extract(std::string_view k) { return extract(HashedPath(k)); }
  std::optional<V> extract(const HashedPath& k) {
    const size_t i = slot_of(k.path(), k.hash());
    if (i == slots_.size()) return std::nullopt;
    std::optional<V> out(std::move(value(slots_[i].entry)));
    erase_slot(i);
    return out;
  }
  void clear() {
    for (Slot& s : slots_) {
      if (s.entry != nullptr) destroy(s.entry);
    }
    slots_.clear();
    size_ = 0;
    shift_ = 64;
  }

 private:
  // An entry's memory: this header, the key's characters, padding to V's alignment, the value.
  struct Entry {
    uint32_t key_size;
  };
  struct Slot {
    uint64_t hash = 0;
    Entry* entry = nullptr;  // null: empty
  };
  static size_t value_offset(size_t key_size) {
    const size_t end = sizeof(Entry) + key_size;
    return (end + alignof(V) - 1) / alignof(V) * alignof(V);
  }
  static size_t entry_bytes(size_t key_size) { return value_offset(key_size) + sizeof(V); }
  // Plain operator new (the small-object allocator's, zk/small_alloc.cc) aligns to 16.
  static_assert(alignof(V) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
  static std::string_view key(const Entry* e) {
    return {reinterpret_cast<const char*>(e) + sizeof(Entry), e->key_size};
  }
  static V& value(Entry* e) {
    return *std::launder(
        reinterpret_cast<V*>(reinterpret_cast<char*>(e) + value_offset(e->key_size)));
  }
  static Entry* make(std::string_view k, V&& v) {
    void* p = ::operator new(entry_bytes(k.size()));
    Entry* e = new (p) Entry{static_cast<uint32_t>(k.size())};
    std::memcpy(reinterpret_cast<char*>(e) + sizeof(Entry), k.data(), k.size());
    new (reinterpret_cast<char*>(e) + value_offset(k.size())) V(std::move(v));
    return e;
  }
  static void destroy(Entry* e) {
    const size_t bytes = entry_bytes(e->key_size);
    value(e).~V();
    e->~Entry();
    ::operator delete(e, bytes);
  }

  size_t mask() const { return slots_.size() - 1; }
  size_t home(uint64_t h) const { return static_cast<size_t>(h >> shift_); }

  // The slot holding `k`, or slots_.size() when it is not in the map.
  size_t slot_of(std::string_view k, uint64_t h) const {
    if (slots_.empty()) return 0;
    for (size_t i = home(h);; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.entry == nullptr) return slots_.size();
      if (s.hash == h && key(s.entry) == k) return i;
    }
  }
  V* find_in(std::string_view k, uint64_t h) {
    const size_t i = slot_of(k, h);
    return i == slots_.size() ? nullptr : &value(slots_[i].entry);
  }
  // REQUIRES: `k` is not in the map (checked on the probe that finds its slot).
  V& place(std::string_view k, uint64_t h, V&& v) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    size_t i = home(h);
    for (; slots_[i].entry != nullptr; i = (i + 1) & mask()) {
      LOCKSTEP_ASSERT_MSG(slots_[i].hash != h || key(slots_[i].entry) != k,
                          "PathMap: " + std::string(k) + " is already in the map");
    }
    Entry* e = make(k, std::move(v));
    slots_[i] = Slot{h, e};
    ++size_;
    return value(e);
  }
  void grow() {
    grow_slots(
        slots_, 8, &shift_, [](const Slot& s) { return s.entry == nullptr; },
        [this](const Slot& s) { return home(s.hash); });
  }
  void erase_slot(size_t i) {
    destroy(slots_[i].entry);
    --size_;
    erase_and_shift(
        slots_, i, [](const Slot& s) { return s.entry == nullptr; },
        [this](const Slot& s) { return home(s.hash); });
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  unsigned shift_ = 64;  // 64 - log2(capacity): a hash's top bits are its home
};

}  // namespace lockstep::sim
