#include "zk/names.h"

#include <algorithm>
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

NameLog::Place NameLog::add(uint64_t key, std::string_view name) {
  ++version_;
  Entry e{key, std::string(name), version_, kAlive};
  e.suffixes = static_cast<uint8_t>(suffix_values(name, e.suffix));
  auto [it, inserted] = entries_.insert(std::move(e));
  LOCKSTEP_ASSERT(inserted);
  index(*it);
  ++live_;
  wire_bytes_ += 4 + name.size();
  collect();  // drops only dead entries: `it` is alive
  return Place(it);
}

void NameLog::index(const Entry& e) {
  for (size_t i = 0; i < e.suffixes; ++i) suffixed_.insert(Suffixed{e.suffix[i], &e});
}

NameLog::Set::iterator NameLog::erase(Set::iterator it) {
  for (size_t i = 0; i < it->suffixes; ++i) {
    // One search (an erase by key searches for both ends of the key's range).
    const auto s = suffixed_.find(Suffixed{it->suffix[i], &*it});
    LOCKSTEP_ASSERT(s != suffixed_.end());
    suffixed_.erase(s);
  }
  return entries_.erase(it);
}

bool NameLog::seen(const Entry& e) const {
  auto p = pins_.lower_bound(e.born);
  return p != pins_.end() && p->first < e.died;
}

void NameLog::remove(uint64_t key, std::string_view name) {
  // The live entry of `name`: the last of its (key, name) run, since births only grow.
  auto it = entries_.lower_bound(std::pair<uint64_t, std::string_view>{key, name});
  while (it != entries_.end() && it->key == key && it->name == name && it->died != kAlive) ++it;
  LOCKSTEP_ASSERT(it != entries_.end() && it->key == key && it->name == name);
  remove(Place(it), name);
}

void NameLog::remove(Place place, std::string_view name) {
  LOCKSTEP_ASSERT_MSG(place.set_ && place.it_->died == kAlive && place.it_->name == name,
                      "NameLog::remove: " + std::string(name) + " is not at that place");
  const Set::iterator it = place.it_;
  ++version_;
  it->died = version_;
  --live_;
  wire_bytes_ -= 4 + name.size();
  if (seen(*it)) {
    dead_.push_back(it);  // an existing listing still shows it
  } else {
    erase(it);
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
  std::deque<Set::iterator> kept;
  for (Set::iterator it : dead_) {
    if (seen(*it)) {
      kept.push_back(it);
    } else {
      erase(it);
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

Names::const_iterator Names::begin() const {
  if (!rep_) return const_iterator();
  if (rep_->log) return const_iterator(rep_->log.get(), rep_->log->entries_.begin(), rep_->version);
  return const_iterator(rep_->names.data());
}

Names::const_iterator Names::end() const {
  if (!rep_) return const_iterator();
  if (rep_->log) return const_iterator(rep_->log.get(), rep_->log->entries_.end(), rep_->version);
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
  const NameLog::SuffixSet& idx = rep_->log->suffixed_;
  const uint64_t v = rep_->version;
  for (auto it = idx.lower_bound(NameLog::Probe{seq, name});
       it != idx.end() && it->seq == seq && it->entry->name == name; ++it) {
    if (it->entry->born <= v && v < it->entry->died) return true;
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
