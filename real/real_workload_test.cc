// The property workload (properties/workload.h) and its checkers on Debian's real ZooKeeper
// server: the same recipe code, the same workload and the same judging as in the simulator
// (properties/suite.h judge()), with the faults made by the real harness (a proxy that loses a
// create's reply, forced session expiry of a client cut off at its proxy).
//
// RealEnvironment gives every client its own RealSession (each through its own Proxy) on one
// EventLoop driven by the test's thread. owned_nodes() and the final tree come from a
// TreeInspector (a separate synchronous handle). There are no herd counters on the real server,
// so herd-freedom is not judged here (the simulator judges it).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "properties/claims.h"
#include "properties/scenario.h"
#include "properties/suite.h"
#include "properties/workload.h"
#include "real/event_loop.h"
#include "real/inspect.h"
#include "real/proxy.h"
#include "real/run.h"
#include "real/server.h"
#include "real/session.h"
#include "recipes/registry.h"

namespace lockstep::real {
namespace {

namespace p = ::lockstep::properties;

class RealEnvironment final : public p::Environment {
 public:
  // With `via_proxy`, client c reaches server 1 + (c-1) % size through its own Proxy (for the
  // proxy's faults); without, every client is given every server and may fail over.
  RealEnvironment(EventLoop& loop, Cluster& cluster, uint32_t clients, zk::Duration timeout,
                  bool via_proxy)
      : inspector_(cluster.connect_string()) {
    for (uint32_t c = 1; c <= clients; ++c) {
      std::string error;
      const int server = 1 + static_cast<int>(c - 1) % cluster.size();
      proxies_.push_back(via_proxy ? Proxy::start(cluster.client_port(server), &error) : nullptr);
      EXPECT_TRUE(!via_proxy || proxies_.back()) << error;
      SessionOptions o;
      o.hosts = proxies_.back() ? proxies_.back()->address() : cluster.connect_string();
      o.session_timeout = timeout;
      o.seed = c;
      sessions_.push_back(std::make_unique<RealSession>(loop, o));
    }
  }

  zk::Session& session(uint32_t client) override { return *sessions_.at(client - 1); }
  bool reopen(uint32_t client) override {
    sessions_.at(client - 1)->reopen();
    return true;
  }
  bool owned_nodes(zk::SessionId owner, const std::string& dir,
                   std::vector<std::string>* out) override {
    if (!owner.valid()) return true;
    if (!inspector_.sync_path(dir)) return false;
    const bool ok = inspector_.walk(dir, [&](const std::string& path, const zk::Stat& st) {
      if (st.ephemeral_owner == owner && path != dir) out->push_back(path);
    });
    std::sort(out->begin(), out->end());
    return ok;
  }

  RealSession& real(uint32_t client) { return *sessions_.at(client - 1); }
  Proxy& proxy(uint32_t client) { return *proxies_.at(client - 1); }  // REQUIRES: via_proxy
  TreeInspector& inspector() { return inspector_; }
  bool all_connected() const {
    for (const auto& s : sessions_) {
      if (s->state() != zk::SessionState::kConnected) return false;
    }
    return true;
  }
  // Destroys the sessions (their contexts destroy every coroutine frame) before the proxies.
  void shut_down() {
    for (auto& px : proxies_) {
      if (px) px->set_blackhole(false);
    }
    sessions_.clear();
    proxies_.clear();
  }

 private:
  TreeInspector inspector_;
  std::vector<std::unique_ptr<Proxy>> proxies_;
  std::vector<std::unique_ptr<RealSession>> sessions_;
};

// A fault of the plan: what happens, when (after the workload's start), and how the history
// and the claims name it.
struct RealFault {
  zk::Duration at;
  sim::FaultKind kind;
  uint32_t client;
  std::function<void(RealEnvironment&)> apply;
};

// Runs a fault when its timer fires on the loop, and records it in the history.
class FaultTimer final : public zk::TimerCallback {
 public:
  FaultTimer(RealFault f, RealEnvironment* env, p::History* h, EventLoop* loop)
      : f_(std::move(f)), env_(env), h_(h), loop_(loop) {}
  void on_timer() override {
    p::Event e;
    e.at = loop_->now();
    e.client = f_.client;
    e.session = env_->real(f_.client).id();
    e.type = p::Type::kInfo;
    e.op = p::Op::kFault;
    e.text = std::string(p::fault_name(f_.kind)) + " c" + std::to_string(f_.client);
    h_->add(std::move(e));
    f_.apply(*env_);
  }

