// The event dispatcher (zk/dispatcher.h).
#include "zk/dispatcher.h"

#include <exception>

namespace zk {

Dispatcher::Dispatcher(Context& ctx, std::string name) : shared_(std::make_shared<Shared>()) {
  ctx.spawn(loop(shared_), std::move(name));
}

// The root task stays with the context (which destroys it with its other roots); closing stops it
// at its next callback and makes every pending sink drop its delivery.
Dispatcher::~Dispatcher() {
  shared_->closed = true;
  shared_->queue.post(Item::failure(Error::kClosing));
}

void Dispatcher::post(std::function<Task<void>()> cb) { shared_->enqueue(std::move(cb)); }

Task<void> Dispatcher::loop(std::shared_ptr<Shared> s) {
  for (uint64_t n = 0;; ++n) {
    Item item = co_await s->queue.next();
    if (s->closed) co_return;
    if (!item.run) {
      if (item.error == Error::kCancelled) co_return;
      continue;
    }
    s->busy = true;
    bool threw = false;
    try {
      Task<void> t = item.run();
      co_await std::move(t);
    } catch (...) {
      threw = true;  // as Java's EventThread: logged, and the next event is delivered
    }
    s->busy = false;
    ++s->ran;
    if (threw) ++s->thrown;
  }
}

void Dispatcher::on_watch(const Watch& w, WatchCallback cb) {
  LOCKSTEP_ASSERT(w.valid());
  forward_watch(w.s_, shared_, std::move(cb));
}

void Dispatcher::forward_watch(std::shared_ptr<detail::WatchState> st, std::weak_ptr<Shared> ws,
                               WatchCallback cb) {
  std::shared_ptr<Shared> s = ws.lock();
  if (!s || s->closed) return;
  // Everything the watch holds now, in order: its session events, then its node event (final).
  while (!st->session_events.empty() && !st->fired) {
    Result<WatchEvent> ev = st->take();
    s->enqueue([cb, ev]() { return cb(ev); });
  }
  if (st->fired || !st->armed || (st->dead && st->session_events.empty())) {
    if (st->fired || !st->armed) {
      Result<WatchEvent> ev = st->take();
      s->enqueue([cb, ev]() { return cb(ev); });
    }
    return;
  }
  st->park_sink([st, ws, cb]() { forward_watch(st, ws, cb); });
}

void Dispatcher::on_session(const SessionEvents& events, WatchCallback cb) {
  forward_session(events, shared_, std::move(cb));
}

void Dispatcher::forward_session(Mailbox<Result<WatchEvent>> events, std::weak_ptr<Shared> ws,
                                 WatchCallback cb) {
  std::shared_ptr<Shared> s = ws.lock();
  if (!s || s->closed) return;
  while (!events.s_->queue.empty()) {
    Result<WatchEvent> ev = events.s_->take();
    s->enqueue([cb, ev]() { return cb(ev); });
  }
  auto st = events.s_;
  st->park_sink([events = std::move(events), ws, cb]() { forward_session(events, ws, cb); });
}

}  // namespace zk
