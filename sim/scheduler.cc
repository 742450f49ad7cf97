#include "sim/scheduler.h"

#include <algorithm>
#include <string>

#include "zk/invariant.h"

namespace lockstep::sim {
namespace {

// The pending events, in one vector, in one of two layouts (Scheduler::queue_sorted_):
//   - up to kSortedMax of them (a run of a few clients has a dozen timers and messages in
//     flight), sorted latest first: the earliest is the last element, a pop takes it off the
//     end, and a push finds its place by binary search and moves the earlier ones along;
//   - past that (a 10,000-client run has tens of thousands of timers pending), a 4-ary min-heap.
//     A node's four children lie side by side (160 bytes), and the heap has half the levels of
//     a binary one: each level below the first few is a cache miss.
// The vector turns into a heap when a push finds it full (sorted earliest first, it is one),
// and back into a sorted vector when a pop leaves kSortedMin. (at, seq) is a strict total
// order (seq is unique), so events leave in the same order from either.
constexpr size_t kArity = 4;
constexpr size_t kSortedMax = 32;
constexpr size_t kSortedMin = 8;

bool before(const Event& x, const Event& y) {
  if (x.at.us != y.at.us) return x.at.us < y.at.us;
  return x.seq < y.seq;
}

void heap_push(std::vector<Event>& h, const Event& e) {
  size_t i = h.size();
  h.push_back(e);
  while (i > 0) {
    const size_t parent = (i - 1) / kArity;
    if (!before(e, h[parent])) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = e;
}

// Removes h.front().
void heap_pop(std::vector<Event>& h) {
  const Event last = h.back();
  h.pop_back();
  const size_t n = h.size();
  if (n == 0) return;
  size_t i = 0;
  for (;;) {
    const size_t first = i * kArity + 1;
    if (first >= n) break;
    const size_t end = std::min(first + kArity, n);
    size_t best = first;
    for (size_t c = first + 1; c < end; ++c) {
      if (before(h[c], h[best])) best = c;
    }
    if (!before(h[best], last)) break;
    h[i] = h[best];
    i = best;
  }
  h[i] = last;
}

// Puts `e` into `v`, sorted latest first, after every later event and before every earlier one.
void sorted_insert(std::vector<Event>& v, const Event& e) {
  const auto at =
      std::partition_point(v.begin(), v.end(), [&](const Event& x) { return before(e, x); });
  v.insert(at, e);
}

// Task identities of the events that do not belong to a client (EventInfo::task).
constexpr uint32_t kApplyTask = 0x10000;  // + the server's id
constexpr uint32_t kExpiryTask = 0x20000;
constexpr uint32_t kFaultTask = 0x30000;
constexpr uint32_t kReapTask = 0x40000;  // the leader's ContainerManager
// Connection ids beyond this are not remembered (their deliveries count as unknown clients).
constexpr uint64_t kMaxTrackedConns = 1u << 20;

bool is_client_event(EventTag t) {
  return t == EventTag::kResume || t == EventTag::kTimer || t == EventTag::kClientTimer ||
         t == EventTag::kToClient;
}

}  // namespace

const char* event_tag_name(uint8_t tag) {
  switch (static_cast<EventTag>(tag)) {
    case EventTag::kResume: return "resume";
    case EventTag::kTimer: return "timer";
    case EventTag::kToServer: return "to-server";
    case EventTag::kToClient: return "to-client";
    case EventTag::kApply: return "apply";
    case EventTag::kExpire: return "expire";
    case EventTag::kClientTimer: return "client-timer";
    case EventTag::kFault: return "fault";
    case EventTag::kFaultEnd: return "fault-end";
    case EventTag::kReap: return "reap";
  }
  return "?";
}

Scheduler::Scheduler(Strategy* strategy, EventLog* log)
    : strategy_(strategy), log_(log), observing_(strategy->observes_events()) {}

uint64_t Scheduler::push(Event e) {
  e.seq = ++seq_;
  if (running_) observe_push(e);
  if (e.at <= now_) {
    // Due now: straight to the candidates. The heap holds nothing due at now_ once the clock
    // got here (next() drains it), so ready_ stays in insertion order.
    e.at = now_;
    if (!has_lone_ && ready_.empty()) {
      lone_ = e;
      has_lone_ = true;
      return e.seq;
    }
    flush_lone();
    ready_.push(e);
    return e.seq;
  }
  queue_push(e);
  return e.seq;
}

void Scheduler::queue_push(const Event& e) {
  if (queue_sorted_) {
    if (pending_.size() < kSortedMax) return sorted_insert(pending_, e);
    std::reverse(pending_.begin(), pending_.end());  // earliest first: a heap already
    queue_sorted_ = false;
  }
  heap_push(pending_, e);
}

void Scheduler::queue_pop() {
  if (queue_sorted_) return pending_.pop_back();
  heap_pop(pending_);
  if (pending_.size() <= kSortedMin) {
    std::sort(pending_.begin(), pending_.end(),
              [](const Event& x, const Event& y) { return before(y, x); });
    queue_sorted_ = true;
  }
}

uint32_t Scheduler::choose(ChoiceKind kind, uint32_t n) {
  if (n < 2) return 0;
  const uint32_t chosen = strategy_->choose(kind, n);
  record(kind, n, chosen);
  if (running_ && (kind == ChoiceKind::kAmbiguousOutcome || kind == ChoiceKind::kPingPhase ||
                   kind == ChoiceKind::kServer)) {
    // Only the server side asks these: a client event that asks reached the ensemble's state.
    current_.footprint |= kTouchesServer;
  }
  return chosen;
}

void Scheduler::record(ChoiceKind kind, uint32_t n, uint32_t chosen) {
  LOCKSTEP_ASSERT(chosen < n);
  if (keep_decisions_) decisions_.push_back(Decision{kind, n, chosen});
  const uint64_t packed =
      (static_cast<uint64_t>(kind) << 56) ^ (static_cast<uint64_t>(n) << 24) ^ chosen;
  log_->add_decision(now_, packed, kind, chosen, n);
}

EventInfo Scheduler::info(const Event& e) const {
  EventInfo i;
  i.seq = e.seq;
  i.at = now_;
  i.client = e.client;
  i.tag = static_cast<uint8_t>(e.type);
  switch (e.type) {
    case EventTag::kResume:
    case EventTag::kTimer:
      i.footprint = kTouchesClient | kRunsUserCode;
      i.task = 2 * e.client;
      break;
    case EventTag::kClientTimer:
      i.footprint = kTouchesClient;
      i.task = 2 * e.client;
      break;
    case EventTag::kToClient:
      i.footprint = kTouchesClient;
      i.task = 2 * e.client;
      i.conn = e.a;
      break;
    case EventTag::kToServer:
      i.footprint = kTouchesServer;
      i.conn = e.a;
      i.client = e.a < conn_client_.size() ? conn_client_[e.a] : 0;
      i.task = 2 * i.client + 1;
      break;
    case EventTag::kApply:
      i.footprint = kTouchesServer;
      i.task = kApplyTask + static_cast<uint32_t>(e.a);
      break;
    case EventTag::kExpire:
      i.footprint = kTouchesServer;
      i.task = kExpiryTask;
      break;
    case EventTag::kFault:
    case EventTag::kFaultEnd:
      i.footprint = kTouchesWorld;
      i.task = kFaultTask;
      break;
    case EventTag::kReap:
      i.footprint = kTouchesServer;
      i.task = kReapTask;
      break;
  }
  return i;
}

// What the running event queued tells what it touched (see the header).
void Scheduler::observe_push(const Event& e) {
  const bool client_event = is_client_event(static_cast<EventTag>(current_.tag));
  const uint64_t conn = e.a;
  switch (e.type) {
    case EventTag::kToServer:
    case EventTag::kToClient: {
      const uint32_t owner = e.type == EventTag::kToClient ? e.client : current_.client;
      const bool known = conn < conn_client_.size() && conn_client_[conn] != 0;
      if (client_event && e.type == EventTag::kToServer && !known) {
        current_.footprint |= kTouchesServer;  // a new connection: ids are shared
      }
      if (client_event && e.type == EventTag::kToClient) current_.footprint |= kTouchesServer;
      if (owner != 0 && conn < kMaxTrackedConns &&
          (client_event || e.type == EventTag::kToClient)) {
        if (conn >= conn_client_.size()) conn_client_.resize(conn + 1, 0);
        if (conn_client_[conn] == 0) conn_client_[conn] = owner;
      }
      break;
    }
    case EventTag::kClientTimer:
      if (client_event) current_.footprint |= kTouchesServer;  // a connection opened or closed
      break;
    case EventTag::kApply:
    case EventTag::kExpire:
    case EventTag::kFault:
    case EventTag::kFaultEnd:
    case EventTag::kReap:
      if (client_event) current_.footprint |= kTouchesServer;
      break;
    case EventTag::kResume:
    case EventTag::kTimer: break;
  }
  if (client_event && e.client != 0 && e.client != current_.client) {
    current_.footprint |= kTouchesServer;  // reached another client: not its own state
  }
}

void Scheduler::finish_running() {
  running_ = false;
  strategy_->executed(current_);
}

uint32_t Scheduler::choose_event() {
  candidates_.clear();
  ready_.for_each([&](const Event& e) { candidates_.push_back(info(e)); });
  const auto n = static_cast<uint32_t>(candidates_.size());
  const uint32_t chosen = strategy_->choose_event(candidates_);
  record(ChoiceKind::kNextEvent, n, chosen);
  return chosen;
}

// Is the earliest pending event the only one due at its time? (Sorted, the second earliest is
// next to it; in the heap, it is one of its children.)
bool Scheduler::alone_at_front() const {
  const size_t n = pending_.size();
  if (queue_sorted_) return n < 2 || pending_[n - 2].at != pending_[n - 1].at;
  const size_t end = std::min(n, kArity + 1);
  for (size_t c = 1; c < end; ++c) {
    if (pending_[c].at == pending_.front().at) return false;
  }
  return true;
}

void Scheduler::collect_due() {
  while (!pending_.empty() && queue_front().at == now_) {
    ready_.push(queue_front());
    queue_pop();
  }
}

void Scheduler::filter_ready(EventFilter& filter) {
  filter.take_changes(&changes_);
  ready_.filter(filter, changes_);
  changes_.clear();
}

void Scheduler::flush_lone() {
  if (!has_lone_) return;
  ready_.push(lone_);
  has_lone_ = false;
}

bool Scheduler::take_alone(EventFilter& filter, const Event& e, Event* out) {
  filter.take_changes(&changes_);  // no other candidate is waiting: nothing to classify again
  changes_.clear();
  const Disposition d = filter.classify(e);
  if (d == Disposition::kDefer) filter.defer(e);
  if (d != Disposition::kRun) return false;
  *out = e;
  if (observing_) {
    current_ = info(*out);
    running_ = true;
  }
  return true;
}

bool Scheduler::next(EventFilter& filter, Time limit, Event* out) {
  if (running_) finish_running();
  if (observing_ && strategy_->stopped()) {
    pending_.clear();
    queue_sorted_ = true;
    ready_.clear();
    has_lone_ = false;
    stopped_by_strategy_ = true;
    return false;
  }
  for (;;) {
    // Most instants have one event (nine in ten of a lock loop's), and most events queued for
    // now are alone too: nothing to choose, and no other candidate whose classification a
    // state change could alter. Such an event is classified as a candidate would be, without
    // passing through the ready queue.
    if (has_lone_) {
      has_lone_ = false;
      if (take_alone(filter, lone_, out)) return true;
      continue;
    }
    if (ready_.empty()) {
      if (pending_.empty() || queue_front().at > limit) return false;
      now_ = queue_front().at;
      if (alone_at_front()) {
        const Event e = queue_front();
        queue_pop();
        if (take_alone(filter, e, out)) return true;
        continue;
      }
    }
    collect_due();
    filter_ready(filter);
    if (ready_.empty()) continue;
    uint32_t i = 0;
    if (!observing_) {
      i = choose(ChoiceKind::kNextEvent, static_cast<uint32_t>(ready_.size()));
    } else if (ready_.size() >= 2) {
      i = choose_event();
    }
    *out = ready_.take(i);
    if (observing_) {
      current_ = info(*out);
      running_ = true;
    }
    return true;
  }
}

void Scheduler::advance_to(Time t) {
  LOCKSTEP_ASSERT(t >= now_);
  LOCKSTEP_ASSERT(ready_.empty() && !has_lone_);
  now_ = t;
}

}  // namespace lockstep::sim
