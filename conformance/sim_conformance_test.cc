// The conformance suite on the simulator: a Backend over sim::World, instantiated for a
// standalone server under two seeds and for a 3-server ensemble.
//
// SimBackend drives the World on the test's thread (the simulator is single-threaded): open()
// adds a client and steps until it is connected, run() spawns the body on the session's context
// and steps until it finishes or `limit` of virtual time passed, expire() injects
// FaultKind::kExpireSession and steps until the server no longer holds the session. Once a body
// timed out the backend refuses to drive the world again, so the stale body is never resumed
// (Backend invariant 2); the World destroys its frame. SimConformanceBackend checks that the
// backend's own steps keep a run deterministic (Backend invariant 5).
#include <cassert>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "conformance/backend.h"
#include "conformance/suite.h"
#include "sim/world.h"
#include "zk/session.h"

namespace lockstep::conformance {
namespace {

// How long (virtual time) the backend's own waits may take: connecting, expiring, creating a
// root. Far beyond what a faithful simulator needs.
constexpr zk::Duration kHarnessLimit = zk::seconds(30);

class SimBackend final : public Backend {
 public:
  SimBackend(std::string name, sim::WorldOptions options)
      : name_(std::move(name)), world_(options) {}

  std::string name() const override { return name_; }

  bool supports(Feature f) const override {
    switch (f) {
      case Feature::kSetSequenceCounter: return true;
      case Feature::kWatchEventZxid: return true;
    }
    return false;
  }

  zk::Session& open(zk::Duration session_timeout) override {
    sim::ClientOptions options;
    options.session_timeout = session_timeout;
    sim::Client& c = world_.add_client(options);
    const bool connected = drive_until([&c] { return c.state() == zk::SessionState::kConnected; });
    EXPECT_TRUE(connected) << name_ << ": client " << c.name() << " did not connect (state "
                           << zk::to_string(c.state()) << ")";
    return c;
  }

  bool run(zk::Session& on, zk::Task<void> body, zk::Duration limit) override {
    if (broken_) {
      ADD_FAILURE() << name_ << ": an earlier body timed out; the world is not driven again";
      return false;
    }
    zk::TaskHandle task = on.context().spawn(std::move(body), "conformance-body");
    const zk::Time deadline = world_.now() + limit;
    while (!task.done()) {
      if (world_.now() >= deadline || !world_.step()) {
        broken_ = true;  // never resume the body again (invariant 2)
        return false;
      }
    }
    return true;
  }

  void idle(zk::Duration d) override {
    if (!broken_) world_.run_for(d);
  }

  void expire(zk::Session& victim) override {
    sim::Client& c = as_client(victim);
    const zk::SessionId id = c.id();
    sim::Fault f;
    f.kind = sim::FaultKind::kExpireSession;
    f.at = world_.now();
    f.client = c.index();
    world_.inject(f);
    const bool expired = drive_until([&] { return !world_.session_alive(id); });
    EXPECT_TRUE(expired) << name_ << ": the server still holds session of " << c.name()
                         << " after kExpireSession";
  }

  zk::Error close(zk::Session& s) override {
    zk::Error result = zk::Error::kSystemError;
    if (!run(s, close_body(&s, &result), kHarnessLimit)) {
      ADD_FAILURE() << name_ << ": close did not complete";
    }
    return result;
  }

  std::string fresh_root() override {
    const std::string path = "/conformance-" + std::to_string(++roots_);
    sim::Fault f;
    f.kind = sim::FaultKind::kForeignChild;
    f.at = world_.now();
    f.path = path;
    world_.inject(f);
    const bool made = drive_until([&] { return world_.node(path).has_value(); });
    EXPECT_TRUE(made) << name_ << ": could not create " << path;
    return path;
  }

  void set_sequence_counter(std::string_view parent, int32_t next) override {
    world_.set_sequence_counter(parent, next);
  }

  // The hash of every event so far (EventLog::hash), for determinism checks.
  uint64_t event_hash() { return world_.log().hash(); }

  bool supports_partition() const override { return true; }
  void partition(zk::Session& s, zk::Duration d) override {
    sim::Fault f;
    f.kind = sim::FaultKind::kPartition;
    f.at = world_.now();
    f.client = as_client(s).index();
    f.duration = d;
    world_.inject(f);
  }

