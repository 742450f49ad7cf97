// lockstep contract: a directory's child names as a get_children reply carries them.
//
// zk::Names is an immutable list that every holder shares: copying one is O(1). It has two
// sources:
//   - a plain list (the real client's reply, a test's literal): Names(std::vector<std::string>);
//   - a version of a NameLog (the simulator): a server keeps one NameLog per listed directory,
//     and a listing is the log at the version the reply was made at. Making one is O(1) and holds
//     no copy of any name, so ten thousand replies made from ten thousand successive states of a
//     ten-thousand-child directory cost ten thousand small objects, not 10^8 strings.
// Both iterate as a range of std::string in the server's own order (NOT sorted). vector() and
// operator[] make a vector of a log's version the first time they are asked (kept with it);
// code on a hot path iterates instead.
//
// Single-threaded, like the simulator: a NameLog and the Names made from it stay on one thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zk {

class Names;

// Every name a directory had while some listing could still see it: each with the versions it
// lived between, ordered by (key, name), the server's iteration order. The version counts adds
// and removes. A name no version still pinned by a Names can see is dropped, in batches, so the
// log stays within a constant factor of the directory's size plus what old listings still show.
class NameLog : public std::enable_shared_from_this<NameLog> {
 public:
  struct Entry {
    uint64_t key = 0;
    std::string name;
    uint64_t born = 0;          // first version it is in
    mutable uint64_t died = 0;  // first version it is not in (kAlive while it is)
    // The values of the sequence suffixes it ends in (its keys in the suffix index), found once
    // when it is added and read again when it leaves the index.
    int32_t suffix[2] = {0, 0};
    uint8_t suffixes = 0;
  };
  static constexpr uint64_t kAlive = std::numeric_limits<uint64_t>::max();

  class Place;
  // REQUIRES: `name` is not in the directory now (add) / is (remove). A name is also indexed
  // under the value of each sequence suffix it ends in (the last 10 characters, and the last 11
  // as %010d prints -2147483648..-1000000000), for Names::walk_before. add() returns where the
  // name is; remove(place, name) takes it out without searching for it (a search among
  // thousands of children by a random key is a chase of cold tree nodes), and asserts that the
  // place holds `name`. A place is good until its name is removed.
  Place add(uint64_t key, std::string_view name);
  void remove(uint64_t key, std::string_view name);
  void remove(Place place, std::string_view name);
  // The directory as it is now; every call at one version shares one list.
  Names listing();

  size_t size() const { return live_; }
  // Entries kept for old listings (for tests and memory figures).
  size_t kept() const { return count_; }

  NameLog() = default;
  NameLog(const NameLog&) = delete;
  NameLog& operator=(const NameLog&) = delete;
  ~NameLog();

  class Place {
   public:
    Place() = default;

   private:
    friend class NameLog;
    explicit Place(Entry* e) : e_(e) {}
    Entry* e_ = nullptr;
  };

 private:
  friend class Names;
  // The order of the entries, (key, name, born), without a tree: keys are uniform 64-bit
  // hashes, so the entries are kept in 2^bits_ buckets by the key's top bits, each a vector
  // sorted by that order holding the key beside the entry. An add or a remove by place reads
  // the bucket's header and its few slots (a red-black tree of ten thousand names was a chain
  // of a dozen cold nodes by a random key, the largest single cost of a grant among ten
  // thousand clients). A bucket splits in two, in order, when the average passes kPerBucket.
  // Entries are allocated one by one and never move: the suffix index, places and listing
  // iterators point at them.
  struct Slot {
    uint64_t key;
    Entry* entry;
  };
  static constexpr size_t kPerBucket = 8;
  static bool before(const Slot& s, uint64_t key, std::string_view name, uint64_t born) {
    if (s.key != key) return s.key < key;
    if (const int c = s.entry->name.compare(name); c != 0) return c < 0;
    return s.entry->born < born;
  }
  size_t bucket_of(uint64_t key) const { return bits_ == 0 ? 0 : key >> (64 - bits_); }
  // The bucket and position of `e`. REQUIRES: e is kept.
  std::pair<size_t, size_t> locate(const Entry* e) const;
  // The first kept entry at or after position (b, i), and where it is; nullptr at the end.
  const Entry* first_from(size_t* b, size_t* i) const;
  void split();

