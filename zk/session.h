// lockstep contract: a ZooKeeper session, as recipe code sees it.
//
// This is the whole surface a recipe may touch (with zk/context.h for time and tasks). It is
// implemented by the simulator (sim/) and by the real C client (real/); recipes never know
// which. One Session is one ZooKeeper session on one client handle: when it expires, the object
// stays valid but every later call fails with kInvalidState; the application opens a new one.
//
// Calling an operation sends the request at once (like the C client's async API) and returns a
// Future; awaiting it yields the reply. Requests and replies of one session are FIFO. A watch
// event that a later reply observes is delivered (its Watch fired) before that reply.
//
// What each operation may return, beyond kOk:
//   every operation: kConnectionLoss (the request may or may not have been applied: a create
//     may have created the node, a delete may have deleted it), kSessionExpired (the session
//     died while the request was pending), kInvalidState (the session was already expired or
//     closed when called), kOperationTimeout (the client library heard nothing from the server
//     for 2/3 of the session timeout, or Future::until's deadline passed: the request may still
//     be applied), kCancelled (task cancellation: the request may still be applied), kClosing
//     (close() was called while the request was in flight: it may still be applied),
//     kBadArguments (malformed path).
//   create:       kNodeExists, kNoNode (parent missing), kNoChildrenForEphemerals,
//                 kUnimplemented (a TTL mode on a server without extended types).
//   remove:       kNoNode, kBadVersion, kNotEmpty.
//   exists:       kNoNode (not an error for the watch: a creation watch is armed).
//   get_data, get_children: kNoNode (no watch armed).
//   set_data:     kNoNode, kBadVersion.
// A request larger than the server's packet limit (1 MiB) makes the server drop the
// connection: kConnectionLoss.
//
// Coroutines awaiting these futures resume on the session's context's executor.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "zk/context.h"
#include "zk/dispatcher.h"
#include "zk/error.h"
#include "zk/types.h"
#include "zk/wait.h"
#include "zk/watch.h"

namespace zk {

struct Created {
  std::string path;  // the full path, with the sequence suffix for sequential modes
  Stat stat;
};

struct NodeData {
  std::string data;
  Stat stat;
};

struct Children {
  Names names;  // NOT sorted: the server's own order (hash-set order); shared, never copied
  Stat stat;                       // the parent's stat
};

class Session {
 public:
  virtual ~Session() = default;

  // The context this session's coroutines run on (time, sleeps, randomness, spawn).
  virtual Context& context() = 0;

  // 0 until the first connection is established.
  virtual SessionId id() const = 0;
  virtual SessionState state() const = 0;
  // The session timeout the server granted (or requested, before connecting).
  virtual Duration timeout() const = 0;

  // `ttl`: for the TTL modes, how long the node may stay childless and unmodified before the
  // server deletes it (1 ms .. kMaxTtl, else kBadArguments); for every other mode it must be 0
  // (else kBadArguments, without sending anything).
  virtual Future<Result<Created>> create(std::string path, std::string data, CreateMode mode,
                                         Duration ttl = {}) = 0;
  virtual Future<Status> remove(std::string path, Version version = kAnyVersion) = 0;
  // On kNoNode with a watch requested, a creation watch is armed.
  virtual Future<Result<Stat>> exists(std::string path, Watch* watch = nullptr) = 0;
  virtual Future<Result<NodeData>> get_data(std::string path, Watch* watch = nullptr) = 0;
  virtual Future<Result<Stat>> set_data(std::string path, std::string data,
                                        Version version = kAnyVersion) = 0;
  virtual Future<Result<Children>> get_children(std::string path, Watch* watch = nullptr) = 0;
  // Brings the connected server up to date with the leader as of when it handled the sync,
  // when that server is a follower. ZooKeeper 3.8's leader answers a sync from one of its own
  // clients at once, even while its own copy has not yet applied everything it committed, so a
  // read after a sync may still miss a write another server has answered for (real/FINDINGS.md
  // item 11). A barrier that holds on every server is a write: its reply comes once its server
  // has applied everything committed before it, a failed write too (recipes/lock_base.h,
  // read_barrier).
  virtual Future<Status> sync(std::string path) = 0;

  // Session state changes from now on (kConnecting, kConnected, kExpired, kClosed).
  virtual SessionEvents subscribe() = 0;

  // Closes the session: its ephemeral nodes are deleted. Later calls fail with kInvalidState.
  virtual Future<Status> close() = 0;

  // This client handle's event dispatcher (zk/dispatcher.h): the one ordered thread its
  // callbacks run on. Started on first use, on context(); it stays with the handle when an
  // implementation replaces an expired session in place.
  Dispatcher& dispatcher() {
    if (!dispatcher_) dispatcher_ = std::make_unique<Dispatcher>(context());
    return *dispatcher_;
  }

 private:
  std::unique_ptr<Dispatcher> dispatcher_;
};

}  // namespace zk
