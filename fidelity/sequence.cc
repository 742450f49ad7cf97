#include "fidelity/sequence.h"

#include <array>

#include "zk/random.h"

namespace lockstep::fidelity {
namespace {

// The path space: a small tree, so that creates, deletes and watches collide often.
constexpr std::array<const char*, 5> kPaths = {"/d", "/d/a", "/d/b", "/d/a/x", "/d/b/y"};
// Prefixes of sequential creates (their parents are /d and /d/a).
constexpr std::array<const char*, 2> kSequentialPrefixes = {"/d/q-", "/d/a/q-"};
constexpr std::array<const char*, 3> kData = {"", "x", "yy"};

std::string pick_path(zk::Prng& rng) {
  if (rng.chance(1, 6)) return "$last";
  return kPaths[rng.below(kPaths.size())];
}

zk::Version pick_version(zk::Prng& rng) {
  if (rng.chance(1, 2)) return zk::kAnyVersion;
  return static_cast<zk::Version>(rng.below(3));
}

}  // namespace

Sequence generate(uint64_t seed, size_t ops) {
  zk::Prng rng = zk::Prng(seed).split("fidelity-sequence");
  Sequence out;
  out.reserve(ops);
  std::array<bool, kSlots> closed{};
  if (ops > 0) {
    // Most sequences start with /d in place (persistent, or someone's ephemeral), so that the
    // rest of the sequence works inside the tree rather than against missing parents.
    Op first;
    first.kind = OpKind::kCreate;
    first.slot = static_cast<int>(rng.below(kSlots));
    first.path = "/d";
    first.mode = rng.chance(3, 4) ? zk::CreateMode::kPersistent : zk::CreateMode::kEphemeral;
    out.push_back(first);
  }
  while (out.size() < ops) {
    Op op;
    op.slot = static_cast<int>(rng.below(kSlots));
    if (closed[op.slot] && rng.chance(2, 3)) {
      op.kind = OpKind::kReopen;
      closed[op.slot] = false;
      out.push_back(op);
      continue;
    }
    const uint64_t r = rng.below(100);
    if (r < 32) {
      op.kind = OpKind::kCreate;
      op.mode = static_cast<zk::CreateMode>(rng.below(4));
      op.path = zk::is_sequential(op.mode) && rng.chance(3, 4)
                    ? kSequentialPrefixes[rng.below(kSequentialPrefixes.size())]
                    : kPaths[rng.below(kPaths.size())];
      op.data = kData[rng.below(kData.size())];
    } else if (r < 46) {
      op.kind = OpKind::kDelete;
      op.path = pick_path(rng);
      op.version = pick_version(rng);
    } else if (r < 55) {
      op.kind = OpKind::kSetData;
      op.path = pick_path(rng);
      op.data = kData[rng.below(kData.size())];
      op.version = pick_version(rng);
    } else if (r < 65) {
      op.kind = OpKind::kGetData;
      op.path = pick_path(rng);
      op.watch = rng.chance(1, 2);
    } else if (r < 77) {
      op.kind = OpKind::kExists;
      op.path = pick_path(rng);
      op.watch = rng.chance(1, 2);
    } else if (r < 91) {
      op.kind = OpKind::kGetChildren;
      op.path = rng.chance(1, 2) ? "/d" : pick_path(rng);
      op.watch = rng.chance(1, 2);
    } else if (r < 96) {
      op.kind = OpKind::kSync;
      op.path = pick_path(rng);
    } else {
      op.kind = OpKind::kClose;
      closed[op.slot] = true;
    }
    out.push_back(op);
  }
  return out;
}

std::string to_string(const Op& op) {
  std::string s = "s" + std::to_string(op.slot) + " ";
  auto version = [&] {
    return op.version == zk::kAnyVersion ? std::string() : " v=" + std::to_string(op.version);
  };
  const std::string watch = op.watch ? " watch" : "";
  switch (op.kind) {
    case OpKind::kCreate:
      return s + "create " + op.path + " '" + op.data + "' " + zk::to_string(op.mode);
    case OpKind::kDelete: return s + "delete " + op.path + version();
    case OpKind::kSetData: return s + "set_data " + op.path + " '" + op.data + "'" + version();
    case OpKind::kGetData: return s + "get_data " + op.path + watch;
    case OpKind::kExists: return s + "exists " + op.path + watch;
    case OpKind::kGetChildren: return s + "get_children " + op.path + watch;
    case OpKind::kSync: return s + "sync " + op.path;
    case OpKind::kClose: return s + "close";
    case OpKind::kReopen: return s + "reopen";
  }
  return s + "?";
}

}  // namespace lockstep::fidelity
