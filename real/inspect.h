// lockstep real client: a synchronous view of a real server's data tree, for harness checks.
//
// A TreeInspector is its own C client handle (not a zk::Session) used with the C client's
// synchronous calls, so a harness can look at the tree from any thread, including from inside
// a coroutine on an EventLoop, without awaiting: the C client's own threads do the I/O. It is
// for checks after the fact (which nodes does a session own under a directory; the final tree
// under a lock; an operator's delete behind the clients), never for recipe code. Reads go to the server the inspector is connected to;
// on an ensemble, call sync_path() first to see every committed write.
//
// Thread-safety: one caller at a time.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "zk/types.h"

namespace lockstep::real {

class TreeInspector {
 public:
  // Connects to `hosts`; connected() tells whether that worked within `connect_timeout_ms`.
  explicit TreeInspector(const std::string& hosts, int connect_timeout_ms = 10000);
  ~TreeInspector();
  TreeInspector(const TreeInspector&) = delete;
  TreeInspector& operator=(const TreeInspector&) = delete;

  bool connected() const;
  // Brings the inspector's server up to date with the leader. False on failure.
  bool sync_path(const std::string& path);
  // Calls fn(path, stat) on `dir` and every node below it, parents first, children sorted by
  // name. A node that vanishes during the walk is skipped. False when the server could not be
  // asked (the walk is then incomplete).
  bool walk(const std::string& dir,
            const std::function<void(const std::string&, const zk::Stat&)>& fn);
  // Deletes `path` (any version): the outside session of the delete-node and delete-dir
  // faults (real/faults.cc). The C client's return code (ZOK, ZNONODE, ZNOTEMPTY, ...).
  int remove(const std::string& path);

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace lockstep::real
