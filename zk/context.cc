#include "zk/context.h"

#include <algorithm>
#include <utility>

#include "zk/invariant.h"

namespace zk {
namespace detail {

// A sleep: fulfils its promise when the executor's timer fires. Owned by the Context until
// then, so a cancelled sleeper leaves nothing dangling.
class SleepTimer final : public TimerCallback {
 public:
  using Owner = std::vector<std::unique_ptr<SleepTimer>>;  // in key order
  SleepTimer(Owner* owner, uint64_t key) : owner_(owner), key_(key) {}
  uint64_t key() const { return key_; }
  Promise<Status> promise;
  void on_timer() override {
    promise.fulfil(Status{});
    auto it = std::lower_bound(
        owner_->begin(), owner_->end(), key_,
        [](const std::unique_ptr<SleepTimer>& t, uint64_t key) { return t->key() < key; });
    LOCKSTEP_ASSERT(it != owner_->end() && it->get() == this);
    owner_->erase(it);  // destroys *this: nothing may follow
  }

 private:
  Owner* owner_;
  uint64_t key_;
};

// The unfinished root with task id `id`, in `roots` (id order).
std::vector<std::shared_ptr<RootState>>::iterator find_root(
    std::vector<std::shared_ptr<RootState>>& roots, uint32_t id) {
  auto it = std::lower_bound(
      roots.begin(), roots.end(), id,
      [](const std::shared_ptr<RootState>& r, uint32_t key) { return r->ctx.id < key; });
  LOCKSTEP_ASSERT(it != roots.end() && (*it)->ctx.id == id);
  return it;
}

}  // namespace detail

Context::Context(Executor& executor, uint64_t seed) : executor_(executor), rng_(seed) {}

Context::~Context() {
  // Destroy unfinished roots; their awaiters detach from any pending state.
  auto roots = std::move(roots_);
  for (auto& root : roots) {
    if (!root->done && root->frame) {
      root->done = true;
      root->frame.destroy();
      root->frame = {};
    }
  }
}

Future<Status> Context::sleep_for(Duration d) { return sleep_until(now() + d); }

Future<Status> Context::sleep_until(Time t) {
  const uint64_t key = next_sleep_key_++;
  auto timer = std::make_unique<detail::SleepTimer>(&sleeps_, key);
  Future<Status> f = timer->promise.future();
  detail::SleepTimer* raw = timer.get();
  sleeps_.push_back(std::move(timer));
  executor_.start_timer(t, raw);
  return f;
}

TaskHandle Context::spawn(Task<void> task, std::string name) {
  auto root = std::make_shared<detail::RootState>();
  root->ctx.id = next_task_id_++;
  root->ctx.name = std::move(name);
  root->ctx.executor = &executor_;
  root->owner = this;
  auto h = task.release();
  LOCKSTEP_ASSERT(h && "spawn of an empty task");
  h.promise().ctx = &root->ctx;
  h.promise().on_root_done = &Context::root_done;
  h.promise().on_root_done_arg = root.get();
  root->frame = h;
  roots_.push_back(root);
  executor_.schedule(h, &root->ctx);
  return TaskHandle(root);
}

void Context::root_done(void* arg) {
  auto* root = static_cast<detail::RootState*>(arg);
  Context* self = root->owner;
  auto it = detail::find_root(self->roots_, root->ctx.id);
  auto keep = std::move(*it);  // keeps the state alive past the erase
  self->roots_.erase(it);
  keep->done = true;
  std::coroutine_handle<> frame = std::exchange(keep->frame, {});
  if (keep->joiners) keep->joiners->post(Status{});
  frame.destroy();  // legal: the coroutine is suspended at its final suspend point
}

}  // namespace zk
