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

#include <cstddef>
#include <cstdint>
#include <deque>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <set>
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
  size_t kept() const { return entries_.size(); }

 private:
  friend class Names;
  struct Less {
    using is_transparent = void;
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.key != b.key) return a.key < b.key;
      if (int c = a.name.compare(b.name); c != 0) return c < 0;
      return a.born < b.born;
    }
    // (key, name) as a probe: before every entry of that name.
    bool operator()(const Entry& a, const std::pair<uint64_t, std::string_view>& b) const {
      return a.key != b.first ? a.key < b.first : a.name.compare(b.second) < 0;
    }
    bool operator()(const std::pair<uint64_t, std::string_view>& a, const Entry& b) const {
      return a.first != b.key ? a.first < b.key : b.name.compare(a.second) >= 0;
    }
  };
  using Set = std::set<Entry, Less>;

 public:
  class Place {
   public:
    Place() = default;

   private:
    friend class NameLog;
    explicit Place(Set::iterator it) : it_(it), set_(true) {}
    Set::iterator it_;
    bool set_ = false;
  };

 private:
  // A name under the value of one sequence suffix it ends in.
  struct Suffixed {
    int32_t seq = 0;
    const Entry* entry = nullptr;
  };
  struct Probe {  // the place of (seq, name) before any of its entries
    int32_t seq;
    std::string_view name;
  };
  struct SuffixLess {
    using is_transparent = void;
    static int cmp(int32_t sa, std::string_view na, int32_t sb, std::string_view nb) {
      if (sa != sb) return sa < sb ? -1 : 1;
      return na.compare(nb);
    }
    bool operator()(const Suffixed& a, const Suffixed& b) const {
      const int c = cmp(a.seq, a.entry->name, b.seq, b.entry->name);
      return c != 0 ? c < 0 : a.entry->born < b.entry->born;
    }
    bool operator()(const Suffixed& a, const Probe& b) const {
      return cmp(a.seq, a.entry->name, b.seq, b.name) < 0;
    }
    bool operator()(const Probe& a, const Suffixed& b) const {
      return cmp(a.seq, a.name, b.seq, b.entry->name) <= 0;
    }
  };
  using SuffixSet = std::set<Suffixed, SuffixLess>;
  void index(const Entry& e);
  Set::iterator erase(Set::iterator it);  // with its index entries
  // Is `e` in a listing that exists (a pinned version between its birth and its death)?
  bool seen(const Entry& e) const;
  void pin(uint64_t version) { ++pins_[version]; }
  void unpin(uint64_t version);
  void collect();  // drops what no pinned version can see (see the .cc)

  Set entries_;
  SuffixSet suffixed_;
  uint64_t version_ = 0;
  size_t live_ = 0;
  size_t wire_bytes_ = 0;  // of the live names: 4-byte length + the name each
  std::deque<Set::iterator> dead_;  // entries with died != kAlive still kept, oldest death first
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
    reference operator*() const { return log_ != nullptr ? it_->name : *p_; }
    pointer operator->() const { return &**this; }
    const_iterator& operator++() {
      if (log_ == nullptr) {
        ++p_;
      } else {
        ++it_;
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
      return a.log_ != nullptr ? a.it_ == b.it_ : a.p_ == b.p_;
    }

   private:
    friend class Names;
    explicit const_iterator(const std::string* p) : p_(p) {}
    const_iterator(const NameLog* log, NameLog::Set::const_iterator it, uint64_t version)
        : log_(log), it_(it), version_(version) {
      skip();
    }
    void skip() {  // on to the next entry alive at version_
      while (it_ != log_->entries_.end() && !(it_->born <= version_ && version_ < it_->died)) ++it_;
    }
    const std::string* p_ = nullptr;
    const NameLog* log_ = nullptr;
    NameLog::Set::const_iterator it_;
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
  const NameLog::SuffixSet& idx = rep_->log->suffixed_;
  const uint64_t v = rep_->version;
  auto it = idx.lower_bound(NameLog::Probe{reference, name});
  // The names before ours make one arc of the circle of 32-bit values, ending just below ours:
  // walk it backwards, wrapping from the smallest value to the largest.
  for (size_t n = 0; n < idx.size(); ++n) {
    if (it == idx.begin()) it = idx.end();
    --it;
    const int32_t serial =
        static_cast<int32_t>(static_cast<uint32_t>(it->seq) - static_cast<uint32_t>(reference));
    if (serial > 0 || (serial == 0 && it->entry->name >= name)) break;
    const NameLog::Entry& e = *it->entry;
    if (e.born <= v && v < e.died && !visit(std::string_view(e.name), it->seq)) break;
  }
  return true;
}

}  // namespace zk