 private:
  static zk::Task<void> close_body(zk::Session* s, zk::Error* out) {
    zk::Status st = co_await s->close();
    *out = st.error;
  }

  static sim::Client& as_client(zk::Session& s) {
    auto* c = dynamic_cast<sim::Client*>(&s);
    assert(c != nullptr && "a session of another backend");
    return *c;
  }

  // Steps the world until `done()` or kHarnessLimit of virtual time; false on the limit.
  template <class Pred>
  bool drive_until(Pred done) {
    if (broken_) return false;
    const zk::Time deadline = world_.now() + kHarnessLimit;
    while (!done()) {
      if (world_.now() >= deadline || !world_.step()) return false;
    }
    return true;
  }

  std::string name_;
  sim::World world_;
  bool broken_ = false;
  int roots_ = 0;
};

// A small mixed workload through the Backend: two sessions, sequential creates, a watch, a
// forced expiry and its discovery.
zk::Task<void> mixed_body(zk::Session* a, zk::Session* b, std::string root) {
  zk::Watch w;
  auto e = co_await b->create(root + "/e", "", zk::CreateMode::kEphemeral);
  EXPECT_TRUE(e.ok());
  EXPECT_TRUE((co_await a->exists(root + "/e", &w)).ok());
  for (int i = 0; i < 5; ++i) {
    auto r = co_await (i % 2 == 0 ? a : b)
                 ->create(root + "/s-", "", zk::CreateMode::kPersistentSequential);
    EXPECT_TRUE(r.ok());
  }
  auto kids = co_await a->get_children(root);
  EXPECT_TRUE(kids.ok());
}

uint64_t run_mixed(uint64_t seed, uint32_t servers) {
  sim::WorldOptions options;
  options.seed = seed;
  options.servers = servers;
  SimBackend backend("determinism", options);
  zk::Session& a = backend.open(zk::seconds(2));
  zk::Session& b = backend.open(zk::seconds(2));
  const std::string root = backend.fresh_root();
  EXPECT_TRUE(backend.run(a, mixed_body(&a, &b, root), zk::seconds(30)));
  backend.expire(b);
  backend.idle(zk::seconds(3));
  return backend.event_hash();
}

TEST(SimConformanceBackend, SameSeedGivesTheSameEventLog) {
  // The backend's own steps (open, fresh_root, run, expire, idle) add no nondeterminism: the
  // same seed twice gives the same event-log hash, and another seed a different one.
  for (uint32_t servers : {1u, 3u}) {
    const uint64_t first = run_mixed(7, servers);
    EXPECT_EQ(first, run_mixed(7, servers)) << servers << " server(s)";
    EXPECT_NE(first, run_mixed(8, servers)) << servers << " server(s)";
  }
}

BackendFactory sim_factory(std::string name, uint64_t seed, uint32_t servers) {
  return BackendFactory{name, [name, seed, servers] {
                          sim::WorldOptions options;
                          options.seed = seed;
                          options.servers = servers;
                          return std::unique_ptr<Backend>(new SimBackend(name, options));
                        }};
}

// The fixed CI set, plus LOCKSTEP_CONFORMANCE_SEEDS=N more seeds (alternating standalone and
// ensemble) when that variable is set: more seeds are one environment variable away.
std::vector<BackendFactory> sim_factories() {
  std::vector<BackendFactory> out = {sim_factory("standalone", 1, 1),
                                     sim_factory("standalone_seed2", 2, 1),
                                     sim_factory("ensemble", 3, 3)};
  const char* extra = std::getenv("LOCKSTEP_CONFORMANCE_SEEDS");
  const uint64_t n = extra != nullptr ? std::strtoull(extra, nullptr, 10) : 0;
  for (uint64_t seed = 100; seed < 100 + n; ++seed) {
    const uint32_t servers = seed % 2 == 0 ? 1 : 3;
    out.push_back(
        sim_factory("seed" + std::to_string(seed) + "_" + std::to_string(servers), seed, servers));
  }
  return out;
}

}  // namespace
}  // namespace lockstep::conformance

LOCKSTEP_INSTANTIATE_CONFORMANCE_IN(Sim, ::lockstep::conformance::sim_factories());
