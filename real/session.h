// lockstep real client: zk::Session over the ZooKeeper C client (libzookeeper-mt, async API).
//
// A RealSession is one C client handle (zookeeper_init) and therefore one ZooKeeper session.
// It implements the contract of zk/session.h against a real server:
//   - every operation is sent at once with the C client's async call (zoo_acreate2,
//     zoo_adelete, zoo_awexists, zoo_awget, zoo_awget_children2, zoo_aset, zoo_async); the C
//     client's completion thread copies the reply and posts it to the EventLoop, where the
//     Future is fulfilled and the awaiting coroutine resumes;
//   - a requested Watch is registered with the C client under its own watcher context, so the
//     C client decides whether it is armed (exists on a missing node arms; get data / get
//     children on a missing node do not; a failed request arms nothing), exactly as the server
//     does. Node events fire the Watch on the loop, in the C client's delivery order (an event
//     is delivered before the reply of any later request);
//   - session events from the C client's global watcher (ZOO_CONNECTING_STATE -> kConnecting,
//     ZOO_CONNECTED_STATE -> kConnected, ZOO_EXPIRED_SESSION_STATE -> kExpired) go, on the
//     loop, to every armed watch (deliver_session_event) and to every subscriber, once per
//     state change. kExpired and kClosed are final: later calls fail with kInvalidState, and
//     reopen() replaces the handle with a new session on the same context.
// Node events carry no zxid (the C client does not expose it): WatchEvent::zxid is 0.
// Error codes are the C client's, unchanged, which goes beyond zk/session.h's list in two
// places (see real/FINDINGS.md): requests pending when the client's own timer gives up on a
// connection or a connect attempt (2/3 of the session timeout) complete with kOperationTimeout,
// and requests still in flight at close() complete with kClosing although the server may have
// applied them.
//
// Ownership and threads: a RealSession is created, used and destroyed on its EventLoop's
// owner thread. It owns its C handle; the C client's threads only post closures, which keep
// the per-handle state alive until they have run. close() runs zookeeper_close on a helper
// thread (it blocks for a round trip), joined by the destructor. Destroy a session only when
// no coroutine of its context is still scheduled to resume.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "real/event_loop.h"
#include "zk/context.h"
#include "zk/session.h"

namespace lockstep::real {

// A session's id and password: what a second handle needs to join (or expire) the session.
struct Credentials {
  zk::SessionId id;
  std::array<char, 16> password{};
};

struct SessionOptions {
  std::string hosts;                              // "127.0.0.1:2181[,127.0.0.1:2182...]"
  zk::Duration session_timeout = zk::seconds(4);  // requested; the server clamps it
  std::optional<Credentials> resume;              // join this session instead of creating one
  uint64_t seed = 1;                              // seed of the context's random stream
  bool log_client = false;                        // pass the C client's log lines to stderr
};

namespace detail {
class Core;
}

class RealSession final : public zk::Session {
 public:
  // A session with its own context on `loop`.
  RealSession(EventLoop& loop, SessionOptions options);
  // A session that runs on an existing context (several sessions of one client process may
  // share a context). REQUIRES: context.executor() is `loop`.
  RealSession(EventLoop& loop, zk::Context& context, SessionOptions options);
  ~RealSession() override;
  RealSession(const RealSession&) = delete;
  RealSession& operator=(const RealSession&) = delete;

  // ---- zk::Session ----
  zk::Context& context() override { return *context_; }
  zk::SessionId id() const override;
  zk::SessionState state() const override;
  zk::Duration timeout() const override;
  zk::Future<zk::Result<zk::Created>> create(std::string path, std::string data,
                                             zk::CreateMode mode, zk::Duration ttl = {}) override;
  zk::Future<zk::Status> remove(std::string path, zk::Version version = zk::kAnyVersion) override;
  zk::Future<zk::Result<zk::Stat>> exists(std::string path, zk::Watch* watch = nullptr) override;
  zk::Future<zk::Result<zk::NodeData>> get_data(std::string path,
                                                zk::Watch* watch = nullptr) override;
  zk::Future<zk::Result<zk::Stat>> set_data(std::string path, std::string data,
                                            zk::Version version = zk::kAnyVersion) override;
  zk::Future<zk::Result<zk::Children>> get_children(std::string path,
                                                    zk::Watch* watch = nullptr) override;
  zk::Future<zk::Status> sync(std::string path) override;
  zk::SessionEvents subscribe() override;
  zk::Future<zk::Status> close() override;

  // ---- real-only ----
  // The id and password of the current session. REQUIRES: it has connected once (id().valid()).
  Credentials credentials() const;
  // Replaces the handle with a new session (same context, same subscribers). The old handle,
  // if still open, is closed first.
  void reopen();
  // "127.0.0.1:port" of the server the handle is connected to, or "" when not connected.
  std::string connected_server() const;
  EventLoop& loop() { return loop_; }

 private:
  void open(std::optional<Credentials> resume);

  EventLoop& loop_;
  SessionOptions options_;
  std::unique_ptr<zk::Context> own_context_;
  zk::Context* context_;
  std::shared_ptr<std::vector<zk::SessionEvents>> subscribers_;
  std::shared_ptr<detail::Core> core_;
  std::vector<std::thread> closers_;
};

// Maps a C client error code (ZOK, ZNONODE, ...) to zk::Error (the numbers are the same; codes
// the contract does not name map to kSystemError).
zk::Error error_from_c(int rc);

}  // namespace lockstep::real
