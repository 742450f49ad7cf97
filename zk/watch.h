// lockstep contract: one-shot watches and session-event subscriptions.
//
// A Watch is requested by passing a Watch* to exists / get_data / get_children. The call
// replaces *watch with a fresh handle before the request is sent; once the reply arrives,
// armed() tells whether the server registered it (exists on a missing node arms a creation
// watch; get_data / get_children on a missing node return kNoNode and arm nothing; a failed
// request arms nothing).
//
// wait() completes with, in this order of preference:
//   - the node event, once it has fired. It is sticky: a fired watch keeps answering with it;
//   - the next undelivered session event (kConnecting on a disconnect, kConnected on a
//     reconnect, kExpired or kClosed), mirroring the C client, which hands session events to
//     every registered watcher. A disconnect does not disarm the watch: after a reconnect
//     within the session timeout the server still holds it (a node that changed meanwhile
//     fires on reconnect). After kExpired / kClosed the watch is dead and never fires;
//   - kOperationTimeout when the deadline passes, kCancelled when the task is cancelled;
//   - kNothing at once when the watch was never armed and has no pending session event
//     (waiting on it would sleep forever); kSessionExpired at once when it is dead and every
//     session event has been taken.
// Like every await, wait() resumes on the waiting task's executor, never inline.
//
// The implementation side (simulator, real client) delivers with deliver_node_event() and
// deliver_session_event(); recipes never call those.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "zk/error.h"
#include "zk/ring_queue.h"
#include "zk/types.h"
#include "zk/wait.h"

namespace zk {

enum class WatchKind : uint8_t { kExists, kData, kChildren };

namespace detail {

struct WatchState final : public Waiter {
  std::string path;
  WatchKind kind = WatchKind::kData;
  bool armed = false;
  bool dead = false;
  std::optional<WatchEvent> fired;
  RingQueue<WatchEvent> session_events;

  bool ready() const { return fired.has_value() || !session_events.empty() || !armed || dead; }
  Result<WatchEvent> take() {
    if (fired) return {Error::kOk, *fired};
    if (!session_events.empty()) {
      WatchEvent e = std::move(session_events.front());
      session_events.pop_front();
      return {Error::kOk, std::move(e)};
    }
    return Result<WatchEvent>::failure(dead ? Error::kSessionExpired : Error::kNothing);
  }
  Result<WatchEvent> give_up(Error e) { return Result<WatchEvent>::failure(e); }
};

}  // namespace detail

class Watch {
 public:
  Watch() = default;

  // For implementations: a fresh, not yet armed watch on `path`.
  static Watch make(std::string path, WatchKind kind) {
    Watch w;
    w.s_ = std::make_shared<detail::WatchState>();
    w.s_->path = std::move(path);
    w.s_->kind = kind;
    return w;
  }

  bool valid() const { return static_cast<bool>(s_); }
  bool armed() const { return s_ && s_->armed && !s_->dead; }
  bool fired() const { return s_ && s_->fired.has_value(); }
  bool dead() const { return s_ && s_->dead; }
  const std::string& path() const { return s_->path; }
  WatchKind kind() const { return s_->kind; }

  // REQUIRES: valid().
  detail::StateAwaiter<detail::WatchState, Result<WatchEvent>> wait(Time deadline = kNever) const {
    return {s_, deadline};
  }

  // ---- implementation side ----
  void set_armed(bool armed) const { s_->armed = armed; }
  // The server fired the watch. Ignored once fired or dead.
  void deliver_node_event(WatchEvent e) const {
    if (s_->fired || s_->dead) return;
    s_->fired = std::move(e);
    s_->resume_waiter();
  }
  // A session event. kExpired / kClosed kill the watch.
  void deliver_session_event(SessionState state) const {
    if (s_->dead) return;
    if (state == SessionState::kExpired || state == SessionState::kClosed) s_->dead = true;
    if (s_->fired) return;
    s_->session_events.push_back(WatchEvent{EventType::kSession, state, s_->path, Zxid{}, {}});
    s_->resume_waiter();
  }

 private:
  friend class Dispatcher;  // parks a callback on the watch
  std::shared_ptr<detail::WatchState> s_;
};

// A subscription to the session's state changes from the moment it was taken.
using SessionEvents = Mailbox<Result<WatchEvent>>;

}  // namespace zk
