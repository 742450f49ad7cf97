// lockstep recipes, tests only: scripted scenarios of lock clients in the simulator.
//
// A Scenario owns one sim::World and the Parties (a simulated client plus one Lock from the
// registry) that take part. Tests script it: acquire / release / lost-watch calls spawn root
// tasks on the party's client (named "acquire", "release", "lost", so a FaultKind::kCancel can
// find them), faults are injected on the world, and run_for() advances virtual time in short
// slices, checking after each slice how many parties believe they hold (max_holders,
// rw_violation). Nothing here is random beyond the world's seed; the scripts are fixed.
//
// Test code only: it is the one place in recipes/ that sees the simulator. The library itself
// (lockstep_recipes) never includes sim/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "recipes/lock_base.h"
#include "recipes/registry.h"
#include "sim/sim_test_util.h"
#include "sim/world.h"

namespace lockstep::recipes::testing {

struct Outcome {
  bool done = false;
  zk::Error error = zk::Error::kOk;
  Grant grant;
  zk::Time at;
};

struct Party {
  sim::Client* client = nullptr;
  std::unique_ptr<Lock> lock;
  LockOptions options;
  Outcome acquired;  // the last acquire
  Outcome released;  // the last release
  Outcome lost;      // the last lost() watch
  uint32_t grants = 0;

  const std::string& name() const { return client->name(); }
  LockBase& base() const { return dynamic_cast<LockBase&>(*lock); }
  RecipeStats stats() const { return base().stats(); }
  bool holds() const { return lock->holds(); }
};

class Scenario {
 public:
  explicit Scenario(sim::WorldOptions options = {}, std::unique_ptr<sim::Strategy> strategy = {});

  // A new client with a Lock of registry recipe `recipe` on `options.path` (default
  // "/locks/test"); the client name is the lock's client_name.
  Party& join(std::string_view recipe, LockOptions options = {}, sim::ClientOptions client = {});

  // How long a script lets one step (an acquire, a release, a reconnect) settle.
  static constexpr zk::Duration kSettle = zk::milliseconds(200);

  // `n` new parties of `recipe`, all with `options` (see join()).
  std::vector<Party*> join_many(int n, std::string_view recipe, LockOptions options = {});

  // Spawns an acquire (deadline = now + timeout; zk::Duration{-1} means none).
  void acquire(Party& p, zk::Duration timeout = zk::Duration{-1});
  void release(Party& p);
  void watch_lost(Party& p);
  // acquire(p) / release(p), then kSettle passes.
  void acquire_and_settle(Party& p);
  void release_and_settle(Party& p);
  // After 50 ms (connect), each party acquires in turn, 3 ms apart; then kSettle passes.
  void queue_up(const std::vector<Party*>& ps);
  // `first` acquires, kSettle passes, `second` acquires, kSettle passes.
  void one_after_another(Party& first, Party& second);
  // `holder` acquires and kSettle passes; `waiter` acquires with `waiter_timeout`, 10 ms later
  // `last` acquires, and kSettle passes: `last` queues behind `waiter`, which waits for `holder`.
  void holder_and_two_waiters(Party& holder, Party& waiter, Party& last,
                              zk::Duration waiter_timeout = zk::Duration{-1});
  // acquire, hold for `hold`, release: one task ("cycle").
  void cycle(Party& p, zk::Duration hold);

  // Advances virtual time in slices of `slice`, checking the believers after each.
  void run_for(zk::Duration d, zk::Duration slice = zk::microseconds(50));
  void inject(sim::FaultKind kind, uint32_t client, zk::Duration duration = {},
              std::string name = {});  // cancel: the task; foreign-child, delete-node, delete-dir: the path

  int holders() const;
  // The ephemeral nodes below the lock directory, at any depth, as paths relative to it,
  // sorted ([] when it does not exist): the recipes' contender nodes.
  std::vector<std::string> children(std::string_view path = "/locks/test") const;
  zk::Time now() const { return world.now(); }

  sim::World world;
  std::vector<std::unique_ptr<Party>> parties;
  std::vector<std::string> grant_order;  // client names, in the order acquires succeeded
  int max_holders = 0;
  bool rw_violation = false;  // a writer held together with anyone
};

inline LockOptions with_role(Role role) {
  LockOptions o;
  o.role = role;
  return o;
}

// A strategy that loses every request in flight at a connection loss (kAmbiguousOutcome is
// always 0: "did not reach the server"), and is otherwise seeded random.
class LoseInFlight final : public sim::Strategy {
 public:
  explicit LoseInFlight(uint64_t seed) : inner_(sim::make_random_strategy(seed)) {}
  uint32_t choose(sim::ChoiceKind kind, uint32_t n) override {
    if (kind == sim::ChoiceKind::kAmbiguousOutcome) return 0;
    return inner_->choose(kind, n);
  }
  std::string name() const override { return "lose-in-flight"; }

 private:
  std::unique_ptr<sim::Strategy> inner_;
};

using sim::testing::lagging;

// Random, except the choices of a server to connect to: the i-th such choice takes the
// picks[i]-th eligible server (index 0 is the lowest id eligible, the leader when it is), and
// every one after the last pick takes the `then`-th (the first when there are fewer).
class ServerPicks final : public sim::Strategy {
 public:
  ServerPicks(uint64_t seed, std::vector<uint32_t> picks, uint32_t then = 0)
      : inner_(sim::make_random_strategy(seed)), picks_(std::move(picks)), then_(then) {}
  uint32_t choose(sim::ChoiceKind kind, uint32_t n) override {
    if (kind != sim::ChoiceKind::kServer) return inner_->choose(kind, n);
    const uint32_t pick = next_ < picks_.size() ? picks_[next_] : then_;
    ++next_;
    return pick < n ? pick : 0;
  }
  std::string name() const override { return "server-picks"; }

 private:
  std::unique_ptr<sim::Strategy> inner_;
  std::vector<uint32_t> picks_;
  uint32_t then_;
  size_t next_ = 0;
};

// The first `first_connects` server choices go to server 1 (the leader), every later one (the
// reconnects) to the second eligible server (server 2 when it is eligible: a client reconnects
// only to a server at least as new as its last seen zxid). With server 2 lagging, a client that
// lost a reply on the leader reconnects to a server that has not applied that write yet.
inline std::unique_ptr<ServerPicks> reconnect_to_second(uint64_t seed, uint32_t first_connects) {
  return std::make_unique<ServerPicks>(seed, std::vector<uint32_t>(first_connects, 0), 1);
}

// The herd figures of a scenario: notifications per delete of a node under `dir`.
struct HerdFigures {
  uint32_t releases = 0;
  uint64_t notifications = 0;
  uint32_t max_per_release = 0;
  uint64_t requests_caused = 0;
  double per_release() const {
    return releases == 0 ? 0.0 : static_cast<double>(notifications) / releases;
  }
};
HerdFigures herd_under(const sim::World& world, std::string_view dir);

}  // namespace lockstep::recipes::testing
