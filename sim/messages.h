// lockstep simulator: what travels between a client and a server, and the connection carrying
// it.
//
// A Connection is one TCP connection of one client to one server: two FIFO channels (requests
// up, replies and notifications down) and the server's per-connection queue of requests whose
// replies are not sent yet. Each message gets its own latency, but a message never arrives
// before the one sent ahead of it on the same channel (arrival times are non-decreasing and a
// delivery event delivers every message up to its own, in order).
//
// Invariants: seq numbers on a channel increase by one per message; a side that closed its end
// (client_open / server_open false) neither sends nor receives again.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zk/error.h"
#include "zk/ring_queue.h"
#include "zk/types.h"

namespace lockstep::sim {

using zk::RingQueue;

// A message's std::string field whose move skips the copy when it is empty. libstdc++ moves a
// string kept in place (15 characters or fewer) by a memcpy call even when it is empty, and a
// request's data (empty but for create and set_data) and a reply's (empty but for get_data)
// move with their message about ten times per simulated request.
class MsgText : public std::string {
 public:
  using std::string::string;
  using std::string::operator=;
  MsgText() = default;
  MsgText(const std::string& s) : std::string(s) {}                 // NOLINT: a string
  MsgText(std::string&& s) noexcept : std::string(std::move(s)) {}  // NOLINT: a string
  MsgText(const MsgText&) = default;
  MsgText(MsgText&& o) noexcept {
    if (!o.empty()) std::string::operator=(std::move(static_cast<std::string&>(o)));
  }
  MsgText& operator=(const MsgText&) = default;
  MsgText& operator=(MsgText&& o) noexcept {
    if (o.empty()) {
      clear();
    } else {
      std::string::operator=(std::move(static_cast<std::string&>(o)));
    }
    return *this;
  }
};

enum class Op : uint8_t {
  kCreate,
  kDelete,
  kExists,
  kGetData,
  kSetData,
  kGetChildren,
  kSync,
  kClose
};
const char* op_name(Op op);
// Writes (and sync) go through the leader; reads are served by the connected server.
constexpr bool goes_to_leader(Op op) {
  return op == Op::kCreate || op == Op::kDelete || op == Op::kSetData || op == Op::kSync ||
         op == Op::kClose;
}
constexpr bool is_mutation(Op op) {
  return op == Op::kCreate || op == Op::kDelete || op == Op::kSetData;
}

struct Request {
  uint64_t xid = 0;
  Op op = Op::kExists;
  std::string path;
  MsgText data;
  zk::CreateMode mode = zk::CreateMode::kPersistent;
  zk::Duration ttl{};  // create with a TTL mode
  zk::Version version = zk::kAnyVersion;
  bool watch = false;
  bool lose_reply = false;    // FaultKind::kLoseNextReply marked it
  bool lose_request = false;  // FaultKind::kLoseNextRequest marked it
  // The request frame as the C client encodes it (jute): what jute.maxbuffer limits.
  size_t frame_bytes() const;
};

// The paths a reconnecting client re-registers (ZooKeeper's SetWatches).
struct WatchList {
  std::vector<std::string> data;   // get_data, and exists on an existing node
  std::vector<std::string> exist;  // exists on a missing node
  std::vector<std::string> child;  // get_children
};

enum class UpType : uint8_t { kConnect, kRequest };

struct UpMsg {
  UpType type = UpType::kRequest;
  uint64_t seq = 0;
  zk::Time arrival;
  Request req;
  // kConnect
  zk::SessionId session;
  zk::Duration timeout;
  zk::Zxid last_zxid;
  WatchList watches;
};

enum class DownType : uint8_t { kConnected, kExpired, kReply, kNotify, kClose };

struct DownMsg {
  DownType type = DownType::kReply;
  uint64_t seq = 0;
  zk::Time arrival;
  uint64_t xid = 0;
  Op op = Op::kExists;
  zk::Error err = zk::Error::kOk;
  zk::Zxid zxid;     // the server's last applied zxid (reply), the firing txn (notify)
  std::string path;  // created path (create), watched path (notify)
  MsgText data;
  zk::Stat stat;
  zk::Names children;  // get_children: shared with every reply made from the same listing
  zk::EventType event = zk::EventType::kSession;
  zk::SessionId session;       // kConnected
  zk::Duration timeout;        // kConnected
  size_t frame_bytes() const;  // approximate reply frame (the Java client's limit)
};

// A request the server received and has not answered yet.
struct ServerEntry {
  Request req;
  bool read = true;
  zk::Zxid target;  // writes: reply once the server applied this zxid
  // Writes: prepared by the leader; null for a read (whose reply is made when it is served),
  // so that a read's entry does not carry, move and destroy an unused reply.
  std::unique_ptr<DownMsg> reply;
};

struct Connection {
  uint64_t id = 0;
  uint32_t client = 0;
  uint32_t server = 0;
  zk::SessionId session;  // set when the server attached the session
  bool client_open = true;
  bool server_open = true;
  RingQueue<UpMsg> up;
  RingQueue<DownMsg> down;
  uint64_t up_seq = 0;
  uint64_t down_seq = 0;
  zk::Time up_last;
  zk::Time down_last;
  RingQueue<ServerEntry> pending;  // server side, in request order
};

}  // namespace lockstep::sim
