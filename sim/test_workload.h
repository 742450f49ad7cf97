// lockstep simulator tests: a fair-lock-like workload written against the contract only, used
// by the determinism tests and the local speed measurement (sim_perf). It is not a recipe:
// recipes live in recipes/, and sim/ must not depend on them.
//
// Each round: create an ephemeral-sequential child of /lock, read the children, hold when
// lowest, else watch the predecessor and re-check after every wake-up; hold briefly; delete.
// Any error abandons the round (deleting the node when possible); waits are bounded, so the
// loop finishes under faults.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "zk/session.h"

namespace lockstep::sim::testing {

struct LoopStats {
  int acquired = 0;
  int errors = 0;
};

// Returns true when this session's node is the lowest (holds the lock).
inline zk::Task<int> check_turn(zk::Session* s, std::string me) {
  // 1 = holds, 0 = woke up (re-check), -1 = give up the round.
  auto kids = co_await s->get_children("/lock");
  if (!kids.ok()) co_return -1;
  std::vector<std::string> names = kids.value.names.vector();
  std::sort(names.begin(), names.end());
  auto it = std::find(names.begin(), names.end(), me);
  if (it == names.end()) co_return -1;
  if (it == names.begin()) co_return 1;
  zk::Watch watch;
  auto ex = co_await s->exists("/lock/" + *(it - 1), &watch);
  if (ex.error == zk::Error::kNoNode) co_return 0;
  if (!ex.ok()) co_return -1;
  (void)co_await watch.wait(s->context().now() + zk::seconds(5));
  co_return 0;
}

inline zk::Task<void> fair_lock_rounds(zk::Session* s, int rounds, zk::Duration hold,
                                       LoopStats* stats) {
  for (int i = 0; i < rounds; ++i) {
    if (s->state() == zk::SessionState::kExpired || s->state() == zk::SessionState::kClosed) {
      co_return;
    }
    auto c = co_await s->create("/lock/n-", "", zk::CreateMode::kEphemeralSequential);
    if (!c.ok()) {
      ++stats->errors;
      continue;
    }
    const std::string me = c.value.path.substr(6);
    int turn = 0;
    for (int tries = 0; tries < 1000 && turn == 0; ++tries) turn = co_await check_turn(s, me);
    if (turn == 1) {
      ++stats->acquired;
      (void)co_await s->context().sleep_for(hold);  // lockstep-allow: zk::Context virtual time
    } else {
      ++stats->errors;
    }
    (void)co_await s->remove(c.value.path);
  }
}

inline zk::Task<void> make_lock_dir(zk::Session* s) {
  (void)co_await s->create("/lock", "", zk::CreateMode::kPersistent);
}

}  // namespace lockstep::sim::testing
