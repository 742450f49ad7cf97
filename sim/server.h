// lockstep simulator: one ZooKeeper server of the ensemble and the sessions the ensemble holds.
//
// A Server keeps its own DataTree and applies the committed log in zxid order; server 1 is the
// leader and applies each write the moment it commits it unless it lags (kLaggingFollower on
// server 1 of an ensemble), followers apply later (latency plus any injected lag). Watches live on
// the server the session is connected to, keyed by path, one entry per session (so one notification
// per session, as in ZooKeeper's WatchManager). SessionRec is the ensemble's view of a session: its
// timeout, its current connection, and whether it is being heard (heartbeats are modelled lazily:
// see World::Impl::update_heard). Plain data owned by World::Impl; the logic is in server.cc.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/data_tree.h"
#include "sim/path_map.h"
#include "sim/world.h"

namespace lockstep::sim {

// A small set of ids kept as a sorted vector: iterates in ascending order like std::set, but
// one allocation for the lot instead of one per id (a watch set usually holds one session, the
// blocked connections a few; both churn with every request).
class IdSet {
 public:
  bool empty() const { return ids_.empty(); }
  size_t size() const { return ids_.size(); }
  size_t count(uint64_t id) const { return std::binary_search(ids_.begin(), ids_.end(), id); }
  void insert(uint64_t id) {
    auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
    if (it == ids_.end() || *it != id) ids_.insert(it, id);
  }
  void erase(uint64_t id) {
    auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
    if (it != ids_.end() && *it == id) ids_.erase(it);
  }
  std::vector<uint64_t>::const_iterator begin() const { return ids_.begin(); }
  std::vector<uint64_t>::const_iterator end() const { return ids_.end(); }

 private:
  std::vector<uint64_t> ids_;  // ascending, no repeats
};

// path -> sessions watching it. Hashed: a watch is found by its path on every trigger, and a
// 10,000-client run holds 10,000 of them (a tree walk of string compares cost 4% of it). Its
// order never shows: state_digest() and World::server_watches() sort the paths.
using WatchTable = PathMap<IdSet>;

// The entries of `t` in path order (what a std::map would iterate).
std::vector<std::pair<std::string_view, const IdSet*>> sorted_by_path(const WatchTable& t);

struct Server {
  Server(uint32_t server_id, uint64_t salt) : id(server_id), tree(salt) {}

  uint32_t id;
  bool up = true;
  uint32_t down_depth = 0;  // overlapping restart faults: up again when the last one ends
  DataTree tree;
  zk::Zxid applied;
  Duration lag{};              // kLaggingFollower: extra apply delay ...
  Time lag_until{};            // ... until then
  Time apply_last{};           // applies are FIFO: never scheduled before the previous one
  WatchTable data_watches;     // exists (either way) and get_data watches
  WatchTable child_watches;    // get_children watches
  IdSet blocked;               // connections whose next reply waits for an apply
};

struct SessionRec {
  zk::SessionId id;
  uint32_t client = 0;
  Duration timeout{};
  uint64_t conn = 0;    // the connection it is attached to, 0 when none
  uint32_t server = 0;  // that connection's server
  bool heard = false;   // heartbeats reach the ensemble
  Time last_packet{};   // when the session's last request or connect reached a server
  uint64_t token = 0;   // bumps cancel a pending expiry event
  Time expires_at{};    // while !heard: when the armed expiry event (this token's) runs
};

}  // namespace lockstep::sim
