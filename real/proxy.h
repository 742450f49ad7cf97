// lockstep real client: an in-process TCP proxy between ZooKeeper clients and one server.
//
// A Proxy listens on 127.0.0.1 (a free port) and forwards every accepted connection to one
// ZooKeeper server port. Clients that connect through it (SessionOptions::hosts =
// proxy.address()) can be subjected to network faults the harness controls:
//   - cut(): every open connection is closed on both sides at once (the client sees
//     connection loss and reconnects through the proxy, keeping its session);
//   - set_blackhole(true): nothing passes either way and nothing is closed; new connections
//     wait in the listen backlog. The client's heartbeats go unanswered, so it declares
//     connection loss itself; set_blackhole(false) lets the buffered bytes flow again;
//   - drop_reply_to(types): the next request of one of the given ZooKeeper op types (for
//     example kOpCreate, kOpCreate2) is forwarded to the server, its reply is dropped and the
//     connection is cut right there: the request was applied, the client sees connection loss
//     (the ambiguous create / the lost delete reply, made certain);
//   - drop_request_to(types): the next request of one of the given types is not forwarded and
//     the connection is cut instead: the request was not applied, the client sees connection
//     loss (the other side of the same ambiguity).
// The proxy understands ZooKeeper's framing (4-byte big-endian length, then a request header
// {xid, type} from the client or a reply header {xid, zxid, err} from the server; the first
// frame each way is the connect handshake) and forwards whole frames.
//
// Threads: one proxy thread does all socket work (poll loop); the control methods may be
// called from any thread and return once the proxy thread has applied them.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <thread>

namespace lockstep::real {

// ZooKeeper op codes (ZooDefs.OpCode) the proxy may look for.
inline constexpr int32_t kOpCreate = 1;
inline constexpr int32_t kOpDelete = 2;
inline constexpr int32_t kOpSetData = 5;
inline constexpr int32_t kOpCreate2 = 15;

class Proxy {
 public:
  // Starts a proxy to 127.0.0.1:target_port. Returns null and sets *error on failure.
  static std::unique_ptr<Proxy> start(int target_port, std::string* error);
  ~Proxy();
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  // Closes every open connection now.
  void cut();
  void set_blackhole(bool on);
  // Arms a one-shot reply drop for the next request whose op type is in `types` and, when
  // `path_contains` is not empty, whose path contains it (create, delete and set_data carry
  // their path first).
  void drop_reply_to(std::set<int32_t> types, std::string path_contains = "");
  // Arms a one-shot request drop, matched like drop_reply_to.
  void drop_request_to(std::set<int32_t> types, std::string path_contains = "");
  // How many replies (or requests) have been dropped so far.
  int replies_dropped() const;
  // When an armed drop last matched its request (steady clock), if one has: an armed drop waits
  // for the client's next such request, which may come long after it was armed.
  std::optional<std::chrono::steady_clock::time_point> last_drop_matched() const;
  // Connections currently open (pairs client <-> server).
  int connections() const;

 private:
  struct Impl;
  explicit Proxy(std::unique_ptr<Impl> impl, int port);
  std::unique_ptr<Impl> impl_;
  int port_;
};

}  // namespace lockstep::real
