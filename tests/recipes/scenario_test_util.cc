#include "tests/recipes/scenario_test_util.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace lockstep::recipes::testing {

namespace {

// Marks `out` done with `error`, at `p`'s current time.
void complete(const Party* p, Outcome* out, zk::Error error) {
  out->done = true;
  out->error = error;
  out->at = p->client->context().now();
}

zk::Task<void> acquire_task(Party* p, zk::Time deadline, std::vector<std::string>* order) {
  p->acquired = Outcome{};
  zk::Result<Grant> r = co_await p->lock->acquire(deadline);
  p->acquired.grant = r.value;
  complete(p, &p->acquired, r.error);
  if (r.ok()) {
    ++p->grants;
    order->push_back(p->name());
  }
}

zk::Task<void> release_task(Party* p) {
  p->released = Outcome{};
  zk::Status s = co_await p->lock->release();
  complete(p, &p->released, s.error);
}

zk::Task<void> lost_task(Party* p) {
  p->lost = Outcome{};
  zk::Status s = co_await p->lock->lost();
  complete(p, &p->lost, s.error);
}

zk::Task<void> cycle_task(Party* p, zk::Duration hold, std::vector<std::string>* order) {
  co_await acquire_task(p, zk::kNever, order);
  if (p->acquired.error != zk::Error::kOk) co_return;
  (void)co_await p->client->context().sleep_for(hold);
  co_await release_task(p);
}

}  // namespace

Scenario::Scenario(sim::WorldOptions options, std::unique_ptr<sim::Strategy> strategy)
    : world(options, std::move(strategy)) {}

Party& Scenario::join(std::string_view recipe, LockOptions options, sim::ClientOptions client) {
  const RecipeInfo* info = find_recipe(recipe);
  assert(info != nullptr && "unknown recipe");
  auto p = std::make_unique<Party>();
  p->client = &world.add_client(std::move(client));
  if (options.path.empty()) options.path = "/locks/test";
  if (options.client_name.empty()) options.client_name = p->client->name();
  p->options = options;
  p->lock = info->make(*p->client, options);
  parties.push_back(std::move(p));
  return *parties.back();
}

std::vector<Party*> Scenario::join_many(int n, std::string_view recipe, LockOptions options) {
  std::vector<Party*> out;
  for (int i = 0; i < n; ++i) out.push_back(&join(recipe, options));
  return out;
}

void Scenario::acquire(Party& p, zk::Duration timeout) {
  const zk::Time deadline = timeout.us < 0 ? zk::kNever : world.now() + timeout;
  p.acquired = Outcome{};
  p.client->spawn(acquire_task(&p, deadline, &grant_order), "acquire");
}

void Scenario::release(Party& p) {
  p.released = Outcome{};
  p.client->spawn(release_task(&p), "release");
}

void Scenario::watch_lost(Party& p) {
  p.lost = Outcome{};
  p.client->spawn(lost_task(&p), "lost");
}

void Scenario::cycle(Party& p, zk::Duration hold) {
  p.acquired = Outcome{};
  p.client->spawn(cycle_task(&p, hold, &grant_order), "cycle");
}

void Scenario::acquire_and_settle(Party& p) {
  acquire(p);
  run_for(kSettle);
}

void Scenario::release_and_settle(Party& p) {
  release(p);
  run_for(kSettle);
}

void Scenario::queue_up(const std::vector<Party*>& ps) {
  run_for(zk::milliseconds(50));
  for (Party* p : ps) {
    acquire(*p);
    run_for(zk::milliseconds(3));
  }
  run_for(kSettle);
}

void Scenario::one_after_another(Party& first, Party& second) {
  acquire_and_settle(first);
  acquire_and_settle(second);
}

void Scenario::holder_and_two_waiters(Party& holder, Party& waiter, Party& last,
                                      zk::Duration waiter_timeout) {
  acquire_and_settle(holder);
  acquire(waiter, waiter_timeout);
  run_for(zk::milliseconds(10));
  acquire_and_settle(last);
}

void Scenario::run_for(zk::Duration d, zk::Duration slice) {
  const zk::Time end = world.now() + d;
  while (world.now() < end) {
    const zk::Time next = std::min(end, world.now() + slice);
    world.run_until(next);
    int all = 0, writers = 0;
    for (const auto& p : parties) {
      if (!p->holds()) continue;
      ++all;
      if (p->options.role != Role::kRead) ++writers;
    }
    if (all > max_holders) max_holders = all;
    if (writers > 0 && all > 1) rw_violation = true;
  }
}

void Scenario::inject(sim::FaultKind kind, uint32_t client, zk::Duration duration,
                      std::string name) {
  sim::Fault f;
  f.kind = kind;
  f.at = world.now();
  f.client = client;
  f.duration = duration;
  // The one string parameter of the kinds the tests inject with one: a task or a path.
  if (zk::takes(kind, zk::kParamPath)) {
    f.path = std::move(name);
  } else {
    f.task = std::move(name);
  }
  world.inject(std::move(f));
}

int Scenario::holders() const {
  int n = 0;
  for (const auto& p : parties) n += p->holds() ? 1 : 0;
  return n;
}

std::vector<std::string> Scenario::children(std::string_view path) const {
  std::vector<std::string> out;
  std::vector<std::string> todo = {""};
  for (size_t i = 0; i < todo.size() && i < 100000; ++i) {
    std::optional<sim::NodeView> v = world.node(std::string(path) + todo[i]);
    if (!v) continue;
    if (v->stat.ephemeral_owner.valid()) out.push_back(todo[i].substr(1));
    for (const std::string& c : v->children) todo.push_back(todo[i] + "/" + c);
  }
  std::sort(out.begin(), out.end());
  return out;
}

HerdFigures herd_under(const sim::World& world, std::string_view dir) {
  HerdFigures h;
  const std::string prefix = std::string(dir) + "/";
  for (const sim::HerdRecord& r : world.herd()) {
    if (r.path.compare(0, prefix.size(), prefix) != 0) continue;
    ++h.releases;
    h.notifications += r.notifications;
    h.requests_caused += r.requests_caused;
    if (r.notifications > h.max_per_release) h.max_per_release = r.notifications;
  }
  return h;
}

}  // namespace lockstep::recipes::testing
