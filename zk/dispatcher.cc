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
  for (;;) {
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
  // Held weakly by its own sink (a strong hold would be a cycle); the session keeps an armed
  // watch's state until it fires or dies.
  std::weak_ptr<detail::WatchState> wst = st;
  st->park_sink([wst, ws, cb]() {
    if (std::shared_ptr<detail::WatchState> live = wst.lock()) forward_watch(live, ws, cb);
  });
}

void Dispatcher::on_session(const SessionEvents& events, WatchCallback cb) {
  shared_->subscriptions.push_back(events);  // the session forgets a queue nobody holds
  forward_session(events.s_, shared_, std::move(cb));
}

void Dispatcher::forward_session(std::shared_ptr<detail::MailboxState<Result<WatchEvent>>> st,
                                 std::weak_ptr<Shared> ws, WatchCallback cb) {
  std::shared_ptr<Shared> s = ws.lock();
  if (!s || s->closed) return;
  while (!st->queue.empty()) {
    Result<WatchEvent> ev = st->take();
    s->enqueue([cb, ev]() { return cb(ev); });
  }
  std::weak_ptr<detail::MailboxState<Result<WatchEvent>>> wst = st;
  st->park_sink([wst, ws, cb]() {
    if (auto live = wst.lock()) forward_session(live, ws, cb);
  });
}

}  // namespace zk