 private:
  RealFault f_;
  RealEnvironment* env_;
  p::History* h_;
  EventLoop* loop_;
};

zk::Task<void> make_dirs(zk::Session* session, std::string path, bool* done) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    auto r = co_await session->create(path.substr(0, pos), "", zk::CreateMode::kPersistent);
    EXPECT_TRUE(r.ok() || r.error == zk::Error::kNodeExists) << zk::error_name(r.error);
  }
  *done = true;
}

struct RealOutcome {
  p::Scenario scenario;
  p::RunResult run;
  std::vector<p::Verdict> verdicts;
};

p::Scenario scenario_for(const recipes::RecipeInfo& recipe, const p::Claims& claims,
                         const std::string& lock_path) {
  p::Scenario s;
  s.workload.clients = 3;
  s.workload.rounds = 4;
  s.workload.lock_path = lock_path;
  s.workload.kind = recipe.kind;
  s.workload.max_leases = recipe.kind == recipes::Kind::kSemaphore ? 2 : 1;
  s.workload.timed_percent = 20;
  s.workload.acquire_timeout = zk::milliseconds(200);
  s.workload.reentrant_percent = claims.reentrant ? 30 : 0;
  s.workload.stray_release_percent = 20;
  s.session_timeout = zk::seconds(1);
  s.liveness_bound = zk::seconds(10);
  s.run_limit = zk::seconds(30);
  return s;
}

// Runs the workload of `s` for `recipe` on the real cluster with `faults`, then judges it with
// the simulator's judge(). Herd-freedom is left out (no herd counters on a real server).
RealOutcome run_on_real(Cluster& cluster, const recipes::RecipeInfo& recipe, p::Claims claims,
                        p::Scenario s, std::vector<RealFault> faults, bool via_proxy = true) {
  RealOutcome out;
  claims.properties.erase(p::Property::kHerdFree);
  for (const RealFault& f : faults) {
    sim::Fault sf;
    sf.kind = f.kind;
    sf.client = f.client;
    s.faults.push_back(sf);
  }
  zk::Duration last_fault{};
  for (const RealFault& f : faults) last_fault = std::max(last_fault, f.at);

  EventLoop loop;
  RealEnvironment env(loop, cluster, s.workload.clients, s.session_timeout, via_proxy);
  EXPECT_TRUE(loop.run_until([&] { return env.all_connected(); }, 20000));
  bool made = false;
  run_task(loop, env.session(1).context(), make_dirs(&env.session(1), s.workload.lock_path, &made));
  EXPECT_TRUE(made);

  const zk::Time t0 = loop.now();
  out.run.start = t0;
  out.run.heal_at = t0 + last_fault;
  s.heal_at = zk::Time{} + last_fault;
  auto workload = std::make_unique<p::Workload>(s.workload, recipe.make, &env, &out.run.history);
  std::vector<std::unique_ptr<FaultTimer>> timers;
  for (RealFault& f : faults) {
    const zk::Time at = t0 + f.at;
    timers.push_back(std::make_unique<FaultTimer>(std::move(f), &env, &out.run.history, &loop));
    loop.start_timer(at, timers.back().get());
  }
  workload->start();
  loop.run_until([&] { return workload->finished(); }, s.run_limit.ms());
  out.run.finished = workload->finished();
  // Settle: sessions that died in a fault expire on the server (nothing to wait for without).
  if (!faults.empty()) loop.run_for(s.session_timeout * 2 + zk::milliseconds(400));
  out.run.end = loop.now();

  out.run.tree.lock_dir = s.workload.lock_path;
  std::map<uint64_t, bool> alive;
  env.inspector().sync_path(s.workload.lock_path);
  env.inspector().walk(s.workload.lock_path, [&](const std::string& path, const zk::Stat& st) {
    if (path == s.workload.lock_path) return;
    bool owner_alive = false;
    if (st.ephemeral_owner.valid()) {
      auto it = alive.find(st.ephemeral_owner.value);
      if (it == alive.end()) {
        it = alive.emplace(st.ephemeral_owner.value, cluster.session_alive(st.ephemeral_owner))
                 .first;
      }
      owner_alive = it->second;
    }
    out.run.tree.nodes.push_back(p::NodeSnapshot{path, st.ephemeral_owner, owner_alive, st.czxid});
  });
  out.verdicts = p::judge(recipe, claims, s, out.run);
  out.scenario = s;
  // Coroutine frames go first (they may point into the locks), then the locks.
  env.shut_down();
  workload.reset();
  return out;
}

