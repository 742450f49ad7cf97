#include "recipes/lock_base.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

namespace lockstep::recipes {

using zk::Error;

const char* to_string(LockState s) {
  switch (s) {
    case LockState::kIdle: return "idle";
    case LockState::kAcquiring: return "acquiring";
    case LockState::kHeld: return "held";
    case LockState::kSuspended: return "suspended";
    case LockState::kLost: return "lost";
  }
  return "?";
}

LockBase::LockBase(zk::Session& session, LockOptions options, std::string recipe_name)
    : session_(session), options_(std::move(options)), recipe_name_(std::move(recipe_name)) {}

LockBase::~LockBase() {
  for (auto& [k, h] : holders_) stop_monitor(h, Error::kNothing);
}

void LockBase::announce_leadership() { announces_ = true; }

void LockBase::announce(RecipeEvent e) { announce_to(holder(last_task_), e); }

void LockBase::announce_to(Holder& h, RecipeEvent e) {
  if (!announces_) return;
  if (!h.gw->report) h.gw->report = options_.report;
  h.gw->announce(e);
}

std::string LockBase::node_data() const { return options_.client_name; }

std::string LockBase::attempt_tag(std::string_view then) {
  const uint64_t r = session_.context().random_below(uint64_t{1} << 32);
  // Every attempt makes one, so it is written by hand into one allocation: the counter in
  // decimal, then r as eight lower-case hex digits.
  static constexpr char kHex[] = "0123456789abcdef";
  char random[8];
  for (int i = 7, shift = 0; i >= 0; --i, shift += 4) random[i] = kHex[(r >> shift) & 0xf];
  char counter[20];
  size_t digits = 0;
  for (uint64_t v = ++attempt_counter_; v != 0 || digits == 0; v /= 10) {
    counter[sizeof counter - 1 - digits++] = static_cast<char>('0' + v % 10);
  }
  const std::string_view client =
      options_.client_name.empty() ? std::string_view("anon") : options_.client_name;
  const std::string_view parts[] = {"_c_", client, "-", {counter + sizeof counter - digits, digits},
                                    "x", {random, sizeof random}, "-", then};
  size_t size = 0;
  for (std::string_view p : parts) size += p.size();
  std::string out(size, '\0');
  char* at = out.data();
  for (std::string_view p : parts) at = std::copy(p.begin(), p.end(), at);
  return out;
}

bool LockBase::session_dead() const {
  const zk::SessionState s = session_.state();
  return s == zk::SessionState::kExpired || s == zk::SessionState::kClosed;
}

const LockBase::Holder* LockBase::find(uint32_t task) const {
  auto it = holders_.find(key(task));
  return it == holders_.end() ? nullptr : &it->second;
}

void LockBase::forget_if_idle(uint32_t task) {
  auto it = holders_.find(key(task));
  if (it == holders_.end() || it->second.phase != Phase::kIdle) return;
  stop_monitor(it->second, Error::kNothing);
  holders_.erase(it);
}

bool LockBase::trying(uint32_t task) const {
  const Holder* h = find(task);
  return h != nullptr && h->trying;
}

const std::string& LockBase::held_node() const {
  static const std::string kNone;
  const Holder* h = find(last_task_);
  return h == nullptr ? kNone : h->held.path;
}

// ---- acquire / release ------------------------------------------------------------------------

zk::Task<zk::Result<Grant>> LockBase::acquire(zk::Time deadline) {
  using R = zk::Result<Grant>;
  const uint32_t task = co_await zk::this_task();
  last_task_ = task;
  Holder* h = &holder(task);
  if (h->phase == Phase::kHeld) {
    // Re-entrant: the holder (the Lock, or this task) already holds. A lost grant is not extended.
    if (state_of(*h) == LockState::kLost) co_return R::failure(Error::kSessionExpired);
    ++h->hold_count;
    co_return R{Error::kOk, Grant{h->held.czxid.value, h->held.path, h->hold_count}};
  }
  // One operation at a time per holder (see lock.h); a second concurrent acquire is misuse.
  if (h->phase != Phase::kIdle) co_return R::failure(Error::kApiError);
  h->phase = Phase::kAcquiring;
  ++stats_.attempts;
  zk::Result<Held> r = co_await attempt(deadline);
  h = &holder(task);  // other tasks may have added holders meanwhile (std::map: still valid)
  // A grant decided from a reply the client read after it learned its session died (it paused
  // between the reply and the code that reads it) is no grant: the node goes with the session,
  // and an election would name a leader that owns no live node (election seed 258703).
  if (r.ok() && session_dead()) r = zk::Result<Held>::failure(Error::kSessionExpired);
  if (!r.ok()) {
    h->phase = Phase::kIdle;
    announce_to(*h, RecipeEvent::kNotLeader);
    if (!h->trying) forget_if_idle(task);
    co_return R::failure(r.error);
  }
  h->held = std::move(r.value);
  h->hold_count = 1;
  h->phase = Phase::kHeld;
  if (!monitor_trusts_stale_check_) announce_to(*h, RecipeEvent::kLeader);  // else the monitor
  start_monitor(*h);
  co_return R{Error::kOk, Grant{h->held.czxid.value, h->held.path, h->hold_count}};
}

zk::Task<zk::Result<Grant>> LockBase::try_acquire() {
  const uint32_t task = co_await zk::this_task();
  holder(task).trying = true;
  zk::Result<Grant> r = co_await acquire(zk::kNever);
  holder(task).trying = false;
  forget_if_idle(task);
  co_return r;
}

zk::Task<zk::Status> LockBase::release() {
  const uint32_t task = co_await zk::this_task();
  last_task_ = task;
  auto it = holders_.find(key(task));
  if (it == holders_.end() || it->second.phase != Phase::kHeld) {
    co_return zk::Status::failure(Error::kNothing);
  }
  Holder& h = it->second;  // std::map: the reference stays valid while other holders come and go
  if (h.hold_count > 1) {
    --h.hold_count;
    co_return zk::Status{};
  }
  h.phase = Phase::kReleasing;
  h.hold_count = 0;
  announce_to(h, RecipeEvent::kNotLeader);
  stop_monitor(h, Error::kNothing);
  zk::Status dropped = co_await drop(h.held);
  h.held = Held{};
  h.phase = Phase::kIdle;
  forget_if_idle(task);
  if (release_reports_missing_node_ && dropped.error == Error::kNoNode) co_return dropped;
  co_return zk::Status{};
}

zk::Task<zk::Status> LockBase::drop(Held held) {
  if (release_forgets_node_ || release_reports_missing_node_) {
    // Broken: one delete; if its outcome is unknown, the node is forgotten (and its NoNode is
    // passed on).
    co_return co_await session_.remove(held.path);
  }
  // kOk or kSessionExpired: either way the node is no longer ours.
  co_return co_await remove_own(held.path, held.session);
}

// ---- safety (S7) ------------------------------------------------------------------------------

LockState LockBase::state() const { return state_of(last_task_); }

LockState LockBase::state_of(uint32_t task) const {
  const Holder* h = find(task);
  return h == nullptr ? LockState::kIdle : state_of(*h);
}

LockState LockBase::state_of(const Holder& h) const {
  switch (h.phase) {
    case Phase::kIdle:
    case Phase::kReleasing: return LockState::kIdle;
    case Phase::kAcquiring: return LockState::kAcquiring;
    case Phase::kHeld: break;
  }
  if (ignore_expiry_) return LockState::kHeld;
  if (h.gw->lost) return LockState::kLost;
  if (session_dead() || session_.id() != h.held.session) return LockState::kLost;
  if (session_.state() == zk::SessionState::kConnecting || h.gw->suspended) {
    return LockState::kSuspended;
  }
  return LockState::kHeld;
}

zk::Task<zk::Status> LockBase::lost() { return lost_of(last_task_); }

zk::Task<zk::Status> LockBase::lost_of(uint32_t task) {
  auto it = holders_.find(key(task));
  if (it == holders_.end() || it->second.phase != Phase::kHeld) {
    co_return zk::Status::failure(Error::kNothing);
  }
  const LockState s = state_of(it->second);
  if (s == LockState::kSuspended || s == LockState::kLost) co_return zk::Status{};
  zk::Promise<zk::Status> p;
  it->second.gw->waiters.push_back(p);
  co_return co_await p.future();
}

void LockBase::start_monitor(Holder& h) {
  if (ignore_expiry_) return;
  if (announces_) h.gw->report = options_.report;  // the monitor announces through it too
  h.gw->generation++;
  h.gw->suspended = false;
  h.gw->lost = false;
  // Subscribe now, synchronously with the grant, so no session event can slip in between.
  zk::SessionEvents events = session_.subscribe();
  h.monitor = session_.context().spawn(monitor(h.gw, &session_, std::move(events), h.held.path,
                                               h.held.session, h.gw->generation, &stats_,
                                               monitor_trusts_stale_check_),
                                       "lock-monitor");
}

void LockBase::stop_monitor(Holder& h, Error why) {
  h.gw->generation++;
  if (h.monitor.valid()) h.monitor.cancel();
  h.monitor = zk::TaskHandle();
  h.gw->notify(why);
  h.gw->suspended = false;
  h.gw->lost = false;
}

zk::Task<void> LockBase::monitor(std::shared_ptr<detail::GrantWatch> gw, zk::Session* session,
                                 zk::SessionEvents events, std::string node, zk::SessionId sid,
                                 uint64_t generation, RecipeStats* stats, bool trust_stale) {
  if (trust_stale) {
    // Broken: leadership is announced from this background task after its own check of the
    // node (LeaderLatch's checkLeadership in a background callback). Between the check and the
    // announcement another task of the client may run (a yield point a stall can hold) and
    // resign; the generation is not asked again.
    zk::Result<zk::Stat> e = co_await session->exists(node);
    co_await zk::yield_point("after-check");
    if (e.ok() && e.value.ephemeral_owner == sid) gw->announce(RecipeEvent::kLeader);
  }
  for (int i = 0; i < kMaxRounds; ++i) {
    zk::Result<zk::WatchEvent> ev = co_await events.next();
    // Check the generation before touching anything else: a stale monitor's lock may be gone.
    if (gw->generation != generation) co_return;
    if (!ev.ok()) {
      if (ev.error == Error::kCancelled) co_return;
      continue;
    }
    switch (ev.value.state) {
      case zk::SessionState::kConnecting:
        if (!gw->suspended) {
          gw->suspended = true;
          ++stats->monitor_transitions;
          gw->announce(RecipeEvent::kNotLeader);
          gw->notify(Error::kOk);
        }
        break;
      case zk::SessionState::kConnected: {
        zk::Result<zk::Stat> e = co_await session->exists(node);
        if (gw->generation != generation) co_return;
        if (e.ok() && e.value.ephemeral_owner == sid) {
          if (gw->suspended) ++stats->monitor_transitions;
          gw->suspended = false;
          gw->announce(RecipeEvent::kLeader);
        } else if (e.ok() || e.error == Error::kNoNode || zk::is_session_fatal(e.error)) {
          gw->lost = true;
          ++stats->monitor_transitions;
          gw->announce(RecipeEvent::kNotLeader);
          gw->notify(Error::kOk);
          co_return;
        }
        // Connection lost again while checking: stay suspended; the next kConnected re-checks.
        break;
      }
      case zk::SessionState::kExpired:
      case zk::SessionState::kClosed:
        gw->lost = true;
        ++stats->monitor_transitions;
        gw->announce(RecipeEvent::kNotLeader);
        gw->notify(Error::kOk);
        co_return;
    }
  }
}

// ---- helpers -----------------------------------------------------------------------------------

zk::Task<zk::Status> LockBase::wait_connected(zk::Time deadline) {
  // Subscribe before looking at the state, so a reconnect between the two is not missed.
  zk::SessionEvents events = session_.subscribe();
  for (int i = 0; i < kMaxRetries; ++i) {
    if (session_dead()) co_return zk::Status::failure(Error::kSessionExpired);
    if (session_.state() == zk::SessionState::kConnected) co_return zk::Status{};
    zk::Result<zk::WatchEvent> ev = co_await events.next(deadline);
    if (!ev.ok()) co_return zk::Status::failure(ev.error);  // timeout or cancelled
  }
  co_return zk::Status::failure(Error::kConnectionLoss);
}

zk::Task<zk::Status> LockBase::ensure_dir(zk::Time deadline, zk::CreateMode mode) {
  const std::string path = options_.path;
  for (int i = 0; i < kMaxRetries; ++i) {
    zk::Result<zk::Stat> e = co_await session_.exists(path).until(deadline);
    if (e.ok()) co_return zk::Status{};
    if (e.error != Error::kNoNode) {
      if (e.error != Error::kConnectionLoss) co_return zk::Status::failure(e.error);
      zk::Status w = co_await wait_connected(deadline);
      if (!w.ok()) co_return w;
      continue;
    }
    // Create each missing component, parents first. kNodeExists is success (a racing client).
    size_t pos = 0;
    while (pos != std::string::npos) {
      pos = path.find('/', pos + 1);
      const std::string prefix = path.substr(0, pos);
      const zk::CreateMode m = pos == std::string::npos ? mode : zk::CreateMode::kPersistent;
      zk::Result<zk::Created> c = co_await session_.create(prefix, "", m).until(deadline);
      if (c.ok() || c.error == Error::kNodeExists) continue;
      // kNoNode: a parent made (or seen) a moment ago was deleted since (an operator's delete
      // of the tree, a reaped container): start over.
      if (c.error == Error::kNoNode) break;
      if (c.error != Error::kConnectionLoss) co_return zk::Status::failure(c.error);
      zk::Status w = co_await wait_connected(deadline);
      if (!w.ok()) co_return w;
      break;  // start over from the exists check
    }
  }
  co_return zk::Status::failure(Error::kConnectionLoss);
}

zk::Task<zk::Result<zk::Stat>> LockBase::exists_synced(std::string path, zk::Time deadline) {
  if (!recheck_without_sync_) {
    zk::Status s = co_await read_barrier(deadline);
    if (!s.ok()) co_return zk::Result<zk::Stat>::failure(s.error);
  }
  co_return co_await session_.exists(path).until(deadline);
}

zk::Task<zk::Status> LockBase::read_barrier(zk::Time deadline) {
  if (barrier_by_sync_) {
    // Broken: a sync, which the leader answers without applying what it has committed.
    zk::Status s = co_await session_.sync(dir()).until(deadline);
    if (!s.ok() && s.error != Error::kNoNode) co_return s;
    co_return zk::Status{};
  }
  zk::Result<zk::Created> c =
      co_await session_.create(dir(), "", zk::CreateMode::kPersistent).until(deadline);
  if (c.ok() || c.error == Error::kNodeExists || c.error == Error::kNoNode) co_return zk::Status{};
  co_return zk::Status::failure(c.error);
}

zk::Task<zk::Result<zk::Stat>> LockBase::check_own(std::string path, zk::Time deadline) {
  zk::Result<zk::Stat> e = co_await exists_synced(path, deadline);
  if (e.ok() && e.value.ephemeral_owner != session_.id()) {
    co_return zk::Result<zk::Stat>::failure(Error::kNoNode);
  }
  co_return e;
}

zk::Task<zk::Status> LockBase::remove_own(std::string path, zk::SessionId sid) {
  bool verify = false;  // after an ambiguous delete, check the node is still ours first
  for (int i = 0; i < kMaxRetries; ++i) {
    if (session_dead() || session_.id() != sid)
      co_return zk::Status::failure(Error::kSessionExpired);
    if (verify) {
      // Synced: a lagging server may still show the node our lost delete removed, and deleting
      // "it" again would delete whatever now has that name (for a fixed name: another holder's).
      zk::Result<zk::Stat> e = co_await exists_synced(path, zk::kNever);
      if (e.error == Error::kNoNode) co_return zk::Status{};
      if (e.ok() && e.value.ephemeral_owner != sid) co_return zk::Status{};
      if (!e.ok()) {
        if (zk::is_session_fatal(e.error)) co_return zk::Status::failure(Error::kSessionExpired);
        if (e.error == Error::kConnectionLoss) (void)co_await wait_connected(zk::kNever);
        continue;
      }
    }
    zk::Status r = co_await session_.remove(path);
    if (r.ok() || r.error == Error::kNoNode) co_return zk::Status{};
    if (zk::is_session_fatal(r.error)) co_return zk::Status::failure(Error::kSessionExpired);
    if (!zk::is_ambiguous(r.error)) co_return r;  // kBadVersion / kNotEmpty: not ours to fix
    ++stats_.remove_retries;
    verify = true;
    if (r.error == Error::kConnectionLoss) (void)co_await wait_connected(zk::kNever);
  }
  co_return zk::Status::failure(Error::kConnectionLoss);
}

// ---- contenders -------------------------------------------------------------------------------

namespace {

// The sequence after the LAST occurrence of `marker` in `name`, if what follows it is a suffix
// the server could have produced. Such a suffix is 10 or 11 characters long, so instead of
// searching backwards the marker is tried at the two places it can end, and accepted only when
// it does not occur again further right: the same answer as rfind, for any marker.
bool sequence_after_marker(std::string_view name, std::string_view marker, zk::Sequence* seq) {
  for (size_t suffix : {size_t{10}, size_t{11}}) {
    if (name.size() < marker.size() + suffix) continue;
    const size_t pos = name.size() - suffix - marker.size();
    if (name.compare(pos, marker.size(), marker) != 0) continue;
    if (!zk::parse_sequence_suffix(name.substr(pos + marker.size()), seq)) continue;
    if (name.find(marker, pos + 1) != std::string_view::npos) continue;
    return true;
  }
  return false;
}

// The queue order (SortOrder) as a comparison; `reference` is our own sequence.
template <class C>
bool queue_before(const C& a, const C& b, zk::Sequence reference, SortOrder order) {
  auto serial = [reference](const C& c) {
    return static_cast<int32_t>(static_cast<uint32_t>(c.seq.value) -
                                static_cast<uint32_t>(reference.value));
  };
  switch (order) {
    case SortOrder::kSequence: {
      const int32_t ka = serial(a), kb = serial(b);
      return ka != kb ? ka < kb : a.name < b.name;
    }
    case SortOrder::kFullName: return a.name < b.name;
    case SortOrder::kSignedValue:
      return a.seq.value != b.seq.value ? a.seq.value < b.seq.value : a.name < b.name;
  }
  return false;
}

template <class C>
void sort_impl(std::vector<C>* cs, zk::Sequence reference, SortOrder order) {
  std::sort(cs->begin(), cs->end(),
            [&](const C& a, const C& b) { return queue_before(a, b, reference, order); });
}

}  // namespace

namespace detail {

namespace {
// One pass over any range of names (a reply's zk::Names, iterated in place, or a vector).
template <class Range>
void parse_views(const Range& names, const std::vector<std::string>& markers,
                 std::vector<ContenderView>* out) {
  out->clear();
  out->reserve(names.size());
  for (const std::string& n : names) {
    for (size_t m = 0; m < markers.size(); ++m) {
      zk::Sequence seq;
      if (!sequence_after_marker(n, markers[m], &seq)) continue;
      out->push_back(ContenderView{n, seq, m});
      break;
    }
  }
}
}  // namespace

void parse_contender_views(const zk::Names& names, const std::vector<std::string>& markers,
                           std::vector<ContenderView>* out) {
  parse_views(names, markers, out);
}

void parse_contender_views(const std::vector<std::string>& names,
                           const std::vector<std::string>& markers,
                           std::vector<ContenderView>* out) {
  parse_views(names, markers, out);
}

void sort_contender_views(std::vector<ContenderView>* cs, zk::Sequence reference, SortOrder order) {
  sort_impl(cs, reference, order);
}

std::optional<Ahead> Ahead::of(std::vector<ContenderView>* cs, std::string_view mine,
                               zk::Sequence reference, SortOrder order) {
  auto self = std::find_if(cs->begin(), cs->end(),
                           [&](const ContenderView& c) { return c.name == mine; });
  if (self == cs->end()) return std::nullopt;
  const ContenderView me = *self;
  auto end = std::partition(cs->begin(), cs->end(), [&](const ContenderView& c) {
    return queue_before(c, me, reference, order);
  });
  return Ahead(cs, static_cast<size_t>(end - cs->begin()), reference, order);
}

std::optional<Ahead> Ahead::of(const zk::Names& names, const std::vector<std::string>& markers,
                               std::string_view mine, zk::Sequence reference, SortOrder order,
                               std::vector<ContenderView>* scratch) {
  if (order != SortOrder::kSequence || !names.indexed()) {
    parse_contender_views(names, markers, scratch);
    return of(scratch, mine, reference, order);
  }
  // Ours is listed if its name is, under the sequence it parsed to (a name the scan would
  // have found is indexed under its suffix's value).
  if (!names.has_suffixed(reference.value, mine)) return std::nullopt;
  scratch->clear();
  Ahead a(scratch, 0, reference, order);
  a.names_ = &names;
  a.markers_ = &markers;
  a.mine_ = mine;
  return a;
}

template <class Enough>
void Ahead::walk(Enough enough) {
  if (walked_ || (!cs_->empty() && enough(*cs_))) return;
  cs_->clear();
  bool stopped = false;
  names_->walk_before(reference_.value, mine_, [&](std::string_view name, int32_t value) {
    // A contender is found under the value its first matching marker parses to, as the scan
    // finds it; a name indexed under another of its suffixes is not one (there).
    for (size_t m = 0; m < markers_->size(); ++m) {
      zk::Sequence seq;
      if (!sequence_after_marker(name, (*markers_)[m], &seq)) continue;
      if (seq.value != value) return true;
      cs_->push_back(ContenderView{name, seq, m});
      stopped = enough(*cs_);
      return !stopped;
    }
    return true;
  });
  walked_ = !stopped;
}

void Ahead::walk_all() {
  walk([](const std::vector<ContenderView>&) { return false; });
}

size_t Ahead::size() {
  if (names_ == nullptr) return size_;
  walk_all();
  return cs_->size();
}

size_t Ahead::count_up_to(size_t limit) {
  if (names_ == nullptr) return std::min(size_, limit);
  walk([limit](const std::vector<ContenderView>& cs) { return cs.size() >= limit; });
  return std::min(cs_->size(), limit);
}

bool Ahead::before(const ContenderView& a, const ContenderView& b) const {
  return queue_before(a, b, reference_, order_);
}

const ContenderView& Ahead::nearest() {
  if (names_ != nullptr) {
    walk([](const std::vector<ContenderView>& cs) { return !cs.empty(); });
    return cs_->front();
  }
  return *std::max_element(cs_->begin(), cs_->begin() + static_cast<std::ptrdiff_t>(size_),
                           [&](const ContenderView& a, const ContenderView& b) {
                             return before(a, b);
                           });
}

const ContenderView& Ahead::first() {
  if (names_ != nullptr) {
    walk_all();
    return cs_->back();
  }
  return *std::min_element(cs_->begin(), cs_->begin() + static_cast<std::ptrdiff_t>(size_),
                           [&](const ContenderView& a, const ContenderView& b) {
                             return before(a, b);
                           });
}

const ContenderView* Ahead::nearest_with_marker(size_t marker) {
  if (names_ != nullptr) {
    walk([marker](const std::vector<ContenderView>& cs) { return cs.back().marker == marker; });
    for (const ContenderView& c : *cs_) {
      if (c.marker == marker) return &c;
    }
    return nullptr;
  }
  const ContenderView* out = nullptr;
  for (size_t i = 0; i < size_; ++i) {
    const ContenderView& c = (*cs_)[i];
    if (c.marker == marker && (out == nullptr || before(*out, c))) out = &c;
  }
  return out;
}

const ContenderView& Ahead::at(size_t k) {
  if (names_ != nullptr) {
    walk_all();
    return (*cs_)[cs_->size() - 1 - k];
  }
  const auto begin = cs_->begin();
  std::nth_element(begin, begin + static_cast<std::ptrdiff_t>(k),
                   begin + static_cast<std::ptrdiff_t>(size_),
                   [&](const ContenderView& a, const ContenderView& b) { return before(a, b); });
  return (*cs_)[k];
}

}  // namespace detail

namespace {
template <class Range>
std::vector<Contender> parse_owned(const Range& names, const std::vector<std::string>& markers) {
  std::vector<detail::ContenderView> views;
  detail::parse_contender_views(names, markers, &views);
  std::vector<Contender> out;
  out.reserve(views.size());
  for (const detail::ContenderView& v : views) {
    out.push_back(Contender{std::string(v.name), v.seq, v.marker});
  }
  return out;
}
}  // namespace

std::vector<Contender> parse_contenders(const zk::Names& names,
                                        const std::vector<std::string>& markers) {
  return parse_owned(names, markers);
}

std::vector<Contender> parse_contenders(const std::vector<std::string>& names,
                                        const std::vector<std::string>& markers) {
  return parse_owned(names, markers);
}

void sort_contenders(std::vector<Contender>* cs, zk::Sequence reference, SortOrder order) {
  sort_impl(cs, reference, order);
}

}  // namespace lockstep::recipes
