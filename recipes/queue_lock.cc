#include "recipes/queue_lock.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>

namespace lockstep::recipes {

using zk::Error;

namespace {

template <class T>
zk::Result<T> fail(Error e) {
  // Every way a session can die is reported to recipe callers as kSessionExpired.
  return zk::Result<T>::failure(zk::is_session_fatal(e) ? Error::kSessionExpired : e);
}

using WatchBox = zk::Mailbox<zk::Result<zk::WatchEvent>>;

// Posts what waiting on `w` gives, unless the wait was cancelled (its waiter has moved on).
zk::Task<void> forward(zk::Watch w, zk::Time deadline, WatchBox box) {
  zk::Result<zk::WatchEvent> r = co_await w.wait(deadline);
  if (r.error != Error::kCancelled) box.post(std::move(r));
}

// Waits on two watches at once (a semaphore waiter's child list and its capacity node, as
// Curator's semaphore wakes on either): each is waited on by a forwarding root task, the first
// answer wins and the other forwarder is cancelled.
zk::Task<zk::Result<zk::WatchEvent>> wait_either(zk::Context& ctx, zk::Watch a, zk::Watch b,
                                                 zk::Time deadline) {
  WatchBox box;
  zk::TaskHandle fa = ctx.spawn(forward(a, deadline, box), "watch-forward");
  zk::TaskHandle fb = ctx.spawn(forward(b, deadline, box), "watch-forward");
  zk::Result<zk::WatchEvent> r = co_await box.next();
  fa.cancel();
  fb.cancel();
  co_return r;
}

// The lease count in a capacity node's data, if it is one (1..2^31-1 in decimal).
std::optional<uint32_t> parse_capacity(const std::string& data) {
  if (data.empty() || data.size() > 10) return std::nullopt;
  uint64_t v = 0;
  for (char ch : data) {
    if (ch < '0' || ch > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(ch - '0');
  }
  if (v == 0 || v > INT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(v);
}

}  // namespace

QueueLock::QueueLock(zk::Session& session, LockOptions options, std::string recipe_name,
                     QueuePolicy policy, QueueFlaws flaws, std::string marker)
    : LockBase(session, std::move(options), std::move(recipe_name)),
      policy_(policy),
      flaws_(flaws),
      marker_(std::move(marker)),
      markers_(markers_of(policy_, marker_)) {
  ignore_expiry_ = flaws_.ignore_expiry;
  release_forgets_node_ = flaws_.release_forgets_node;
  release_reports_missing_node_ = flaws_.release_reports_missing_node;
  per_task_ = true;  // every fact of an attempt lives in attempt()'s frame
  monitor_trusts_stale_check_ = flaws_.monitor_trusts_stale_check;
  barrier_by_sync_ = flaws_.barrier_by_sync;
  if (flaws_.block_event_thread) {
    // A session listener on the event thread: it opens the gate when the client reconnects.
    session.dispatcher().on_session(
        session.subscribe(), [gate = reconnected_](zk::Result<zk::WatchEvent> ev) -> zk::Task<void> {
          if (ev.ok() && ev.value.state == zk::SessionState::kConnected) gate->notify_all();
          co_return;
        });
  }
}

void QueueLock::hand_to_event_thread(const zk::Watch& w, Inbox* inbox) {
  *inbox = Inbox();  // a fresh one: what an older watch still delivers goes nowhere
  const bool block = flaws_.block_event_thread;
  session().dispatcher().on_watch(
      w, [box = *inbox, block, gate = reconnected_](zk::Result<zk::WatchEvent> ev) -> zk::Task<void> {
        if (block && ev.ok() && ev.value.type == zk::EventType::kSession &&
            ev.value.state == zk::SessionState::kConnecting) {
          // Broken: waits on the event thread for the event only this thread can deliver.
          (void)co_await gate->wait();
        }
        box.post(ev);
      });
}

std::string QueueLock::our_marker() const {
  if (policy_ != QueuePolicy::kReadWrite) return marker_;
  return options().role == Role::kRead ? "read-" : "write-";
}

std::vector<std::string> QueueLock::markers_of(QueuePolicy policy, const std::string& marker) {
  if (policy == QueuePolicy::kReadWrite) return {"read-", "write-"};
  return {marker};
}

// ---- one attempt -------------------------------------------------------------------------------

zk::Task<zk::Result<Held>> QueueLock::attempt(zk::Time deadline) {
  // No directory check up front: the create answers kNoNode when the directory is missing,
  // and only then is it created (one request less per acquire).
  const uint32_t me = co_await zk::this_task();  // the caller (shared callers: per task)
  std::optional<Node> mine;
  zk::Watch watch;      // the watch we wait on; reused while still armed
  std::string watched;  // its path ("" for the child list)
  Inbox inbox;          // wait_on_event_thread: the current watch's events, from its callback
  // A semaphore with a capacity node: the count read (after a sync) and the watch on the node,
  // re-read whenever that watch is not armed or has fired.
  const bool counted = policy_ == QueuePolicy::kSemaphore && !options().capacity_path.empty();
  std::optional<uint32_t> capacity;
  zk::Watch count_watch;
  const bool children_policy = (policy_ == QueuePolicy::kNaive) ||
                               (policy_ == QueuePolicy::kSemaphore && !flaws_.watch_lease_ahead);

  const zk::Time started = session().context().now();
  if ((flaws_.dir_created_once && !dir_made_) || flaws_.container_dir) {
    // Broken (both): the directory is ensured up front, and afterwards trusted to exist.
    zk::Status d = co_await ensure_dir(
        deadline, flaws_.container_dir ? zk::CreateMode::kContainer : zk::CreateMode::kPersistent);
    if (!d.ok()) co_return fail<Held>(d.error);
    dir_made_ = true;
  }
  const bool trusts_dir = flaws_.dir_created_once || flaws_.container_dir;
  for (int round = 0; round < kMaxRounds; ++round) {
    if (!mine) {
      std::string prefix = flaws_.no_attempt_id ? our_marker() : attempt_tag(our_marker());
      zk::Result<Node> c = co_await create_contender(std::move(prefix), deadline);
      if (!c.ok()) co_return fail<Held>(c.error);
      mine = std::move(c.value);
    }

    // A semaphore's count, read before the list (so no await falls between the list and the
    // decision): again whenever its watch has fired or is gone. The count read was in force at
    // some moment of this acquire, and the watch hears of every change after it.
    const bool cached = flaws_.cache_capacity && cached_capacity_.has_value();
    if (counted && !cached &&
        (flaws_.cache_capacity || !capacity || !count_watch.armed() || count_watch.fired())) {
      // Broken (cache_capacity): read once, without a watch, and kept for good.
      zk::Result<uint32_t> n =
          co_await read_capacity(deadline, flaws_.cache_capacity ? nullptr : &count_watch);
      if (!n.ok()) {
        if (n.error != Error::kConnectionLoss) co_return co_await give_up(*mine, n.error);
        zk::Status w = co_await wait_connected(deadline);
        if (w.ok()) continue;
        co_return co_await give_up(*mine, w.error);
      }
      capacity = n.value;
      if (flaws_.cache_capacity) cached_capacity_ = n.value;
    }
    if (cached) capacity = cached_capacity_;

    // Step 2: list (arming a child-list watch unless one is still armed).
    const bool reuse_children =
        children_policy && watch.valid() && watched.empty() && watch.armed() && !watch.fired();
    zk::Watch child_watch;
    ++stats_.relists;
    zk::Result<zk::Children> ch =
        co_await session()
            .get_children(dir(), children_policy && !reuse_children ? &child_watch : nullptr)
            .until(deadline);
    if (!ch.ok()) {
      if (ch.error == Error::kNoNode && trusts_dir) co_return fail<Held>(ch.error);  // broken
      if (ch.error == Error::kNoNode) {  // the directory is gone, and our node with it
        ++stats_.restarts;
        mine.reset();
        zk::Status d = co_await ensure_dir(deadline);
        if (!d.ok()) co_return fail<Held>(d.error);
        continue;
      }
      if (ch.error == Error::kConnectionLoss) {
        if (flaws_.throw_on_connection_loss) {
          // Broken: the error escapes as an exception, and the node stays behind.
          throw std::runtime_error("KeeperErrorCode = ConnectionLoss for " + dir());
        }
        zk::Status w = co_await wait_connected(deadline);
        if (w.ok()) continue;
        co_return co_await give_up(*mine, w.error);
      }
      co_return co_await give_up(*mine, ch.error);
    }
    if (children_policy && !reuse_children) {
      watch = child_watch;
      watched.clear();
      ++stats_.watches_armed;
      if (flaws_.wait_on_event_thread) hand_to_event_thread(watch, &inbox);
    }
    // The parsed queue, in one scratch vector for every lock on this thread: it is filled and
    // read with no suspension in between, so no two attempts use it at once, and its capacity
    // (the directory's size) is allocated once, not per listing and per waiter (ten thousand
    // waiters' vectors of ten thousand entries were most of the simulator's memory).
    thread_local std::vector<detail::ContenderView> scratch;
    std::vector<detail::ContenderView>& cs = scratch;  // views into ch: used only here
    std::optional<detail::Ahead> ahead =
        detail::Ahead::of(ch.value.names, markers_, mine->name, mine->seq, flaws_.sort, &cs);
    if (!ahead) {  // our node vanished (deleted by someone): start over
      ++stats_.restarts;
      mine.reset();
      continue;
    }
    const Verdict v = decide(*ahead, capacity.value_or(options().max_leases));
    // The listing is not needed while we wait: let it go (the server's log would otherwise keep
    // every name an old listing can still see).
    cs.clear();
    ch.value.names = {};
    if (v.holds)
      co_return zk::Result<Held>{Error::kOk, Held{mine->path, mine->czxid, mine->session}};

    // Step 3: watch the one blocking node (get_data arms a data watch only if it exists).
    if (!v.watch_children) {
      std::string target = dir() + "/" + v.watch;
      if (flaws_.predecessor_by_arithmetic) {
        // Broken: the predecessor's name computed, not read (its id prefix is not ours).
        target = dir() + "/" + our_marker() +
                 zk::format_sequence(zk::Sequence{static_cast<int32_t>(
                     static_cast<uint32_t>(mine->seq.value) - 1u)});
      }
      const bool reuse = watch.valid() && watched == target && watch.armed() && !watch.fired();
      if (!reuse) {
        zk::Watch w;
        ++stats_.watches_armed;
        Error got = Error::kOk;
        if (flaws_.watch_with_exists) {
          // Broken: exists() on a predecessor already gone arms a creation watch that can never
          // fire (its sequential name is never handed out again): a watch leaked per miss.
          zk::Result<zk::Stat> e = co_await session().exists(target, &w).until(deadline);
          got = e.error;
        } else {
          zk::Result<zk::NodeData> g = co_await session().get_data(target, &w).until(deadline);
          got = g.error;
        }
        if (got == Error::kNoNode) {
          ++stats_.predecessor_gone;
          if (flaws_.restart_when_predecessor_gone) {
            // Broken: start over, to the back of the queue.
            ++stats_.restarts;
            (void)co_await remove_own(mine->path, mine->session);
            mine.reset();
          }
          continue;
        }
        if (got != Error::kOk) {
          if (got == Error::kConnectionLoss) {
            zk::Status cw = co_await wait_connected(deadline);
            if (cw.ok()) continue;
            co_return co_await give_up(*mine, cw.error);
          }
          co_return co_await give_up(*mine, got);
        }
        watch = w;
        watched = target;
        if (flaws_.wait_on_event_thread) hand_to_event_thread(watch, &inbox);
      }
    }

    // A watch armed by a reply that arrived after the session died never hears of the death.
    if (session_dead()) co_return fail<Held>(Error::kSessionExpired);
    const zk::Time patience =
        flaws_.steal_after.us > 0 ? started + flaws_.steal_after : zk::kNever;
    const zk::Time until = std::min(wait_limit(deadline, me), patience);
    zk::Result<zk::WatchEvent> ev;
    if (flaws_.wait_on_event_thread) {
      ev = co_await inbox.next(until);  // what the watch callback passed on
    } else if (counted && !flaws_.cache_capacity && count_watch.armed() && !count_watch.fired()) {
      ev = co_await wait_either(session().context(), watch, count_watch, until);
    } else {
      ev = co_await watch.wait(until);
    }
    if (!ev.ok() && ev.error == Error::kOperationTimeout && patience < deadline &&
        session().context().now() >= patience) {
      // Broken: "the holder must have died" — while its node is still live.
      co_return zk::Result<Held>{Error::kOk, Held{mine->path, mine->czxid, mine->session}};
    }
    if (!ev.ok()) {
      if (ev.error == Error::kNothing) continue;  // the watch was never armed: re-list
      co_return co_await give_up(*mine, ev.error);
    }
    if (ev.value.type == zk::EventType::kSession) {
      ++stats_.session_wakeups;
      const zk::SessionState s = ev.value.state;
      if (s == zk::SessionState::kExpired || s == zk::SessionState::kClosed) {
        co_return fail<Held>(Error::kSessionExpired);  // our node went with the session
      }
      continue;  // disconnected or reconnected: re-list (the armed watch is kept)
    }
    ++stats_.wakeups;
    if (flaws_.announce_on_predecessor_delete && ev.value.type == zk::EventType::kDeleted) {
      announce(RecipeEvent::kLeader);  // Broken: on a hunch, before the re-list
    }
    if (flaws_.deletion_means_grant && !v.watch_children &&
        ev.value.type == zk::EventType::kDeleted) {
      // Broken: no re-list. A predecessor that gave up is not a released lock.
      co_return zk::Result<Held>{Error::kOk, Held{mine->path, mine->czxid, mine->session}};
    }

  }
  if (!mine) co_return fail<Held>(Error::kConnectionLoss);
  co_return co_await give_up(*mine, Error::kConnectionLoss);
}

QueueLock::Verdict QueueLock::decide(detail::Ahead& ahead, uint32_t capacity) const {
  Verdict v;
  const auto watch_node = [&](const detail::ContenderView& c) {
    v.watch = c.name;
    return v;
  };
  switch (policy_) {
    case QueuePolicy::kMutex:
      if (ahead.count_up_to(1) == 0) break;  // first in the queue
      return watch_node(flaws_.watch_first_node ? ahead.first() : ahead.nearest());
    case QueuePolicy::kNaive:
      if (ahead.count_up_to(1) == 0) break;
      v.watch_children = true;
      return v;
    case QueuePolicy::kReadWrite:
      if (options().role == Role::kRead) {
        if (flaws_.reader_ignores_writers) break;
        // The nearest earlier writer.
        if (const detail::ContenderView* w = ahead.nearest_with_marker(1)) return watch_node(*w);
        break;
      }
      if (ahead.count_up_to(1) == 0) break;
      return watch_node(ahead.nearest());  // a writer waits for the nearest earlier node
    case QueuePolicy::kSemaphore: {
      const size_t n = std::max<uint32_t>(capacity, 1);
      if (ahead.count_up_to(n) < n) break;  // one of the first n
      if (flaws_.watch_lease_ahead) return watch_node(ahead.at(ahead.size() - n));
      v.watch_children = true;
      return v;
    }
  }
  v.holds = true;
  return v;
}

zk::Task<zk::Result<Held>> QueueLock::give_up(const Node& node, Error why) {
  const Node mine = node;  // copied before any await (a coroutine keeps only the reference)
  if (zk::is_session_fatal(why)) co_return fail<Held>(why);  // the node went with the session
  if (why == Error::kOperationTimeout && flaws_.leave_node_on_timeout) co_return fail<Held>(why);
  ++stats_.cleanups;
  (void)co_await remove_own(mine.path, mine.session);
  co_return fail<Held>(why);
}

zk::Task<zk::Status> QueueLock::drop(Held held) {
  // Broken: the node to delete is whichever this Lock created last, by any task.
  if (flaws_.one_node_member) held = last_node_;
  co_return co_await LockBase::drop(std::move(held));
}

zk::Task<zk::Result<uint32_t>> QueueLock::read_capacity(zk::Time deadline, zk::Watch* watch) {
  using R = zk::Result<uint32_t>;
  const std::string path = options().capacity_path;
  for (int i = 0; i < kMaxRetries; ++i) {
    // After a barrier: a lagging server would answer with a count already replaced.
    zk::Status s = co_await read_barrier(deadline);
    if (!s.ok()) co_return R::failure(s.error);
    zk::Result<zk::NodeData> d = co_await session().get_data(path, watch).until(deadline);
    if (d.ok()) {
      co_return R{Error::kOk, parse_capacity(d.value.data).value_or(options().max_leases)};
    }
    if (d.error != Error::kNoNode) co_return R::failure(d.error);
    // No count node: max_leases, with a creation watch so that its creation wakes a waiter.
    if (watch == nullptr) co_return R{Error::kOk, options().max_leases};
    zk::Result<zk::Stat> e = co_await session().exists(path, watch).until(deadline);
    if (e.error == Error::kNoNode) co_return R{Error::kOk, options().max_leases};
    if (!e.ok()) co_return R::failure(e.error);
    // Created between the two reads: read it.
  }
  co_return R::failure(Error::kConnectionLoss);
}

// ---- create, resolving ambiguity (S6) ----------------------------------------------------------

zk::Task<zk::Result<QueueLock::Node>> QueueLock::create_contender(std::string prefix,
                                                                  zk::Time deadline) {
  Error abort = Error::kOk;  // once set: make sure no node of ours is left, then report it
  bool unsure = false;       // a create may have been applied without our knowing
  for (int i = 0; i < kMaxRetries; ++i) {
    if (unsure) {
      zk::Result<Node> f = co_await find_own(prefix);  // no deadline: we must know
      if (f.ok()) {
        if (abort != Error::kOk) {
          ++stats_.cleanups;
          (void)co_await remove_own(f.value.path, f.value.session);
          co_return fail<Node>(abort);
        }
        ++stats_.adopted;
        last_node_ = Held{f.value.path, f.value.czxid, f.value.session};
        co_return f;
      }
      if (zk::is_session_fatal(f.error)) co_return fail<Node>(f.error);
      if (f.error == Error::kNoNode) {
        unsure = false;
        if (abort != Error::kOk) co_return fail<Node>(abort);
      } else {
        if (f.error == Error::kCancelled && abort == Error::kOk) abort = Error::kCancelled;
        if (f.error == Error::kConnectionLoss) (void)co_await wait_connected(zk::kNever);
        continue;
      }
    }
    if (session().context().now() >= deadline) co_return fail<Node>(Error::kOperationTimeout);
    ++stats_.creates;
    // Broken (ttl_nodes): a TTL node instead of an ephemeral one. (The mode and TTL are chosen
    // before the call: GCC 12 destroys a conditional's temporary twice inside co_await.)
    const bool ttl = flaws_.ttl_nodes.us > 0;
    zk::Result<zk::Created> r =
        co_await session()
            .create(dir() + "/" + prefix, node_data(),
                    ttl ? zk::CreateMode::kPersistentSequentialWithTtl
                        : zk::CreateMode::kEphemeralSequential,
                    ttl ? flaws_.ttl_nodes : zk::Duration{})
            .until(deadline);
    if (r.ok()) {
      Node n;
      n.path = r.value.path;
      n.name = n.path.substr(dir().size() + 1);
      n.czxid = r.value.stat.czxid;
      n.session = session().id();
      const bool parsed = zk::parse_sequence_suffix(
          std::string_view(n.name).substr(std::min(prefix.size(), n.name.size())), &n.seq);
      if (!parsed) co_return fail<Node>(Error::kMarshallingError);  // not a sequential reply
      last_node_ = Held{n.path, n.czxid, n.session};
      co_return zk::Result<Node>{Error::kOk, std::move(n)};
    }
    if (r.error == Error::kNoNode && (flaws_.dir_created_once || flaws_.container_dir)) {
      co_return fail<Node>(r.error);  // broken: "the directory was made; NoNode cannot happen"
    }
    if (r.error == Error::kNoNode) {  // the directory vanished
      zk::Status d = co_await ensure_dir(deadline);
      if (!d.ok()) co_return fail<Node>(d.error);
      continue;
    }
    if (zk::is_session_fatal(r.error)) co_return fail<Node>(r.error);
    if (!zk::is_ambiguous(r.error)) co_return fail<Node>(r.error);
    ++stats_.ambiguous_creates;
    if (flaws_.no_attempt_id) {
      // Broken: nothing identifies our node, so the create is simply sent again.
      if (r.error != Error::kConnectionLoss) co_return fail<Node>(r.error);
      zk::Status w = co_await wait_connected(deadline);
      if (!w.ok()) co_return fail<Node>(w.error);
      continue;
    }
    unsure = true;
    if (r.error != Error::kConnectionLoss) {
      abort = r.error;
      continue;
    }
    zk::Status w = co_await wait_connected(deadline);
    if (zk::is_session_fatal(w.error)) co_return fail<Node>(w.error);
    if (!w.ok()) abort = w.error;
  }
  co_return fail<Node>(Error::kConnectionLoss);
}

zk::Task<zk::Result<QueueLock::Node>> QueueLock::find_own(std::string prefix) {
  // A barrier first: after a reconnect our server may lag the write our lost create made (a
  // sync is not enough on the leader: read_barrier()).
  zk::Status s = co_await read_barrier(zk::kNever);
  if (!s.ok()) co_return zk::Result<Node>::failure(s.error);
  zk::Result<zk::Children> ch = co_await session().get_children(dir());
  if (!ch.ok()) co_return zk::Result<Node>::failure(ch.error);
  std::vector<std::string> names = ch.value.names.vector();
  std::sort(names.begin(), names.end());  // deterministic probing order
  for (const std::string& name : names) {
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    zk::Sequence seq;
    if (!zk::parse_sequence_suffix(std::string_view(name).substr(prefix.size()), &seq)) continue;
    const std::string path = dir() + "/" + name;
    zk::Result<zk::Stat> e = co_await session().exists(path);
    if (e.error == Error::kNoNode) continue;
    if (!e.ok()) co_return zk::Result<Node>::failure(e.error);
    // Adopt only a node of the current session: one left by an older session dies with it.
    if (e.value.ephemeral_owner != session().id()) continue;
    co_return zk::Result<Node>{Error::kOk, Node{path, name, seq, e.value.czxid, session().id()}};
  }
  co_return zk::Result<Node>::failure(Error::kNoNode);
}

// ---- election ---------------------------------------------------------------------------------

ElectionCandidate::ElectionCandidate(zk::Session& session, LockOptions options,
                                     std::string recipe_name, QueueFlaws flaws)
    : QueueLock(session, std::move(options), std::move(recipe_name), QueuePolicy::kMutex, flaws,
                "candidate-") {
  announce_leadership();
}

zk::Task<zk::Result<std::string>> ElectionCandidate::leader() {
  using R = zk::Result<std::string>;
  for (int i = 0; i < kMaxRetries; ++i) {
    zk::Result<zk::Children> ch = co_await session().get_children(dir());
    if (!ch.ok()) co_return R::failure(ch.error);
    std::vector<Contender> cs = parse_contenders(ch.value.names, markers());
    if (cs.empty()) co_return R::failure(Error::kNoNode);
    sort_contenders(&cs, cs.front().seq, SortOrder::kSequence);
    zk::Result<zk::NodeData> d = co_await session().get_data(dir() + "/" + cs.front().name);
    if (d.ok()) co_return R{Error::kOk, d.value.data};
    if (d.error != Error::kNoNode) co_return R::failure(d.error);
    // The leader resigned between the two reads: look again.
  }
  co_return R::failure(Error::kConnectionLoss);
}

// ---- gated semaphore ---------------------------------------------------------------------------

LockOptions GatedSemaphore::under(LockOptions o, const std::string& leaf) {
  o.path += "/" + leaf;
  return o;
}

GatedSemaphore::GatedSemaphore(zk::Session& session, LockOptions options, std::string recipe_name)
    : LockBase(session, options, recipe_name),
      gate_(session, under(options, "locks"), recipe_name + "/gate", QueuePolicy::kMutex),
      leases_(session, under(options, "leases"), recipe_name + "/leases", QueuePolicy::kSemaphore,
              {}, "lease-") {
  per_task_ = true;  // the gate and the leases keep theirs per task too
}

zk::Task<zk::Result<Held>> GatedSemaphore::attempt(zk::Time deadline) {
  const uint32_t me = co_await zk::this_task();  // the caller (shared callers: per task)
  // A try takes the gate and the lease only if neither must be waited for.
  // (Each Task is named before it is awaited: GCC 12 destroys a conditional's temporary twice
  // inside co_await.)
  zk::Task<zk::Result<Grant>> gating = trying(me) ? gate_.try_acquire() : gate_.acquire(deadline);
  zk::Result<Grant> g = co_await std::move(gating);
  if (!g.ok()) co_return zk::Result<Held>::failure(g.error);
  zk::Task<zk::Result<Grant>> leasing =
      trying(me) ? leases_.try_acquire() : leases_.acquire(deadline);
  zk::Result<Grant> lease = co_await std::move(leasing);
  // Whatever the lease's outcome, the gate goes to the next contender.
  (void)co_await gate_.release();
  if (!lease.ok()) co_return zk::Result<Held>::failure(lease.error);
  // The gate's release retries through disconnects until its delete is done or the session is
  // gone, so the lease may have died with the session meanwhile: never grant a lost lease.
  if (leases_.state_of(me) == LockState::kLost) {
    (void)co_await leases_.release();
    co_return zk::Result<Held>::failure(Error::kSessionExpired);
  }
  co_return zk::Result<Held>{
      Error::kOk, Held{lease.value.node, zk::Zxid{lease.value.fencing_token}, session().id()}};
}

zk::Task<zk::Status> GatedSemaphore::drop(Held) { co_return co_await leases_.release(); }

RecipeStats GatedSemaphore::stats() const {
  RecipeStats t = LockBase::stats();
  for (const RecipeStats& s : {gate_.stats(), leases_.stats()}) {
    t.creates += s.creates;
    t.ambiguous_creates += s.ambiguous_creates;
    t.adopted += s.adopted;
    t.relists += s.relists;
    t.watches_armed += s.watches_armed;
    t.predecessor_gone += s.predecessor_gone;
    t.wakeups += s.wakeups;
    t.session_wakeups += s.session_wakeups;
    t.restarts += s.restarts;
    t.cleanups += s.cleanups;
    t.remove_retries += s.remove_retries;
  }
  return t;
}

}  // namespace lockstep::recipes
