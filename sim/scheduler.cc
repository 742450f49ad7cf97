#include "sim/scheduler.h"

#include <algorithm>
#include <cassert>
#include <string>

namespace lockstep::sim {
namespace {

// std heap functions build a max-heap: "later" compares as smaller. A function object, so
// that the heap operations inline it.
struct Later {
  bool operator()(const Event& x, const Event& y) const {
    if (x.at.us != y.at.us) return x.at.us > y.at.us;
    return x.seq > y.seq;
  }
};
constexpr Later later;

}  // namespace

Scheduler::Scheduler(Strategy* strategy, EventLog* log) : strategy_(strategy), log_(log) {}

uint64_t Scheduler::push(Event e) {
  e.seq = ++seq_;
  if (e.at <= now_) {
    // Due now: straight to the candidates. The heap holds nothing due at now_ once the clock
    // got here (next() drains it), so ready_ stays in insertion order.
    e.at = now_;
    ready_.push_back(e);
    return e.seq;
  }
  heap_.push_back(e);
  std::push_heap(heap_.begin(), heap_.end(), later);
  return e.seq;
}

uint32_t Scheduler::choose(ChoiceKind kind, uint32_t n) {
  if (n < 2) return 0;
  const uint32_t chosen = strategy_->choose(kind, n);
  assert(chosen < n);
  decisions_.push_back(Decision{kind, n, chosen});
  const uint64_t packed =
      (static_cast<uint64_t>(kind) << 56) ^ (static_cast<uint64_t>(n) << 24) ^ chosen;
  log_->add_decision(now_, packed, to_string(kind), chosen, n);
  return chosen;
}

void Scheduler::collect_due() {
  while (!heap_.empty() && heap_.front().at == now_) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    ready_.push_back(heap_.back());
    heap_.pop_back();
  }
}

void Scheduler::filter_ready(EventFilter& filter) {
  size_t keep = 0;
  for (size_t i = 0; i < ready_.size(); ++i) {
    const Disposition d = filter.classify(ready_[i]);
    if (d == Disposition::kRun) {
      ready_[keep++] = ready_[i];
    } else if (d == Disposition::kDefer) {
      filter.defer(ready_[i]);
    }
  }
  ready_.resize(keep);
}

bool Scheduler::next(EventFilter& filter, Time limit, Event* out) {
  for (;;) {
    if (ready_.empty()) {
      if (heap_.empty() || heap_.front().at > limit) return false;
      now_ = heap_.front().at;
    }
    collect_due();
    filter_ready(filter);
    if (ready_.empty()) continue;
    const uint32_t i = choose(ChoiceKind::kNextEvent, static_cast<uint32_t>(ready_.size()));
    *out = ready_[i];
    ready_.erase(ready_.begin() + i);
    return true;
  }
}

void Scheduler::advance_to(Time t) {
  assert(t >= now_);
  assert(ready_.empty());
  now_ = t;
}

}  // namespace lockstep::sim
