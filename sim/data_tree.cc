#include "sim/data_tree.h"

#include <cassert>

#include "zk/random.h"

namespace lockstep::sim {

using zk::Error;

bool valid_path(std::string_view p) {
  if (p.empty() || p.front() != '/') return false;
  if (p.size() == 1) return true;
  if (p.back() == '/') return false;
  size_t start = 1;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    const std::string_view part = p.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    for (char ch : part) {
      const auto u = static_cast<unsigned char>(ch);
      if (u <= 0x1f || u == 0x7f) return false;  // control characters, NUL included
    }
    start = end + 1;
  }
  return true;
}

std::string_view parent_of(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == 0 ? path.substr(0, 1) : path.substr(0, slash);
}

std::string_view name_of(std::string_view path) { return path.substr(path.rfind('/') + 1); }

DataTree::DataTree(uint64_t salt) : salt_(salt) { nodes_.emplace("/", Node{}); }

const Node* DataTree::find(std::string_view path) const {
  auto it = nodes_.find(path);
  return it == nodes_.end() ? nullptr : &it->second;
}

Node* DataTree::find_mut(std::string_view path) {
  auto it = nodes_.find(path);
  return it == nodes_.end() ? nullptr : &it->second;
}

uint64_t DataTree::child_key(std::string_view name) const {
  uint64_t h = zk::fnv1a(name, salt_ ^ 1469598103934665603ull);
  return zk::splitmix64(&h);
}

Error DataTree::prepare_create(std::string_view path, std::string_view data, zk::CreateMode mode,
                               zk::SessionId owner, Txn* txn) const {
  const bool seq = zk::is_sequential(mode);
  if (!valid_path(seq ? std::string(path) + "1" : std::string(path))) return Error::kBadArguments;
  if (path == "/") return Error::kNodeExists;
  const Node* parent = find(parent_of(path));
  if (parent == nullptr) return Error::kNoNode;
  if (parent->stat.ephemeral_owner.valid()) return Error::kNoChildrenForEphemerals;
  std::string final_path(path);
  if (seq) final_path += zk::format_sequence(zk::Sequence{parent->next_sequence});
  if (find(final_path) != nullptr) return Error::kNodeExists;
  txn->type = TxnType::kCreate;
  txn->path = std::move(final_path);
  txn->data = std::string(data);
  txn->session = zk::is_ephemeral(mode) ? owner : zk::SessionId{};
  return Error::kOk;
}

Error DataTree::prepare_delete(std::string_view path, zk::Version version, Txn* txn) const {
  if (!valid_path(path) || path == "/") return Error::kBadArguments;
  const Node* node = find(path);
  if (node == nullptr) return Error::kNoNode;
  if (version != zk::kAnyVersion && version != node->stat.version) return Error::kBadVersion;
  if (!node->children.empty()) return Error::kNotEmpty;
  txn->type = TxnType::kDelete;
  txn->path = std::string(path);
  return Error::kOk;
}

Error DataTree::prepare_set(std::string_view path, std::string_view data, zk::Version version,
                            Txn* txn) const {
  if (!valid_path(path)) return Error::kBadArguments;
  const Node* node = find(path);
  if (node == nullptr) return Error::kNoNode;
  if (version != zk::kAnyVersion && version != node->stat.version) return Error::kBadVersion;
  txn->type = TxnType::kSetData;
  txn->path = std::string(path);
  txn->data = std::string(data);
  return Error::kOk;
}

void DataTree::prepare_kill(zk::SessionId session, Txn* txn) const {
  txn->type = TxnType::kKillSession;
  txn->session = session;
  txn->paths.clear();
  auto it = ephemerals_.find(session.value);
  if (it != ephemerals_.end()) txn->paths.assign(it->second.begin(), it->second.end());
}

void DataTree::apply(const Txn& txn, std::vector<Trigger>* triggers) {
  switch (txn.type) {
    case TxnType::kCreate: apply_create(txn, triggers); return;
    case TxnType::kDelete: apply_delete(txn.path, txn.zxid, triggers); return;
    case TxnType::kSetData: apply_set(txn, triggers); return;
    case TxnType::kKillSession:
      for (const std::string& p : txn.paths) {
        if (find(p) != nullptr) apply_delete(p, txn.zxid, triggers);
      }
      return;
  }
}

void DataTree::apply_create(const Txn& txn, std::vector<Trigger>* triggers) {
  const std::string_view parent_path = parent_of(txn.path);
  Node* parent = find_mut(parent_path);
  assert(parent != nullptr);
  const std::string_view name = name_of(txn.path);
  parent->children.emplace(child_key(name), std::string(name));
  parent->stat.cversion++;
  parent->stat.pzxid = txn.zxid;
  parent->stat.num_children++;
  parent->next_sequence = static_cast<int32_t>(static_cast<uint32_t>(parent->next_sequence) + 1u);
  Node node;
  node.data = txn.data;
  node.stat.czxid = node.stat.mzxid = node.stat.pzxid = txn.zxid;
  node.stat.ctime_ms = node.stat.mtime_ms = txn.time.us / 1000;
  node.stat.ephemeral_owner = txn.session;
  node.stat.data_length = static_cast<int32_t>(txn.data.size());
  nodes_.emplace(txn.path, std::move(node));  // may rehash: `parent` is not used after this
  if (txn.session.valid()) ephemerals_[txn.session.value].insert(txn.path);
  triggers->push_back(Trigger{txn.path, zk::EventType::kCreated});
  triggers->push_back(Trigger{parent_path, zk::EventType::kChildrenChanged});
}

void DataTree::apply_delete(std::string_view path, zk::Zxid zxid, std::vector<Trigger>* triggers) {
  auto it = nodes_.find(path);
  assert(it != nodes_.end());
  const zk::SessionId owner = it->second.stat.ephemeral_owner;
  if (owner.valid()) {
    auto e = ephemerals_.find(owner.value);
    if (e != ephemerals_.end()) {
      e->second.erase(std::string(path));
      if (e->second.empty()) ephemerals_.erase(e);
    }
  }
  nodes_.erase(it);
  const std::string_view parent_path = parent_of(path);
  Node* parent = find_mut(parent_path);
  assert(parent != nullptr);
  const std::string_view name = name_of(path);
  parent->children.erase(std::make_pair(child_key(name), std::string(name)));
  parent->stat.cversion++;
  parent->stat.pzxid = zxid;
  parent->stat.num_children--;
  triggers->push_back(Trigger{path, zk::EventType::kDeleted});
  triggers->push_back(Trigger{parent_path, zk::EventType::kChildrenChanged});
}

void DataTree::apply_set(const Txn& txn, std::vector<Trigger>* triggers) {
  Node* node = find_mut(txn.path);
  assert(node != nullptr);
  node->data = txn.data;
  node->stat.mzxid = txn.zxid;
  node->stat.mtime_ms = txn.time.us / 1000;
  node->stat.version++;
  node->stat.data_length = static_cast<int32_t>(txn.data.size());
  triggers->push_back(Trigger{txn.path, zk::EventType::kDataChanged});
}

std::vector<std::string> DataTree::children_in_order(const Node& node) const {
  std::vector<std::string> out;
  out.reserve(node.children.size());
  for (const auto& [key, name] : node.children) out.push_back(name);
  return out;
}

void DataTree::set_sequence_counter(std::string_view parent, int32_t next) {
  Node* node = find_mut(parent);
  if (node != nullptr) node->next_sequence = next;
}

}  // namespace lockstep::sim
