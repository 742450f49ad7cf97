// lockstep simulator: one server's copy of the ZooKeeper data tree.
//
// The leader validates a write against its tree (prepare_*) and turns it into a Txn; every
// server, the leader included, then applies the same Txns in zxid order (apply), which yields
// the watch triggers that the server fires. Owned by one simulated server; no I/O.
//
// Invariants:
//   1. "/" and the server's /zookeeper (with config and quota) always exist; every other
//      node's parent exists.
//   2. An ephemeral node has no children; ephemeral_owner is its session.
//   3. A parent's next sequence counts every child create applied under it (wrapping as a
//      signed 32-bit int); deletes never move it. cversion counts creates and deletes.
//   4. stat.num_children == child_count(); data_length == data.size().
//   5. Children iterate in (hash(salt, name), name) order: unsorted, stable between calls.
//   6. Containers and TTL nodes (Node::extended_type zk::kContainerOwner / zk::ttl_owner) are
//      persistent: stat.ephemeral_owner 0, children allowed; reapable() lists them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/id_index.h"
#include "sim/path_map.h"
#include "zk/error.h"
#include "zk/types.h"

namespace lockstep::sim {

// ZooKeeper's PathUtils.validatePath: absolute, no trailing '/', no empty, "." or ".."
// components, and only characters the server accepts (see allowed_code_point in the .cc).
// With `sequential`, the path may end in '/' (the server appends the suffix).
bool valid_path(std::string_view path, bool sequential = false);
// %010d, as the server formats a sequential suffix (zk::format_sequence without snprintf).
void append_sequence(std::string* out, int32_t seq);
std::string_view parent_of(std::string_view path);  // "/" for "/a"
std::string_view name_of(std::string_view path);    // "a" for "/x/a"

struct Node {
  std::string data;
  zk::Stat stat;
  // A container's or TTL node's type, as the server records it in its own ephemeralOwner
  // (zk::kContainerOwner, zk::ttl_owner); 0 otherwise. Clients never see it: the stat they get
  // shows ephemeral_owner 0 for these nodes (DataTree.getClientEphemeralOwner; measured).
  zk::SessionId extended_type;
  int32_t next_sequence = 0;
  // Its name's place in its parent's NameLog, kept so that a delete need not search for it
  // (nor hash the name again). None for "/".
  zk::NameLog::Place place_in_parent;
  // The children, ordered by (hash, name), each with the versions it lived between: a
  // get_children listing is a version of it (DataTree::children_in_order), made in O(1) and
  // shared by the replies made at that version. The only record of the children (a second set
  // of them cost an allocation and a string per create and per delete). Null until the node has
  // a child or is listed. Owned by this node alone (a copied Node would share it).
  mutable std::shared_ptr<zk::NameLog> log;
  size_t child_count() const { return log ? log->size() : 0; }
};

// kError: a write that failed at the leader (ZooKeeper's ErrorTxn). It is committed and
// applied like any other, taking a zxid, and changes nothing.
enum class TxnType : uint8_t { kCreate, kDelete, kSetData, kKillSession, kError };

struct Txn {
  TxnType type = TxnType::kCreate;
  zk::Zxid zxid;
  zk::Time time;
  std::string path;                // the final path (create, delete, set); error: the request's
  std::string data;                // create, set
  zk::SessionId session;           // create: ephemeral owner; kill: the dying session
  std::vector<std::string> paths;  // kill: the session's ephemerals, sorted
  // path_hash() of `path` and of its parent (create, delete, set), taken once when the leader
  // commits it (hash_paths): every server's apply and watch tables reuse them. Not hashed (a
  // test's own Txn): each apply takes them itself.
  bool hashed = false;
  uint64_t path_hash = 0;
  uint64_t parent_hash = 0;
};

// Takes txn->path's and its parent's path_hash() (Txn::hashed).
void hash_paths(Txn* txn);

struct Trigger {
  HashedPath where;  // its path points into the applied Txn
  zk::EventType type;
  std::string_view path() const { return where.path(); }
};

class DataTree {
 public:
  explicit DataTree(uint64_t salt);

  const Node* find(std::string_view path) const;
  // Validation on the leader. On kOk, *txn holds everything but zxid and time. `path_valid`:
  // the caller already checked valid_path (a simulated client does before it sends).
  zk::Error prepare_create(std::string_view path, std::string_view data, zk::CreateMode mode,
                           zk::SessionId owner, Txn* txn, bool path_valid = false,
                           zk::Duration ttl = {}) const;
  zk::Error prepare_delete(std::string_view path, zk::Version version, Txn* txn,
                           bool path_valid = false) const;
  zk::Error prepare_set(std::string_view path, std::string_view data, zk::Version version, Txn* txn,
                        bool path_valid = false) const;
  void prepare_kill(zk::SessionId session, Txn* txn) const;

  // REQUIRES: txn was prepared against a tree in the same state.
  void apply(const Txn& txn, std::vector<Trigger>* triggers);

  // The node's children in iteration order (invariant 5): a version of its NameLog, O(1).
  zk::Names children_in_order(const Node& node) const;
  // Ephemeral nodes per owning session (only sessions that own one), for the invariant that
  // no ephemeral outlives its session.
  uint32_t ephemeral_count(zk::SessionId owner) const;
  // Containers and TTL nodes, by path (ContainerManager's candidates are found among them).
  const std::set<std::string>& reapable() const { return reapable_; }
  void set_sequence_counter(std::string_view parent, int32_t next);
  // Every node's path, data, stat, sequence counter and extended type, as one hash that does
  // not depend on the child-order salt (World::state_digest).
  uint64_t digest() const;

 private:
  uint64_t child_key(std::string_view name) const;
  void apply_create(const Txn& txn, std::vector<Trigger>* triggers);
  void apply_delete(const HashedPath& path, const HashedPath& parent, zk::Zxid zxid,
                    std::vector<Trigger>* triggers);
  void apply_set(const Txn& txn, std::vector<Trigger>* triggers);

  // Lookups only: nothing shows its order (prepare_kill sorts what it collects).
  PathMap<Node> nodes_;
  uint64_t salt_;
  // owner session -> ephemeral nodes it owns (> 0); lookups only
  IdCounts ephemerals_;
  std::set<std::string> reapable_;           // containers and TTL nodes
};

}  // namespace lockstep::sim
