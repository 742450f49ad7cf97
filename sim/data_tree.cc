#include "sim/data_tree.h"

#include <string.h>  // memrchr

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <optional>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sim/words.h"
#include "zk/invariant.h"
#include "zk/random.h"

namespace lockstep::sim {

using zk::Error;

namespace {

// Decodes one UTF-8 code point at s[*i] (advancing *i); -1 for bytes that are not UTF-8.
int32_t next_code_point(std::string_view s, size_t* i) {
  const auto lead = static_cast<unsigned char>(s[(*i)++]);
  if (lead < 0x80) return lead;
  int extra = 0;
  int32_t cp = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    extra = 1;
    cp = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    extra = 2;
    cp = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    extra = 3;
    cp = lead & 0x07;
  } else {
    return -1;
  }
  for (int k = 0; k < extra; ++k) {
    if (*i >= s.size()) return -1;
    const auto b = static_cast<unsigned char>(s[*i]);
    if ((b & 0xc0) != 0x80) return -1;
    cp = (cp << 6) | (b & 0x3f);
    ++*i;
  }
  static constexpr int32_t kMin[] = {0, 0x80, 0x800, 0x10000};
  return cp < kMin[extra] ? -1 : cp;
}

// The server checks names as Java strings: controls, C1 controls, surrogates (so anything
// outside the BMP), private use and U+FFF0..U+FFFF are refused; undecodable bytes become
// U+FFFD and are refused too.
bool allowed_code_point(int32_t cp) {
  if (cp < 0 || cp >= 0x10000) return false;
  if (cp <= 0x1f || (cp >= 0x7f && cp <= 0x9f)) return false;
  if (cp >= 0xd800 && cp <= 0xf8ff) return false;
  return cp < 0xfff0;
}

}  // namespace

bool valid_path(std::string_view p, bool sequential) {
  if (p.empty() || p.front() != '/') return false;
  if (p.size() == 1) return true;
  if (p.back() == '/') {
    if (!sequential) return false;
    p.remove_suffix(1);  // "/a/" + suffix is "/a/0000000000"
    if (p.back() == '/') return false;
  }
  // One pass (every simulated request is checked), skipping runs of ordinary characters by a
  // table. p[0] is '/' and p does not end in '/', so each component is the text after a '/':
  // not empty, not "." or "..", and made of characters the server accepts.
  static constexpr std::array<uint8_t, 256> kSpecial = [] {
    std::array<uint8_t, 256> t{};
    for (int b = 0; b < 256; ++b) t[b] = b < 0x20 || b >= 0x7f || b == '/' || b == '.';
    return t;
  }();
  const size_t n = p.size();
  for (size_t i = 1; i < n;) {
#if defined(__SSE2__)
    // Sixteen at a time where the machine has SSE2 (every x86-64): a byte is special when it
    // is below 0x20 or 0x80 and above (signed, below 0x20), 0x7f, '/' or '.'.
    if (i + 16 <= n) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p.data() + i));
      const __m128i special =
          _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                                    _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f))),
                       _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('/')),
                                    _mm_cmpeq_epi8(v, _mm_set1_epi8('.'))));
      const auto bits = static_cast<uint32_t>(_mm_movemask_epi8(special));
      if (bits == 0) {
        i += 16;
        continue;
      }
      i += static_cast<size_t>(std::countr_zero(bits));  // on to the first special byte
    } else
