#include "zk/names.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "zk/invariant.h"
#include "zk/types.h"

namespace zk {

namespace {
// The values of the sequence suffixes `name` ends in, as an index key each: the last ten
// characters, and the last eleven (what %010d prints for -2147483648..-1000000000). How many, in
// *out.
size_t suffix_values(std::string_view name, int32_t out[2]) {
  size_t n = 0;
  for (size_t suffix : {size_t{10}, size_t{11}}) {
    Sequence seq;
    if (name.size() >= suffix && parse_sequence_suffix(name.substr(name.size() - suffix), &seq)) {
      out[n++] = seq.value;
    }
  }
  return n;
}
}  // namespace

NameLog::~NameLog() {
  for (std::vector<Slot>& bucket : buckets_) {
    for (Slot& slot : bucket) delete slot.entry;
  }
}

NameLog::Place NameLog::add(uint64_t key, std::string_view name) {
  ++version_;
  auto* e = new Entry{key, std::string(name), version_, kAlive};
  e->suffixes = static_cast<uint8_t>(suffix_values(name, e->suffix));
  if (count_ + 1 > kPerBucket * buckets_.size()) split();
  std::vector<Slot>& bucket = buckets_[bucket_of(key)];
  const auto at = std::partition_point(
      bucket.begin(), bucket.end(), [&](const Slot& s) { return before(s, key, name, e->born); });
  bucket.insert(at, Slot{key, e});
  ++count_;
  ++shape_;
  index(*e);
  ++live_;
  wire_bytes_ += 4 + name.size();
  collect();  // drops only dead entries: `e` is alive
  return Place(e);
}

// Each bucket b becomes 2b and 2b + 1 by the key's next bit: within a bucket the keys are
// sorted, so those with the bit clear come first and each half stays in order.
void NameLog::split() {
  std::vector<std::vector<Slot>> grown(2 * buckets_.size());
  const unsigned shift = 63 - bits_;  // the next bit below the bucket's
  for (size_t b = 0; b < buckets_.size(); ++b) {
    std::vector<Slot>& old = buckets_[b];
    const auto mid = std::partition_point(
        old.begin(), old.end(), [&](const Slot& s) { return ((s.key >> shift) & 1) == 0; });
    grown[2 * b].assign(old.begin(), mid);
    grown[2 * b + 1].assign(mid, old.end());
  }
  buckets_.swap(grown);
  ++bits_;
  ++shape_;
}

std::pair<size_t, size_t> NameLog::locate(const Entry* e) const {
  const size_t b = bucket_of(e->key);
  const std::vector<Slot>& bucket = buckets_[b];
  size_t i = static_cast<size_t>(
      std::partition_point(bucket.begin(), bucket.end(),
                           [&](const Slot& s) { return before(s, e->key, e->name, e->born); }) -
      bucket.begin());
  LOCKSTEP_ASSERT_MSG(i < bucket.size() && bucket[i].entry == e,
                      "NameLog: " + e->name + " is not kept where its order puts it");
  return {b, i};
}

const NameLog::Entry* NameLog::first_from(size_t* b, size_t* i) const {
  for (; *b < buckets_.size(); ++*b, *i = 0) {
    if (*i < buckets_[*b].size()) return buckets_[*b][*i].entry;
  }
  return nullptr;
}

void NameLog::SuffixIndex::insert(const Suffixed& item) {
  ++size_;
  Pos p = lower_bound(item);
  if (p == end()) {
    // After every item: onto the last block, or a new one when it is full (a lock's names
    // come in this way, so the blocks behind stay full).
    if (blocks_.empty() || blocks_.back().size() == kBlock) {
      blocks_.push_back({item});
      lasts_.push_back(item);
      return;
    }
    blocks_.back().push_back(item);
    lasts_.back() = item;
    return;
  }
  std::vector<Suffixed>& block = blocks_[p.b];
  block.insert(block.begin() + static_cast<std::ptrdiff_t>(p.i), item);
  if (block.size() <= kBlock) return;
  // Full: its second half becomes a block of its own.
  std::vector<Suffixed> half(block.begin() + kBlock / 2, block.end());
  block.resize(kBlock / 2);
  lasts_[p.b] = block.back();
  lasts_.insert(lasts_.begin() + static_cast<std::ptrdiff_t>(p.b + 1), half.back());
  blocks_.insert(blocks_.begin() + static_cast<std::ptrdiff_t>(p.b + 1), std::move(half));
}

void NameLog::SuffixIndex::erase(const Suffixed& item) {
  const Pos p = lower_bound(item);
  LOCKSTEP_ASSERT(p != end() && at(p).entry == item.entry);
  std::vector<Suffixed>& block = blocks_[p.b];
  block.erase(block.begin() + static_cast<std::ptrdiff_t>(p.i));
  --size_;
  if (block.empty()) {
    blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(p.b));
    lasts_.erase(lasts_.begin() + static_cast<std::ptrdiff_t>(p.b));
  } else {
    lasts_[p.b] = block.back();
  }
}

void NameLog::index(const Entry& e) {
  for (size_t i = 0; i < e.suffixes; ++i) suffixed_.insert(Suffixed{e.suffix[i], &e});
}

void NameLog::erase(Entry* e) {
  for (size_t i = 0; i < e->suffixes; ++i) suffixed_.erase(Suffixed{e->suffix[i], e});
  const auto [b, i] = locate(e);
  buckets_[b].erase(buckets_[b].begin() + static_cast<std::ptrdiff_t>(i));
  --count_;
  ++shape_;
  delete e;
}

