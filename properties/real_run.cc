#include "properties/real_run.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "real/event_loop.h"
#include "real/inspect.h"
#include "real/session.h"

namespace lockstep::properties {
namespace {

class RealEnvironment final : public Environment {
 public:
  RealEnvironment(std::vector<std::unique_ptr<real::RealSession>>* sessions,
                  real::TreeInspector* inspector)
      : sessions_(sessions), inspector_(inspector) {}
  zk::Session& session(uint32_t client) override { return *(*sessions_)[client - 1]; }
  bool reopen(uint32_t client) override {
    (*sessions_)[client - 1]->reopen();
    return true;
  }
  bool owned_nodes(zk::SessionId owner, const std::string& dir,
                   std::vector<std::string>* out) override {
    if (!owner.valid() || !inspector_->connected()) return false;
    const bool complete = inspector_->walk(dir, [&](const std::string& path, const zk::Stat& st) {
      if (path != dir && st.ephemeral_owner == owner) out->push_back(path);
    });
    std::sort(out->begin(), out->end());
    return complete;
  }

 private:
  std::vector<std::unique_ptr<real::RealSession>>* sessions_;
  real::TreeInspector* inspector_;
};

}  // namespace

RunResult run_on_real(const recipes::LockFactory& factory, const WorkloadOptions& workload,
                      const RealRunOptions& o) {
  RunResult out;
  real::EventLoop loop;
  std::vector<std::unique_ptr<real::RealSession>> sessions;
  for (uint32_t c = 1; c <= workload.clients; ++c) {
    real::SessionOptions so;
    so.hosts = o.hosts;
    so.session_timeout = o.session_timeout;
    so.seed = c;
    sessions.push_back(std::make_unique<real::RealSession>(loop, so));
  }
  real::TreeInspector inspector(o.hosts);
  RealEnvironment env(&sessions, &inspector);
  auto run = std::make_unique<Workload>(workload, factory, &env, &out.history);
  out.start = loop.now();
  out.heal_at = out.start;
  run->start();
  out.finished = loop.run_until([&] { return run->finished(); }, o.limit_ms);
  // Let cancelled watcher tasks resume and finish before their sessions go.
  loop.run_for(zk::milliseconds(100));
  out.end = loop.now();
  out.tree.lock_dir = workload.lock_path;
  inspector.sync_path(workload.lock_path);
  inspector.walk(workload.lock_path, [&](const std::string& path, const zk::Stat& st) {
    if (path == workload.lock_path) return;
    out.tree.nodes.push_back(
        NodeSnapshot{path, st.ephemeral_owner, st.ephemeral_owner.valid(), st.czxid});
  });
  // Sessions (and their contexts, with any frame still suspended) go first, then the locks.
  sessions.clear();
  run.reset();
  return out;
}

}  // namespace lockstep::properties