#endif
    // Eight ordinary characters at a time: a word with no byte below 0x20, none of 0x7f and
    // above, no '/' and no '.' is skipped whole (names of lock nodes are long); in another, the
    // loop below goes on from its first special byte.
    if (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, p.data() + i, 8);
      constexpr uint64_t kOnes = 0x0101010101010101ull;
      constexpr uint64_t kHighs = 0x8080808080808080ull;
      const auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v & kHighs; };
      const uint64_t special = (w & kHighs) | ((w - 0x20 * kOnes) & ~w & kHighs) |
                               has_zero(w ^ (0x7f * kOnes)) | has_zero(w ^ ('/' * kOnes)) |
                               has_zero(w ^ ('.' * kOnes));
      if (special == 0) {
        i += 8;
        continue;
      }
      // The lowest flagged byte is the first special one (a borrow can only flag bytes above
      // a true one): the bytes before it are ordinary.
      i += static_cast<size_t>(std::countr_zero(special)) / 8;
    }
    const auto b = static_cast<unsigned char>(p[i]);
    if (kSpecial[b] == 0) {
      ++i;
      continue;
    }
    if (b == '/') {
      if (p[i - 1] == '/') return false;  // an empty component
      ++i;
      continue;
    }
    if (b == '.') {
      if (p[i - 1] == '/') {  // a component starting with '.': "." and ".." are refused
        const size_t dots = i + 1 < n && p[i + 1] == '.' ? 2 : 1;
        if (i + dots == n || p[i + dots] == '/') return false;
      }
      ++i;
      continue;
    }
    if (b < 0x80) return false;  // a control or DEL: what allowed_code_point says for one byte
    if (!allowed_code_point(next_code_point(p, &i))) return false;
  }
  return true;
}

void append_sequence(std::string* out, int32_t seq) {
  // %010d, written from the last digit back into a buffer and appended in one piece.
  char buf[12];
  char* p = buf + sizeof buf;
  const bool negative = seq < 0;
  uint32_t v = negative ? 0u - static_cast<uint32_t>(seq) : static_cast<uint32_t>(seq);
  const char* const pad = p - (negative ? 9 : 10);  // the fewest digits written
  while (v > 0 || p > pad) {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  }
  if (negative) *--p = '-';
  out->append(p, static_cast<size_t>(buf + sizeof buf - p));
}

namespace {
// path.rfind('/'), by glibc's word-at-a-time memrchr: the names of lock nodes are long, and a
// byte loop over them ran for every create, delete and watch.
size_t last_slash(std::string_view path) {
  const void* at = path.empty() ? nullptr : ::memrchr(path.data(), '/', path.size());
  return at == nullptr ? std::string_view::npos
                       : static_cast<size_t>(static_cast<const char*>(at) - path.data());
}
}  // namespace

std::string_view parent_of(std::string_view path) {
  const size_t slash = last_slash(path);
  return slash == 0 ? path.substr(0, 1) : path.substr(0, slash);
}

std::string_view name_of(std::string_view path) { return path.substr(last_slash(path) + 1); }

// The server's own /zookeeper subtree exists from the start, outside any transaction.
DataTree::DataTree(uint64_t salt) : salt_(salt) {
  Node root;
  root.log = std::make_shared<zk::NameLog>();
  root.stat.num_children = 1;
  Node system;
  system.place_in_parent = root.log->add(child_key("zookeeper"), "zookeeper");
  system.log = std::make_shared<zk::NameLog>();
  system.stat.num_children = 2;
  Node config;
  config.place_in_parent = system.log->add(child_key("config"), "config");
  Node quota;
  quota.place_in_parent = system.log->add(child_key("quota"), "quota");
  nodes_.insert("/", std::move(root));
  nodes_.insert("/zookeeper", std::move(system));
  nodes_.insert("/zookeeper/config", std::move(config));
  nodes_.insert("/zookeeper/quota", std::move(quota));
}

// Eight bytes at a time (std::hash's byte-wise Murmur was 2% of a simulated request).
uint64_t path_hash(std::string_view s) {
  uint64_t h = s.size() * 0x9e3779b97f4a7c15ull;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
  }
  const uint64_t tail = tail_word(s, i);
  h = (h ^ tail) * 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

const Node* DataTree::find(std::string_view path) const { return nodes_.find(path); }

uint64_t DataTree::child_key(std::string_view name) const {
  uint64_t h = zk::fnv1a(name, salt_ ^ 1469598103934665603ull);
  return zk::splitmix64(&h);
}

