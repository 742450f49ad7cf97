#include "properties/herd.h"

#include <algorithm>
#include <memory>
#include <string_view>
#include <utility>

#include "sim/world.h"
#include "zk/task.h"

namespace lockstep::properties {
namespace {

constexpr std::string_view kLockPath = "/lockstep/herd";
// Virtual time a step of the measurement may take before it is judged stuck (a release hands
// over in milliseconds; nothing here sleeps).
constexpr zk::Duration kStepLimit = zk::seconds(60);

// Counts what every client sent, by operation.
class RequestCounter final : public sim::Observer {
 public:
  void node_created(uint32_t, zk::Zxid, std::string_view, zk::SessionId) override {}
  void node_deleted(uint32_t, zk::Zxid, std::string_view) override {}
  void request_sent(uint32_t, std::string_view op, std::string_view) override {
    ++total;
    ++by_op[std::string(op)];
  }
  void notified(uint32_t) override {}
  void requests_failed(uint32_t) override {}
  void session_event(uint32_t) override {}

  uint64_t total = 0;
  std::map<std::string, uint64_t> by_op;
};

struct Waiter {
  std::unique_ptr<recipes::Lock> lock;
  bool granted = false;
  bool failed = false;
};

zk::Task<void> acquire(Waiter* w) {
  const zk::Result<recipes::Grant> r = co_await w->lock->acquire();
  (r.ok() ? w->granted : w->failed) = true;
}

zk::Task<void> release(Waiter* w) { (void)co_await w->lock->release(); }

// The client granted since `holder` released, or 0 (none, or more than one: *error says).
uint32_t next_holder(const std::vector<Waiter>& ws, const std::vector<bool>& released,
                     std::string* error) {
  uint32_t found = 0;
  for (uint32_t i = 0; i < ws.size(); ++i) {
    if (!ws[i].granted || released[i]) continue;
    if (found != 0) {
      *error = "two clients hold the lock after a release (c" + std::to_string(found) + ", c" +
               std::to_string(i + 1) + ")";
      return 0;
    }
    found = i + 1;
  }
  return found;
}

// The whole run's total of `cost` (one release per waiter, the queue one shorter each time):
// cost = a + b x waiting fitted by least squares to the measured releases, summed over waiting =
// 1..N. A herd-free lock's cost is flat (b = 0) and the naive lock's grows by one notification
// per waiter (b = 1), both lines; with one release measured, or all at one queue length, b = 0.
template <class Cost>
uint64_t project(const HerdResult& h, Cost&& cost) {
  const auto k = static_cast<double>(h.measured.size());
  if (k == 0) return 0;
  double sw = 0, sc = 0, sww = 0, swc = 0;
  for (const ReleaseCost& c : h.measured) {
    const auto w = static_cast<double>(c.waiting);
    const auto v = static_cast<double>(cost(c));
    sw += w;
    sc += v;
    sww += w * w;
    swc += w * v;
  }
  const double spread = k * sww - sw * sw;
  const double b = spread > 0 ? (k * swc - sw * sc) / spread : 0;
  const double a = (sc - b * sw) / k;
  const auto n = static_cast<double>(h.releases_in_run);
  const double total = a * n + b * n * (n + 1) / 2;
  return total > 0 ? static_cast<uint64_t>(total + 0.5) : 0;
}

}  // namespace

HerdResult measure_herd(const recipes::RecipeInfo& recipe, const HerdOptions& o) {
  HerdResult out;
  out.recipe = recipe.name;
  out.waiters = o.waiters;
  out.releases_in_run = o.waiters;
  const uint32_t clients = o.waiters + 1;
  // Declared before the world, so destroyed after it: coroutine frames go first (they point into
  // the locks and the counter), then the locks.
  RequestCounter counter;
  std::vector<Waiter> ws(clients);
  sim::WorldOptions wo;
  wo.seed = o.seed;
  wo.record_log = false;
  sim::World world(wo);
  world.set_observer(&counter);
  for (uint32_t c = 1; c <= clients; ++c) {
    sim::ClientOptions co;
    co.name = "c" + std::to_string(c);
    sim::Client& client = world.add_client(co);
    recipes::LockOptions lo;
    lo.path = std::string(kLockPath);
    lo.client_name = co.name;
    lo.role = recipe.kind == recipes::Kind::kReadWrite ? recipes::Role::kWrite
                                                       : recipes::Role::kExclusive;
    ws[c - 1].lock = recipe.make(client, lo);
  }
  // The first holder, then every waiter at once.
  world.client(1).spawn(acquire(&ws[0]), "acquire");
  world.run_until_idle(world.now() + kStepLimit);
  if (!ws[0].granted) {
    out.error = "the first client was not granted the lock";
    return out;
  }
  for (uint32_t c = 2; c <= clients; ++c) world.client(c).spawn(acquire(&ws[c - 1]), "acquire");
  world.run_until_idle(world.now() + kStepLimit);
  for (uint32_t c = 2; c <= clients; ++c) {
    if (ws[c - 1].granted || ws[c - 1].failed) {
      out.error = "c" + std::to_string(c) + " did not wait behind the holder";
      return out;
    }
  }
  for (const sim::HerdRecord& h : world.herd()) out.setup_notifications += h.notifications;
  out.setup_requests = counter.total;

  const uint32_t to_measure = o.releases == 0 ? o.waiters : std::min(o.releases, o.waiters);
  std::vector<bool> released(clients, false);
  uint32_t holder = 1;
  for (uint32_t i = 1; i <= to_measure; ++i) {
    const size_t herd_before = world.herd().size();
    const RequestCounter before = counter;
    world.client(holder).spawn(release(&ws[holder - 1]), "release");
    released[holder - 1] = true;
    world.run_until_idle(world.now() + kStepLimit);
    ReleaseCost cost;
    cost.index = i;
    cost.waiting = o.waiters - i + 1;
    for (size_t k = herd_before; k < world.herd().size(); ++k) {
      cost.notifications += world.herd()[k].notifications;
      cost.requests_caused += world.herd()[k].requests_caused;
    }
    cost.requests = static_cast<uint32_t>(counter.total - before.total);
    for (const auto& [op, n] : counter.by_op) {
      const auto it = before.by_op.find(op);
      const uint64_t d = n - (it == before.by_op.end() ? 0 : it->second);
      if (d != 0) cost.requests_by_op[op] = static_cast<uint32_t>(d);
    }
    out.notifications += cost.notifications;
    out.requests += cost.requests;
    out.measured.push_back(std::move(cost));
    holder = next_holder(ws, released, &out.error);
    if (holder == 0) {
      if (out.error.empty())
        out.error = "release " + std::to_string(i) + " handed the lock to nobody";
      break;
    }
  }
  const auto n = static_cast<double>(out.measured.size());
  if (n > 0) {
    out.notifications_per_release = static_cast<double>(out.notifications) / n;
    out.requests_per_release = static_cast<double>(out.requests) / n;
  }
  out.total_measured = out.measured.size() == out.releases_in_run;
  if (out.total_measured) {
    out.total_notifications = out.notifications;
    out.total_requests = out.requests;
  } else {
    out.total_notifications = project(out, [](const ReleaseCost& c) { return c.notifications; });
    out.total_requests = project(out, [](const ReleaseCost& c) { return c.requests; });
  }
  return out;
}

}  // namespace lockstep::properties
