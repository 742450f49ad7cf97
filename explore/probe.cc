#include "explore/probe.h"

#include <memory>
#include <string_view>
#include <utility>

namespace lockstep::explore {
namespace {

// Applies fn to every counter of a RecipeStats pair, in declaration order.
template <class Fn>
void each_counter(recipes::RecipeStats& a, const recipes::RecipeStats& b, Fn&& fn) {
  fn(a.attempts, b.attempts);
  fn(a.creates, b.creates);
  fn(a.ambiguous_creates, b.ambiguous_creates);
  fn(a.adopted, b.adopted);
  fn(a.relists, b.relists);
  fn(a.watches_armed, b.watches_armed);
  fn(a.predecessor_gone, b.predecessor_gone);
  fn(a.wakeups, b.wakeups);
  fn(a.session_wakeups, b.session_wakeups);
  fn(a.restarts, b.restarts);
  fn(a.cleanups, b.cleanups);
  fn(a.remove_retries, b.remove_retries);
  fn(a.monitor_transitions, b.monitor_transitions);
}

// The workload names client c "c<c>" (properties/workload.cc); 0 when the name is not that.
uint32_t client_index(const std::string& name) {
  if (name.size() < 2 || name[0] != 'c') return 0;
  uint32_t v = 0;
  for (size_t i = 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || v > 100000) return 0;
    v = v * 10 + static_cast<uint32_t>(name[i] - '0');
  }
  return v;
}

// Forwards the Lock interface to the recipe's Lock and keeps the probe informed.
class ProbedLock final : public recipes::Lock {
 public:
  ProbedLock(std::unique_ptr<recipes::Lock> inner, RunProbe* probe, uint32_t client,
             zk::Session* session)
      : inner_(std::move(inner)), probe_(probe), client_(client) {
    probe_->attach(client_, RunProbe::Live{dynamic_cast<const recipes::LockBase*>(inner_.get()),
                                           inner_.get(), session});
  }
  ~ProbedLock() override { probe_->detach(client_, inner_.get()); }

  zk::Task<zk::Result<recipes::Grant>> acquire(zk::Time deadline) override {
    return inner_->acquire(deadline);
  }
  zk::Task<zk::Status> release() override { return inner_->release(); }
  recipes::LockState state() const override { return inner_->state(); }
  zk::Task<zk::Status> lost() override { return inner_->lost(); }
  std::string name() const override { return inner_->name(); }

 private:
  std::unique_ptr<recipes::Lock> inner_;
  RunProbe* probe_;
  uint32_t client_;
};

}  // namespace

void add_stats(recipes::RecipeStats* a, const recipes::RecipeStats& b) {
  each_counter(*a, b, [](uint64_t& x, uint64_t y) { x += y; });
}

recipes::LockFactory RunProbe::wrap(recipes::LockFactory inner) {
  return
      [this, inner = std::move(inner)](
          zk::Session& session, const recipes::LockOptions& o) -> std::unique_ptr<recipes::Lock> {
        return std::make_unique<ProbedLock>(inner(session, o), this, client_index(o.client_name),
                                            &session);
      };
}

void RunProbe::attach(uint32_t client, Live live) {
  totals_[client];  // every client that ever had a lock appears in stats()
  live_[client] = live;
}

void RunProbe::detach(uint32_t client, const recipes::Lock* lock) {
  const auto* base = dynamic_cast<const recipes::LockBase*>(lock);
  if (base != nullptr) add_stats(&totals_[client], base->stats());
  // Only the recipe's own members: state() would ask the session, which may be gone by now.
  finals_[client] = Final{base != nullptr ? base->held_node() : std::string()};
  // A client's older Lock (replaced after a new session) is no longer the live one.
  auto it = live_.find(client);
  if (it != live_.end() && it->second.any == lock) live_.erase(it);
}

uint64_t RunProbe::final_hash() const {
  Hasher h;
  for (const auto& [client, f] : finals_) {
    h.word(client);
    h.text(f.held);
  }
  for (const auto& [client, totals] : totals_) {
    h.word(client);
    recipes::RecipeStats s = totals;
    each_counter(s, s, [&](uint64_t& x, uint64_t) { h.word(x); });
  }
  return h.value();
}

uint64_t RunProbe::state_hash() const {
  Hasher h;
  bool timed = false;
  for (const auto& [client, live] : live_) {
    if (!timed && live.session != nullptr) {
      // Every client's context runs on the world's one clock.
      h.word(static_cast<uint64_t>(live.session->context().now().us));
      timed = true;
    }
    h.word(client);
    if (live.session != nullptr) {
      h.word(live.session->id().value);
      h.word(static_cast<uint64_t>(live.session->state()));
    }
    h.word(static_cast<uint64_t>(live.any->state()));
    if (live.lock != nullptr) {
      h.text(live.lock->held_node());
      recipes::RecipeStats s = live.lock->stats();
      each_counter(s, s, [&](uint64_t& x, uint64_t) { h.word(x); });
    }
  }
  return h.value();
}

}  // namespace lockstep::explore