std::string failures(const RealOutcome& o) {
  std::string out;
  for (const p::Verdict& v : o.verdicts) {
    if (!v.ok) out += std::string(p::to_string(v.property)) + ": " + v.message + "\n";
  }
  return out;
}

bool saw_state(const p::History& h, uint32_t client, zk::SessionState state) {
  for (const p::Event& e : h.events()) {
    if (e.client == client && e.op == p::Op::kSession && e.session_state == state) return true;
  }
  return false;
}

std::string lock_path_for(const std::string& recipe) {
  std::string out = "/lockstep/";
  for (char c : recipe) out += (c == '/') ? '-' : c;
  return out;
}

// Every correct recipe of the registry passes every property it claims (herd-freedom aside)
// on a real standalone server, with timed acquires, stray releases and re-entrant holds.
TEST(RealWorkload, EveryCorrectRecipePassesItsClaimsWithoutFaults) {
  auto r = Cluster::start(ClusterOptions{});
  ASSERT_TRUE(r.cluster) << r.error;
  int judged = 0;
  for (const recipes::RecipeInfo& recipe : recipes::registry()) {
    if (recipe.expected != recipes::Expected::kCorrect) continue;
    const p::Claims claims = p::claims_for(recipe);
    RealOutcome o = run_on_real(*r.cluster, recipe, claims,
                                scenario_for(recipe, claims, lock_path_for(recipe.name)), {});
    EXPECT_TRUE(o.run.finished) << recipe.name << ": the workload did not finish";
    EXPECT_FALSE(o.verdicts.empty()) << recipe.name;
    EXPECT_EQ(failures(o), "") << recipe.name;
    judged += static_cast<int>(o.verdicts.size());
  }
  EXPECT_GT(judged, 0);
}

// The fair mutex keeps its claims on the real server when a waiter's create reply is lost
// (the proxy drops it and cuts the connection) and another client's session is expired
// mid-run (a second handle closes it while the client is cut off).
TEST(RealWorkload, FairMutexSurvivesALostCreateReplyAndAnExpiry) {
  auto r = Cluster::start(ClusterOptions{});
  ASSERT_TRUE(r.cluster) << r.error;
  const recipes::RecipeInfo* recipe = recipes::find_recipe("fair-mutex");
  ASSERT_NE(recipe, nullptr);
  const p::Claims claims = p::claims_for(*recipe);
  p::Scenario s = scenario_for(*recipe, claims, "/lockstep/fair-faults");
  s.workload.rounds = 6;
  Cluster* cluster = r.cluster.get();
  const std::string lock_dir = s.workload.lock_path + "/";
  std::vector<RealFault> faults;
  faults.push_back(
      {zk::Duration{}, sim::FaultKind::kLoseNextReply, 2, [lock_dir](RealEnvironment& env) {
         env.proxy(2).drop_reply_to({kOpCreate, kOpCreate2}, lock_dir);
       }});
  faults.push_back(
      {zk::milliseconds(150), sim::FaultKind::kExpireSession, 3, [cluster](RealEnvironment& env) {
         if (!env.real(3).id().valid()) return;
         EXPECT_GT(expire_session(*cluster, cluster->connect_string(), env.real(3).credentials(),
                                  &env.proxy(3)),
                   0);
       }});
  RealOutcome o = run_on_real(*cluster, *recipe, claims, s, std::move(faults));
  // Both faults bit: client 2 lost its connection (the dropped reply), client 3 was told its
  // session expired.
  EXPECT_TRUE(saw_state(o.run.history, 2, zk::SessionState::kConnecting));
  EXPECT_TRUE(saw_state(o.run.history, 3, zk::SessionState::kExpired));
  EXPECT_TRUE(o.run.finished);
  EXPECT_FALSE(o.verdicts.empty());
  EXPECT_EQ(failures(o), "");
}

