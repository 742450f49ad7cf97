// The conformance suite on Debian's real ZooKeeper server: a Backend over RealSession,
// instantiated for a standalone server and for a 3-server ensemble.
//
// RealBackend drives one EventLoop on the test's thread: every session of the backend shares
// it, so a body spawned on one session may await another session's futures (Backend driving
// model). The server is shared by all tests of the process (started at first use, stopped at
// exit); each test works under its own fresh_root().
//
// Each session reaches its server through its own in-process Proxy, so that expire() can cut
// the victim's connection and keep it away while a second handle on the victim's id and
// password takes the session over and closes it (Backend invariant 3): like a timeout expiry,
// the victim is disconnected when its ephemerals are deleted, so its own watches never reach
// it. The proxy lets traffic through again right after, and the victim learns kExpired when it
// reconnects during a later run() (after a kConnecting).
//
// Once a body timed out the backend refuses to drive the loop again, so the stale body is
// never resumed (invariant 2); its frame is destroyed with its session's context.
#include <gtest/gtest.h>

#include <cassert>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "conformance/backend.h"
#include "conformance/suite.h"
#include "real/event_loop.h"
#include "real/proxy.h"
#include "real/server.h"
#include "real/session.h"
#include "zk/session.h"

namespace lockstep::conformance {
namespace {

using real::Cluster;
using real::EventLoop;
using real::Proxy;
using real::RealSession;

// How long (wall time) the backend's own waits may take: connecting, expiring, making a root.
constexpr int64_t kHarnessLimitMs = 20000;
constexpr int kSetupAttempts = 5;  // fresh_root's tries of its create (see there)

// One cluster per size for the whole process, started at first use.
Cluster* shared_cluster(int servers) {
  static std::unique_ptr<Cluster> clusters[4];
  static std::string errors[4];
  assert(servers >= 1 && servers <= 3);
  if (!clusters[servers] && errors[servers].empty()) {
    real::ClusterOptions o;
    o.servers = servers;
    Cluster::StartResult r = Cluster::start(o);
    clusters[servers] = std::move(r.cluster);
    errors[servers] = r.error;
  }
  EXPECT_TRUE(clusters[servers]) << errors[servers];
  return clusters[servers].get();
}

int next_root_number() {
  static int n = 0;
  return ++n;
}

class RealBackend final : public Backend {
 public:
  RealBackend(std::string name, Cluster* cluster) : name_(std::move(name)), cluster_(cluster) {}

  ~RealBackend() override {
    // Let every closing handle reach the server, then close sessions before their proxies.
    for (auto& e : entries_) {
      if (e.proxy) e.proxy->set_blackhole(false);
    }
    admin_.reset();
    for (auto& e : entries_) e.session.reset();
    entries_.clear();
  }

  std::string name() const override { return name_; }

  bool supports(Feature f) const override {
    switch (f) {
      case Feature::kSetSequenceCounter: return false;  // no way to jump a real counter
      case Feature::kWatchEventZxid: return false;      // the C client's watcher gets no zxid
    }
    return false;
  }

  zk::Session& open(zk::Duration session_timeout) override {
    Entry e;
    const int server = 1 + static_cast<int>(entries_.size()) % cluster_->size();
    std::string error;
    e.proxy = Proxy::start(cluster_->client_port(server), &error);
    EXPECT_TRUE(e.proxy) << error;
    real::SessionOptions o;
    o.hosts = e.proxy ? e.proxy->address() : cluster_->address(server);
    o.session_timeout = session_timeout;
    o.seed = entries_.size() + 1;
    e.session = std::make_unique<RealSession>(loop_, o);
    RealSession* s = e.session.get();
    entries_.push_back(std::move(e));
    const bool connected = drive_until([s] { return s->state() == zk::SessionState::kConnected; });
    EXPECT_TRUE(connected) << name_ << ": session did not connect (state "
                           << zk::to_string(s->state()) << ")";
    return *s;
  }

  bool run(zk::Session& on, zk::Task<void> body, zk::Duration limit) override {
    if (broken_) {
      ADD_FAILURE() << name_ << ": an earlier body timed out; the loop is not driven again";
      return false;
    }
    zk::TaskHandle task = on.context().spawn(std::move(body), "conformance-body");
    if (!loop_.run_until([&task] { return task.done(); }, limit.ms())) {
      broken_ = true;  // never resume the body again (invariant 2)
      return false;
    }
    return true;
  }

  void idle(zk::Duration d) override {
    if (!broken_) loop_.run_for(d);
  }

  void expire(zk::Session& victim) override {
    Entry& e = entry_of(victim);
    const real::Credentials creds = e.session->credentials();
    // The victim is cut off and held back while the session is taken over and closed (see
    // expire_session): like a timeout expiry, its own watches never reach it. Without that, on
    // an ensemble the victim's server may keep its connection (and watches) when the takeover
    // happens on another server, and the closeSession fires the victim's own watches.
    const int tries =
        real::expire_session(*cluster_, cluster_->connect_string(), creds, e.proxy.get());
    EXPECT_GT(tries, 0) << name_ << ": the server still holds the victim's session";
  }

