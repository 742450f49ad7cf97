#include "real/event_loop.h"

#include <algorithm>
#include <cassert>

namespace lockstep::real {

EventLoop::EventLoop() : start_(Clock::now()), owner_(std::this_thread::get_id()) {}

EventLoop::~EventLoop() = default;

zk::Time EventLoop::now() const {
  const auto d = Clock::now() - start_;
  return zk::Time{std::chrono::duration_cast<std::chrono::microseconds>(d).count()};
}

void EventLoop::schedule(std::coroutine_handle<> h) {
  assert(on_owner_thread());
  post([h] { h.resume(); });
}

zk::TimerId EventLoop::start_timer(zk::Time at, zk::TimerCallback* cb) {
  assert(on_owner_thread());
  assert(cb != nullptr);
  const zk::TimerId id = next_timer_++;
  timers_.emplace(std::make_pair(at.us, id), cb);
  timer_at_.emplace(id, at.us);
  return id;
}

void EventLoop::cancel_timer(zk::TimerId id) {
  assert(on_owner_thread());
  auto it = timer_at_.find(id);
  if (it == timer_at_.end()) return;
  timers_.erase(std::make_pair(it->second, id));
  timer_at_.erase(it);
}

void EventLoop::post(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(fn));
  }
  cv_.notify_one();
}

size_t EventLoop::fire_due_timers(const std::function<bool()>& done) {
  size_t fired = 0;
  // Bounded by the number of timers due now: a callback that starts a timer for "now" is
  // picked up on the next round, not in this one.
  const int64_t now_us = now().us;
  while (!timers_.empty() && timers_.begin()->first.first <= now_us) {
    auto it = timers_.begin();
    zk::TimerCallback* cb = it->second;
    timer_at_.erase(it->first.second);
    timers_.erase(it);
    cb->on_timer();
    ++fired;
    if (done && done()) break;
  }
  return fired;
}

bool EventLoop::run_until(const std::function<bool()>& done, int64_t timeout_ms) {
  assert(on_owner_thread());
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!(done && done())) {
    fire_due_timers(done);
    if (done && done()) break;
    std::deque<std::function<void()>> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (queue_.empty()) {
        // Wake at least every few milliseconds: `done` may depend on the outside world.
        auto wake = std::min(deadline, Clock::now() + std::chrono::milliseconds(kRecheckMs));
        if (!timers_.empty()) {
          const auto next = start_ + std::chrono::microseconds(timers_.begin()->first.first);
          if (next < wake) wake = next;
        }
        cv_.wait_until(lock, wake, [this] { return !queue_.empty(); });
      }
      batch.swap(queue_);
    }
    while (!batch.empty()) {
      std::function<void()> fn = std::move(batch.front());
      batch.pop_front();
      fn();
      if (done && done()) {
        // Keep the rest, in order, ahead of anything posted meanwhile.
        std::lock_guard<std::mutex> lock(mu_);
        while (!batch.empty()) {
          queue_.push_front(std::move(batch.back()));
          batch.pop_back();
        }
        return true;
      }
    }
    if (Clock::now() >= deadline) return done && done();
  }
  return true;
}

void EventLoop::run_for(zk::Duration d) {
  const auto until = Clock::now() + std::chrono::microseconds(d.us);
  run_until([&] { return Clock::now() >= until; }, d.ms() + 1);
}

}  // namespace lockstep::real