  // A name under the value of one sequence suffix it ends in.
  struct Suffixed {
    int32_t seq = 0;
    const Entry* entry = nullptr;
  };
  struct Probe {  // the place of (seq, name) before any of its entries
    int32_t seq;
    std::string_view name;
  };
  // The order (seq, name, born). Sequence values first: a name is read only when they tie (in
  // a lock's directory, almost never), since each read is a load from another block (the
  // entry, then the name's characters).
  struct SuffixLess {
    bool operator()(const Suffixed& a, const Suffixed& b) const {
      if (a.seq != b.seq) return a.seq < b.seq;
      const int c = a.entry->name.compare(b.entry->name);
      return c != 0 ? c < 0 : a.entry->born < b.entry->born;
    }
    bool operator()(const Suffixed& a, const Probe& b) const {  // a is before every entry of b
      if (a.seq != b.seq) return a.seq < b.seq;
      return std::string_view(a.entry->name).compare(b.name) < 0;
    }
  };
  // The suffix index: its items in that order, in blocks of at most kBlock, with each block's
  // last item also kept in one array to search. A lock's names are added at the end (their
  // values grow) and leave from the front, so the blocks at both ends stay in the cache and a
  // look-up reads the array and one block; a red-black tree's nodes at the front were each
  // last touched when their name was added, a directory's length of grants before.
  class SuffixIndex {
   public:
    struct Pos {  // an item's place; {block count, 0} is the end
      size_t b = 0;
      size_t i = 0;
      friend bool operator==(const Pos&, const Pos&) = default;
    };
    size_t size() const { return size_; }
    Pos begin() const { return {}; }
    Pos end() const { return {blocks_.size(), 0}; }
    const Suffixed& at(Pos p) const { return blocks_[p.b][p.i]; }
    void next(Pos* p) const {
      if (++p->i == blocks_[p->b].size()) *p = {p->b + 1, 0};
    }
    // REQUIRES: *p is not begin().
    void prev(Pos* p) const {
      if (p->i > 0) {
        --p->i;
      } else {
        --p->b;
        p->i = blocks_[p->b].size() - 1;
      }
    }
    // The first item not before `key` (a Probe: before every entry of its (seq, name); an
    // item: itself).
    template <class Key>
    Pos lower_bound(const Key& key) const {
      const SuffixLess less;
      const auto block = std::partition_point(
          lasts_.begin(), lasts_.end(), [&](const Suffixed& last) { return less(last, key); });
      const size_t b = static_cast<size_t>(block - lasts_.begin());
      if (b == blocks_.size()) return end();
      const std::vector<Suffixed>& items = blocks_[b];
      const auto at = std::partition_point(items.begin(), items.end(),
                                           [&](const Suffixed& item) { return less(item, key); });
      return {b, static_cast<size_t>(at - items.begin())};
    }
    void insert(const Suffixed& item);
    void erase(const Suffixed& item);  // REQUIRES: it is in the index

   private:
    static constexpr size_t kBlock = 64;
    std::vector<std::vector<Suffixed>> blocks_;  // each not empty
    std::vector<Suffixed> lasts_;                // lasts_[b] is blocks_[b].back()
    size_t size_ = 0;
  };
  void index(const Entry& e);
  void erase(Entry* e);  // with its index entries
  // Is `e` in a listing that exists (a pinned version between its birth and its death)?
  bool seen(const Entry& e) const;
  void pin(uint64_t version) { ++pins_[version]; }
  void unpin(uint64_t version);
  void collect();  // drops what no pinned version can see (see the .cc)

  std::vector<std::vector<Slot>> buckets_ = std::vector<std::vector<Slot>>(1);
  unsigned bits_ = 0;
  size_t count_ = 0;  // entries kept
  // Bumped by every add, erase and split: a listing iterator then finds its place again.
  uint64_t shape_ = 0;
  SuffixIndex suffixed_;
  uint64_t version_ = 0;
  size_t live_ = 0;
  size_t wire_bytes_ = 0;  // of the live names: 4-byte length + the name each
  std::deque<Entry*> dead_;  // entries with died != kAlive still kept, oldest death first
  size_t collect_at_ = 64;
  std::map<uint64_t, uint32_t> pins_;  // version -> Names reps alive at it
  std::weak_ptr<const void> current_;  // the rep of listing() at version_, while alive
};

class Names {
 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::string;
    using difference_type = std::ptrdiff_t;
    using pointer = const std::string*;
    using reference = const std::string&;