  zk::Error close(zk::Session& s) override {
    zk::Error result = zk::Error::kSystemError;
    if (!run(s, close_body(&s, &result), zk::milliseconds(kHarnessLimitMs))) {
      ADD_FAILURE() << name_ << ": close did not complete";
    }
    return result;
  }

  // The harness's own setup, not something a test judges: on a busy machine (the CI runs other
  // tests beside these) the admin session can lose its connection (the servers allow sessions
  // of at most 4 s: tickTime=200), and the create then fails with ZOPERATIONTIMEOUT or
  // ZCONNECTIONLOSS. Such a create is tried again once the session is back (a new one if it
  // expired); a retried create that finds the node made it the time before.
  std::string fresh_root() override {
    const std::string path = "/conformance-" + std::to_string(next_root_number());
    zk::Error result = zk::Error::kSystemError;
    bool done = false;
    for (int attempt = 0; attempt < kSetupAttempts && !broken_; ++attempt) {
      if (admin_ && (admin_->state() == zk::SessionState::kExpired ||
                     admin_->state() == zk::SessionState::kClosed)) {
        admin_.reset();
      }
      if (!admin_) {
        real::SessionOptions o;
        o.hosts = cluster_->connect_string();
        admin_ = std::make_unique<RealSession>(loop_, o);
      }
      done = loop_.run_until([this] { return admin_->state() == zk::SessionState::kConnected; },
                             kHarnessLimitMs) &&
             run(*admin_, create_body(admin_.get(), path, attempt > 0, &result),
                 zk::milliseconds(kHarnessLimitMs));
      if (!done || (result != zk::Error::kOperationTimeout &&
                    result != zk::Error::kConnectionLoss)) {
        break;
      }
    }
    EXPECT_TRUE(done && result == zk::Error::kOk)
        << name_ << ": could not create " << path << ": " << zk::error_name(result);
    return path;
  }

  void set_sequence_counter(std::string_view, int32_t) override {
    ADD_FAILURE() << "set_sequence_counter is not supported on the real server";
  }

  bool supports_partition() const override { return true; }

  // The session's proxy black-holes everything (no connection is closed) until a timer on the
  // loop lifts it.
  void partition(zk::Session& s, zk::Duration d) override {
    Entry& e = entry_of(s);
    if (!e.proxy) {
      ADD_FAILURE() << name_ << ": the session has no proxy to partition";
      return;
    }
    e.proxy->set_blackhole(true);
    healers_.push_back(std::make_unique<Healer>(e.proxy.get()));
    loop_.start_timer(loop_.now() + d, healers_.back().get());
  }

 private:
  struct Entry {
    std::unique_ptr<Proxy> proxy;
    std::unique_ptr<RealSession> session;
  };

  // Ends one partition when its timer fires on the loop.
  class Healer final : public zk::TimerCallback {
   public:
    explicit Healer(Proxy* proxy) : proxy_(proxy) {}
    void on_timer() override { proxy_->set_blackhole(false); }

   private:
    Proxy* proxy_;
  };

  static zk::Task<void> close_body(zk::Session* s, zk::Error* out) {
    zk::Status st = co_await s->close();
    *out = st.error;
  }

  // `again`: an earlier attempt may have made the node (its reply lost): kNodeExists is success.
  static zk::Task<void> create_body(zk::Session* s, std::string path, bool again, zk::Error* out) {
    auto r = co_await s->create(path, "", zk::CreateMode::kPersistent);
    *out = again && r.error == zk::Error::kNodeExists ? zk::Error::kOk : r.error;
    if (*out == zk::Error::kOk) {
      // Every session of the backend may read it at once, even on a lagging follower.
      zk::Status st = co_await s->sync(path);
      if (!st.ok()) *out = st.error;
    }
  }

  Entry& entry_of(zk::Session& s) {
    for (auto& e : entries_) {
      if (e.session.get() == &s) return e;
    }
    assert(false && "a session of another backend");
    return entries_.front();
  }

  template <class Pred>
  bool drive_until(Pred done) {
    if (broken_) return false;
    return loop_.run_until(done, kHarnessLimitMs);
  }

  std::string name_;
  Cluster* cluster_;
  EventLoop loop_;  // owner: the test's thread
  std::vector<Entry> entries_;
  std::unique_ptr<RealSession> admin_;
  std::vector<std::unique_ptr<Healer>> healers_;  // their timers may still be pending
  bool broken_ = false;
};

BackendFactory real_factory(std::string name, int servers) {
  return BackendFactory{name, [name, servers]() -> std::unique_ptr<Backend> {
                          Cluster* c = shared_cluster(servers);
                          if (c == nullptr) return nullptr;
                          return std::make_unique<RealBackend>(name, c);
                        }};
}

}  // namespace
}  // namespace lockstep::conformance

LOCKSTEP_INSTANTIATE_CONFORMANCE(Real, ::lockstep::conformance::real_factory("real_standalone", 1),
                                 ::lockstep::conformance::real_factory("real_ensemble", 3));