Error DataTree::prepare_create(std::string_view path, std::string_view data, zk::CreateMode mode,
                               zk::SessionId owner, Txn* txn, bool path_valid,
                               zk::Duration ttl) const {
  const bool seq = zk::is_sequential(mode);
  if (!path_valid && !valid_path(path, seq)) return Error::kBadArguments;
  // EphemeralType.validateTTL: a TTL mode needs 1 ms .. the encoding's maximum.
  if (zk::has_ttl(mode) && (ttl < zk::milliseconds(1) || ttl > zk::kMaxTtl)) {
    return Error::kBadArguments;
  }
  if (path == "/") return Error::kNodeExists;
  const Node* parent = find(parent_of(path));
  if (parent == nullptr) return Error::kNoNode;
  if (zk::is_session_owner(parent->stat.ephemeral_owner)) return Error::kNoChildrenForEphemerals;
  std::string final_path;
  final_path.reserve(path.size() + 11);
  final_path.append(path);
  if (seq) append_sequence(&final_path, parent->next_sequence);
  if (find(final_path) != nullptr) return Error::kNodeExists;
  txn->type = TxnType::kCreate;
  txn->path = std::move(final_path);
  txn->data = std::string(data);
  txn->session = zk::is_ephemeral(mode)  ? owner
                 : zk::is_container(mode) ? zk::kContainerOwner
                 : zk::has_ttl(mode)      ? zk::ttl_owner(ttl)
                                          : zk::SessionId{};
  return Error::kOk;
}

Error DataTree::prepare_delete(std::string_view path, zk::Version version, Txn* txn,
                               bool path_valid) const {
  if (!path_valid && !valid_path(path)) return Error::kBadArguments;
  if (path == "/" || path == "/zookeeper") return Error::kBadArguments;
  const Node* node = find(path);
  if (node == nullptr) return Error::kNoNode;
  if (version != zk::kAnyVersion && version != node->stat.version) return Error::kBadVersion;
  if (node->child_count() != 0) return Error::kNotEmpty;
  txn->type = TxnType::kDelete;
  txn->path = std::string(path);
  return Error::kOk;
}

Error DataTree::prepare_set(std::string_view path, std::string_view data, zk::Version version,
                            Txn* txn, bool path_valid) const {
  if (!path_valid && !valid_path(path)) return Error::kBadArguments;
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
  for (const auto& [path, node] : nodes_) {
    if (node.stat.ephemeral_owner == session) txn->paths.emplace_back(path);
  }
  std::sort(txn->paths.begin(), txn->paths.end());  // the hash map's order must not leak
}

void hash_paths(Txn* txn) {
  txn->path_hash = path_hash(txn->path);
  txn->parent_hash = path_hash(parent_of(txn->path));
  txn->hashed = true;
}

namespace {
// `txn`'s path and its parent's, with their hashes (taken now when the Txn has none).
std::pair<HashedPath, HashedPath> hashed_paths(const Txn& txn) {
  if (!txn.hashed) return {HashedPath(txn.path), HashedPath(parent_of(txn.path))};
  return {HashedPath::with_hash(txn.path, txn.path_hash),
          HashedPath::with_hash(parent_of(txn.path), txn.parent_hash)};
}
}  // namespace

void DataTree::apply(const Txn& txn, std::vector<Trigger>* triggers) {
  switch (txn.type) {
    case TxnType::kCreate: apply_create(txn, triggers); return;
    case TxnType::kDelete: {
      const auto [path, parent] = hashed_paths(txn);
      apply_delete(path, parent, txn.zxid, triggers);
      return;
    }
    case TxnType::kSetData: apply_set(txn, triggers); return;
    case TxnType::kError: return;
    case TxnType::kKillSession:
      for (const std::string& p : txn.paths) {
        const HashedPath path(p);
        if (nodes_.find(path) != nullptr) {
          apply_delete(path, HashedPath(parent_of(p)), txn.zxid, triggers);
        }
      }
      return;
  }
}