    const_iterator() = default;
    reference operator*() const { return log_ != nullptr ? e_->name : *p_; }
    pointer operator->() const { return &**this; }
    const_iterator& operator++() {
      if (log_ == nullptr) {
        ++p_;
      } else {
        advance();
        skip();
      }
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++*this;
      return old;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.log_ != nullptr ? a.e_ == b.e_ : a.p_ == b.p_;
    }

   private:
    friend class Names;
    explicit const_iterator(const std::string* p) : p_(p) {}
    // At the log's first entry alive at `version` (begin), or at the end.
    const_iterator(const NameLog* log, uint64_t version, bool at_end);
    void advance();  // on to the next kept entry, finding its place again if the log changed
    void skip() {    // on to the next entry alive at version_
      while (e_ != nullptr && !(e_->born <= version_ && version_ < e_->died)) advance();
    }
    const std::string* p_ = nullptr;
    const NameLog* log_ = nullptr;
    const NameLog::Entry* e_ = nullptr;  // nullptr: the end
    size_t bucket_ = 0;                  // where e_ was when the log's shape was shape_
    size_t pos_ = 0;
    uint64_t shape_ = 0;
    uint64_t version_ = 0;
  };
  using iterator = const_iterator;
  using value_type = std::string;

  Names() = default;
  explicit Names(std::vector<std::string> names);

  size_t size() const { return rep_ ? rep_->size : 0; }
  bool empty() const { return size() == 0; }
  const_iterator begin() const;
  const_iterator end() const;
  const std::string& operator[](size_t i) const { return vector()[i]; }
  // The names as a vector (for code that needs one: a copy to sort, a comparison in a test).
  const std::vector<std::string>& vector() const;
  operator const std::vector<std::string>&() const { return vector(); }  // NOLINT: a view of it
  friend bool operator==(const Names& a, const Names& b);
  friend bool operator==(const Names& a, const std::vector<std::string>& b);
  // The bytes the names take on the wire (4-byte length + the name each): what the server's
  // reply frame holds for them.
  size_t wire_bytes() const { return rep_ ? rep_->wire_bytes : 0; }

  // Does this listing have an index by sequence suffix (one made from a NameLog)? A plain list
  // has none: what walk_before answers, a caller then finds by reading every name.
  bool indexed() const { return rep_ && rep_->log; }
  // With an index: is `name` listed under the suffix value `seq`?
  bool has_suffixed(int32_t seq, std::string_view name) const;
  // With an index: calls visit(name, seq) for each listed name ending in a sequence suffix of
  // value `seq` that is serially before `reference` (seq - reference < 0 as a signed 32-bit
  // difference), or equal to it with a name before `name`: nearest first (descending in that
  // order), until visit returns false or no more are before. A name with two suffixes (10 and
  // 11 characters, zk::parse_sequence_suffix) is visited under each. Costs O(log n + what is
  // visited), plus any names removed since that an older listing still holds. Returns false without an index.
  template <class Visit>
  bool walk_before(int32_t reference, std::string_view name, Visit visit) const;

 private:
  friend class NameLog;
  struct Rep {
    Rep() = default;
    Rep(const Rep&) = delete;
    Rep& operator=(const Rep&) = delete;
    ~Rep();
    size_t size = 0;
    size_t wire_bytes = 0;
    std::shared_ptr<NameLog> log;  // null for a plain list
    uint64_t version = 0;
    mutable std::vector<std::string> names;  // the plain list, or a log's version once asked
    mutable bool listed = false;             // `names` holds them
  };
  std::shared_ptr<const Rep> rep_;
};

template <class Visit>
bool Names::walk_before(int32_t reference, std::string_view name, Visit visit) const {
  if (!indexed()) return false;
  const NameLog::SuffixIndex& idx = rep_->log->suffixed_;
  const uint64_t v = rep_->version;
  auto pos = idx.lower_bound(NameLog::Probe{reference, name});
  // The names before ours make one arc of the circle of 32-bit values, ending just below ours:
  // walk it backwards, wrapping from the smallest value to the largest.
  for (size_t n = 0; n < idx.size(); ++n) {
    if (pos == idx.begin()) pos = idx.end();
    idx.prev(&pos);
    const NameLog::Suffixed& item = idx.at(pos);
    const int32_t serial =
        static_cast<int32_t>(static_cast<uint32_t>(item.seq) - static_cast<uint32_t>(reference));
    if (serial > 0 || (serial == 0 && item.entry->name >= name)) break;
    const NameLog::Entry& e = *item.entry;
    if (e.born <= v && v < e.died && !visit(std::string_view(e.name), item.seq)) break;
  }
  return true;
}

}  // namespace zk
