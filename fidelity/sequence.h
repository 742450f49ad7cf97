// lockstep fidelity: random operation sequences for the differential tester (issue 18).
//
// A Sequence is a list of ZooKeeper operations over a small path space, issued by one of two
// session slots (0 and 1), generated from one seed with the project's own PRNG (zk/random.h),
// so the same seed gives the same sequence on every platform. Paths are relative to a root the
// runner chooses per sequence ("/d" means "<root>/d"); the special path "$last" names the last
// sequential node this run created (or "/d/none" before there is one), so later operations can
// touch nodes whose names only the server knows.
//
// Generator contract:
//   1. Deterministic: generate(seed, n) depends only on (seed, n).
//   2. Exactly n operations; the first creates /d (persistent, sometimes ephemeral).
//   3. kReopen is generated only for a slot that was closed by an earlier kClose and not yet
//      reopened (reopening a live handle differs between backends by design: the simulator
//      abandons the session, the C client closes it), and a closed slot is reopened soon.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zk/types.h"

namespace lockstep::fidelity {

enum class OpKind : uint8_t {
  kCreate,
  kDelete,
  kSetData,
  kGetData,
  kExists,
  kGetChildren,
  kSync,
  kClose,
  kReopen,
};

struct Op {
  OpKind kind = OpKind::kExists;
  int slot = 0;                                       // which session issues it: 0 or 1
  std::string path;                                   // relative to the sequence's root, or "$last"
  std::string data;                                   // create, set_data
  zk::CreateMode mode = zk::CreateMode::kPersistent;  // create
  zk::Version version = zk::kAnyVersion;              // delete, set_data
  bool watch = false;                                 // get_data, exists, get_children
};

using Sequence = std::vector<Op>;

inline constexpr int kSlots = 2;

Sequence generate(uint64_t seed, size_t ops);

// "s1 create /d/a 'x' ephemeral", "s0 delete $last v=0", "s1 exists /d watch", ...
std::string to_string(const Op& op);

}  // namespace lockstep::fidelity