// On a 3-server ensemble the fair mutex keeps its claims while the leader is killed and
// restarted mid-run: every client (each given all three servers) is disconnected during the
// re-election and reconnects with its session.
TEST(RealWorkload, FairMutexSurvivesALeaderRestartOnAnEnsemble) {
  ClusterOptions co;
  co.servers = 3;
  auto r = Cluster::start(co);
  ASSERT_TRUE(r.cluster) << r.error;
  ASSERT_TRUE(r.cluster->wait_for_leader(20000));
  const recipes::RecipeInfo* recipe = recipes::find_recipe("fair-mutex");
  ASSERT_NE(recipe, nullptr);
  const p::Claims claims = p::claims_for(*recipe);
  p::Scenario s = scenario_for(*recipe, claims, "/lockstep/fair-ensemble");
  s.workload.rounds = 8;
  s.session_timeout = zk::seconds(2);
  s.servers = 3;
  Cluster* cluster = r.cluster.get();
  auto killed = std::make_shared<int>(0);
  std::vector<RealFault> faults;
  faults.push_back({zk::milliseconds(100), sim::FaultKind::kServerRestart, 1,
                    [cluster, killed](RealEnvironment&) {
                      *killed = cluster->leader();
                      if (*killed != 0) cluster->kill(*killed);
                    }});
  faults.push_back({zk::milliseconds(900), sim::FaultKind::kServerRestart, 1,
                    [cluster, killed](RealEnvironment&) {
                      if (*killed == 0) return;
                      EXPECT_EQ(cluster->restart(*killed), "");
                    }});
  RealOutcome o = run_on_real(*cluster, *recipe, claims, s, std::move(faults), false);
  EXPECT_NE(*killed, 0) << "no leader to kill";
  int disconnects = 0;
  for (const p::Event& e : o.run.history.events()) {
    if (e.op == p::Op::kSession && e.session_state == zk::SessionState::kConnecting) ++disconnects;
  }
  std::printf("[observe] leader restart during the workload: %d client disconnect(s)\n",
              disconnects);
  EXPECT_GT(disconnects, 0) << "the fault did not reach any client";
  EXPECT_TRUE(o.run.finished);
  EXPECT_FALSE(o.verdicts.empty());
  EXPECT_EQ(failures(o), "");
}

// The canary: the broken variant without the client's id in its node name is caught on the
// real server by the property the claims name (liveness) when its create reply is lost: it
// cannot recognise the node it created and waits behind it forever.
TEST(RealWorkload, BrokenNoIdInNameIsCaughtByALostCreateReply) {
  auto r = Cluster::start(ClusterOptions{});
  ASSERT_TRUE(r.cluster) << r.error;
  const recipes::RecipeInfo* recipe = recipes::find_recipe("broken/no-id-in-name");
  ASSERT_NE(recipe, nullptr);
  const p::Claims claims = p::claims_for(*recipe);
  ASSERT_TRUE(claims.must_violate.has_value());
  p::Scenario s = scenario_for(*recipe, claims, "/lockstep/no-id");
  s.run_limit = zk::seconds(4);
  const std::string lock_dir = s.workload.lock_path + "/";
  std::vector<RealFault> faults;
  faults.push_back(
      {zk::Duration{}, sim::FaultKind::kLoseNextReply, 2, [lock_dir](RealEnvironment& env) {
         env.proxy(2).drop_reply_to({kOpCreate, kOpCreate2}, lock_dir);
       }});
  RealOutcome o = run_on_real(*r.cluster, *recipe, claims, s, std::move(faults));
  const p::Verdict* caught = nullptr;
  for (const p::Verdict& v : o.verdicts) {
    if (v.property == *claims.must_violate && !v.ok) caught = &v;
  }
  ASSERT_NE(caught, nullptr) << "not caught by " << p::to_string(*claims.must_violate)
                             << "; verdicts:\n"
                             << failures(o);
  std::printf("[observe] %s caught: %s\n", recipe->name.c_str(), caught->message.c_str());
}

}  // namespace
}  // namespace lockstep::real