void DataTree::apply_create(const Txn& txn, std::vector<Trigger>* triggers) {
  // The owner's count (below) is a look-up among thousands of sessions: its slot is asked for
  // now, so that it comes in while the parent and its name log are read.
  if (zk::is_session_owner(txn.session)) ephemerals_.prefetch(txn.session.value);
  const auto [path, parent_path] = hashed_paths(txn);
  Node* parent = nodes_.find(parent_path);
  LOCKSTEP_ASSERT(parent != nullptr);
  const std::string_view name = name_of(txn.path);
  const uint64_t key = child_key(name);
  if (!parent->log) parent->log = std::make_shared<zk::NameLog>();
  const zk::NameLog::Place place = parent->log->add(key, name);
  parent->stat.cversion++;
  parent->stat.pzxid = txn.zxid;
  parent->stat.num_children++;
  parent->next_sequence = static_cast<int32_t>(static_cast<uint32_t>(parent->next_sequence) + 1u);
  Node node;
  node.place_in_parent = place;
  node.data = txn.data;
  node.stat.czxid = node.stat.mzxid = node.stat.pzxid = txn.zxid;
  node.stat.ctime_ms = node.stat.mtime_ms = txn.time.us / 1000;
  if (zk::is_session_owner(txn.session)) {
    node.stat.ephemeral_owner = txn.session;
    ephemerals_.increment(txn.session.value);
  } else if (txn.session.valid()) {
    node.extended_type = txn.session;  // a container or TTL node: the stat shows 0
    reapable_.insert(txn.path);
  }
  node.stat.data_length = static_cast<int32_t>(txn.data.size());
  nodes_.insert(path, std::move(node));
  triggers->push_back(Trigger{path, zk::EventType::kCreated});
  triggers->push_back(Trigger{parent_path, zk::EventType::kChildrenChanged});
}

void DataTree::apply_delete(const HashedPath& path, const HashedPath& parent_path, zk::Zxid zxid,
                            std::vector<Trigger>* triggers) {
  const std::optional<Node> node = nodes_.extract(path);
  LOCKSTEP_ASSERT(node.has_value());
  LOCKSTEP_ASSERT(node->child_count() == 0);  // invariant 1: no node loses its parent
  if (node->extended_type.valid()) reapable_.erase(std::string(path.path()));
  const zk::SessionId owner = node->stat.ephemeral_owner;
  if (zk::is_session_owner(owner)) ephemerals_.prefetch(owner.value);  // counted down last
  const zk::NameLog::Place place = node->place_in_parent;
  Node* parent = nodes_.find(parent_path);
  LOCKSTEP_ASSERT(parent != nullptr);
  const std::string_view name = name_of(path.path());
  LOCKSTEP_ASSERT(parent->log != nullptr);
  parent->log->remove(place, name);
  parent->stat.cversion++;
  parent->stat.pzxid = zxid;
  parent->stat.num_children--;
  if (zk::is_session_owner(owner)) ephemerals_.decrement(owner.value);
  triggers->push_back(Trigger{path, zk::EventType::kDeleted});
  triggers->push_back(Trigger{parent_path, zk::EventType::kChildrenChanged});
}

void DataTree::apply_set(const Txn& txn, std::vector<Trigger>* triggers) {
  const HashedPath path = hashed_paths(txn).first;
  Node* node = nodes_.find(path);
  LOCKSTEP_ASSERT(node != nullptr);
  node->data = txn.data;
  node->stat.mzxid = txn.zxid;
  node->stat.mtime_ms = txn.time.us / 1000;
  node->stat.version++;
  node->stat.data_length = static_cast<int32_t>(txn.data.size());
  triggers->push_back(Trigger{path, zk::EventType::kDataChanged});
}

uint32_t DataTree::ephemeral_count(zk::SessionId owner) const {
  return ephemerals_.count(owner.value);
}

zk::Names DataTree::children_in_order(const Node& node) const {
  if (!node.log) node.log = std::make_shared<zk::NameLog>();  // no child yet
  return node.log->listing();
}

void DataTree::set_sequence_counter(std::string_view parent, int32_t next) {
  Node* node = nodes_.find(parent);
  if (node != nullptr) node->next_sequence = next;
}

}  // namespace lockstep::sim
