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

// A create, delete or set_data on the path space.
Op mutation(zk::Prng& rng, int slot, uint64_t r) {
  Op op;
  op.slot = slot;
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
  } else {
    op.kind = OpKind::kSetData;
    op.path = pick_path(rng);
    op.data = kData[rng.below(kData.size())];
    op.version = pick_version(rng);
  }
  return op;
}

// A fault on `slot` (alive), drawn from its own stream.
Op fault(zk::Prng& rng, int slot, const GenerateOptions& o) {
  const uint64_t r = rng.below(100);
  if (r < 45) {  // a mutation with a lost message: the ambiguity the recipes must survive
    Op op = mutation(rng, slot, rng.below(55));
    op.lose = rng.chance(1, 2) ? Lose::kReply : Lose::kRequest;
    return op;
  }
  Op op;
  op.slot = slot;
  if (r < 70) {
    op.kind = OpKind::kCut;
  } else if (r < 86) {
    op.kind = OpKind::kExpire;
  } else if (r < 95) {
    op.kind = OpKind::kPartition;
    // Short: inside the ping interval (timeout / 3), nobody notices. Medium: the client gives
    // the connection up (2/3 of the timeout without a reply) and its reconnect attempt gets
    // through when the network heals, before the server would expire the session (after the
    // timeout). Long: the server expires the session well before the partition heals.
    const uint64_t which = rng.below(5);
    op.duration = which < 2   ? o.session_timeout / 8
                  : which < 4 ? o.session_timeout * 4 / 5
                              : o.session_timeout * 2;
  } else {
    op.kind = OpKind::kRestart;
    // Standalone: the server. Ensemble: a follower (server 2 serves slot 1, server 3 no one);
    // a leader restart is an election, whose timing the comparison does not model.
    op.server = o.servers == 1 ? 1 : 2 + static_cast<int>(rng.below(2));
  }
  return op;
}

}  // namespace

Sequence generate(uint64_t seed, size_t ops, const GenerateOptions& options) {
  zk::Prng rng = zk::Prng(seed).split("fidelity-sequence");
  zk::Prng frng = zk::Prng(seed).split("fidelity-faults");
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
    if (options.faults && frng.chance(1, 14)) {
      const int slot = static_cast<int>(frng.below(kSlots));
      if (!closed[slot]) {
        out.push_back(fault(frng, slot, options));
        if (out.back().kind == OpKind::kExpire) closed[slot] = true;
        if (out.back().kind == OpKind::kPartition &&
            out.back().duration > options.session_timeout) {
          closed[slot] = true;  // expired by the partition
        }
        continue;
      }
    }
    Op op;
    op.slot = static_cast<int>(rng.below(kSlots));
    if (closed[op.slot] && rng.chance(2, 3)) {
      op.kind = OpKind::kReopen;
      closed[op.slot] = false;
      out.push_back(op);
      continue;
    }
    const uint64_t r = rng.below(100);
    if (r < 55) {
      op = mutation(rng, op.slot, r);
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
  const std::string lose = op.lose == Lose::kReply     ? " !lost-reply"
                           : op.lose == Lose::kRequest ? " !lost-request"
                                                       : "";
  switch (op.kind) {
    case OpKind::kCreate:
      return s + "create " + op.path + " '" + op.data + "' " + zk::to_string(op.mode) + lose;
    case OpKind::kDelete: return s + "delete " + op.path + version() + lose;
    case OpKind::kSetData:
      return s + "set_data " + op.path + " '" + op.data + "'" + version() + lose;
    case OpKind::kGetData: return s + "get_data " + op.path + watch;
    case OpKind::kExists: return s + "exists " + op.path + watch;
    case OpKind::kGetChildren: return s + "get_children " + op.path + watch;
    case OpKind::kSync: return s + "sync " + op.path;
    case OpKind::kClose: return s + "close";
    case OpKind::kReopen: return s + "reopen";
    case OpKind::kCut: return s + "cut";
    case OpKind::kExpire: return s + "expire";
    case OpKind::kPartition: return s + "partition " + zk::to_string(op.duration);
    case OpKind::kRestart: return "restart server " + std::to_string(op.server);
  }
  return s + "?";
}

}  // namespace lockstep::fidelity