bool NameLog::seen(const Entry& e) const {
  auto p = pins_.lower_bound(e.born);
  return p != pins_.end() && p->first < e.died;
}

void NameLog::remove(uint64_t key, std::string_view name) {
  // The live entry of `name`: the last of its (key, name) run, since births only grow.
  const std::vector<Slot>& bucket = buckets_[bucket_of(key)];
  auto it = std::partition_point(bucket.begin(), bucket.end(),
                                 [&](const Slot& s) { return before(s, key, name, 0); });
  while (it != bucket.end() && it->key == key && it->entry->name == name &&
         it->entry->died != kAlive) {
    ++it;
  }
  LOCKSTEP_ASSERT(it != bucket.end() && it->key == key && it->entry->name == name);
  remove(Place(it->entry), name);
}

void NameLog::remove(Place place, std::string_view name) {
  LOCKSTEP_ASSERT_MSG(place.e_ != nullptr && place.e_->died == kAlive && place.e_->name == name,
                      "NameLog::remove: " + std::string(name) + " is not at that place");
  Entry* e = place.e_;
  ++version_;
  e->died = version_;
  --live_;
  wire_bytes_ -= 4 + name.size();
  if (seen(*e)) {
    dead_.push_back(e);  // an existing listing still shows it
  } else {
    erase(e);
  }
  collect();
}

void NameLog::unpin(uint64_t version) {
  auto it = pins_.find(version);
  LOCKSTEP_ASSERT(it != pins_.end() && it->second > 0);
  if (--it->second == 0) pins_.erase(it);
  collect();
}

// A dead entry no pinned version can see is in no listing that exists or can be made: drop it,
// so walks (Names::walk_before) do not pass it. Listings are short-lived (a recipe reads one and
// lets it go), so the oldest deaths go first as the listings that saw them go; a full pass over
// the kept dead, when they have doubled since the last one, drops those an older listing does
// not see but that died after one it does. O(1) amortized per add, remove or unpin.
void NameLog::collect() {
  while (!dead_.empty() && !seen(*dead_.front())) {
    erase(dead_.front());
    dead_.pop_front();
  }
  if (dead_.size() < collect_at_) return;
  std::deque<Entry*> kept;
  for (Entry* e : dead_) {
    if (seen(*e)) {
      kept.push_back(e);
    } else {
      erase(e);
    }
  }
  dead_.swap(kept);
  collect_at_ = 2 * dead_.size() + 64;
}

Names NameLog::listing() {
  Names out;
  if (auto cached = current_.lock()) {
    auto rep = std::static_pointer_cast<const Names::Rep>(cached);
    if (rep->version == version_) {
      out.rep_ = std::move(rep);
      return out;
    }
  }
  auto rep = std::make_shared<Names::Rep>();
  rep->size = live_;
  rep->wire_bytes = wire_bytes_;
  rep->log = shared_from_this();
  rep->version = version_;
  pin(version_);
  current_ = rep;
  out.rep_ = std::move(rep);
  return out;
}

Names::Rep::~Rep() {
  if (log) log->unpin(version);
}

Names::Names(std::vector<std::string> names) {
  auto rep = std::make_shared<Rep>();
  rep->size = names.size();
  for (const std::string& n : names) rep->wire_bytes += 4 + n.size();
  rep->names = std::move(names);
  rep->listed = true;
  rep_ = std::move(rep);
}

Names::const_iterator::const_iterator(const NameLog* log, uint64_t version, bool at_end)
    : log_(log), shape_(log->shape_), version_(version) {
  if (at_end) return;
  e_ = log_->first_from(&bucket_, &pos_);
  skip();
}

void Names::const_iterator::advance() {
  if (shape_ != log_->shape_) {
    // Names came or went (or a bucket split) since: find e_ again. It is still kept, since it
    // is alive at version_, which this iterator's listing pins.
    std::tie(bucket_, pos_) = log_->locate(e_);
    shape_ = log_->shape_;
  }
  ++pos_;
  e_ = log_->first_from(&bucket_, &pos_);
}

Names::const_iterator Names::begin() const {
  if (!rep_) return const_iterator();
  if (rep_->log) return const_iterator(rep_->log.get(), rep_->version, false);
  return const_iterator(rep_->names.data());
}

Names::const_iterator Names::end() const {
  if (!rep_) return const_iterator();
  if (rep_->log) return const_iterator(rep_->log.get(), rep_->version, true);
  return const_iterator(rep_->names.data() + rep_->names.size());
}

const std::vector<std::string>& Names::vector() const {
  static const std::vector<std::string> kEmpty;
  if (!rep_) return kEmpty;
  if (!rep_->listed) {
    rep_->names.reserve(rep_->size);
    for (const std::string& n : *this) rep_->names.push_back(n);
    rep_->listed = true;
  }
  return rep_->names;
}

bool Names::has_suffixed(int32_t seq, std::string_view name) const {
  if (!indexed()) return false;
  const NameLog::SuffixIndex& idx = rep_->log->suffixed_;
  const uint64_t v = rep_->version;
  for (auto pos = idx.lower_bound(NameLog::Probe{seq, name});
       pos != idx.end() && idx.at(pos).seq == seq && idx.at(pos).entry->name == name;
       idx.next(&pos)) {
    const NameLog::Entry& e = *idx.at(pos).entry;
    if (e.born <= v && v < e.died) return true;
  }
  return false;
}

bool operator==(const Names& a, const Names& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

bool operator==(const Names& a, const std::vector<std::string>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace zk
