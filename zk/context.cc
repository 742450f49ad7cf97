#include "zk/context.h"

#include <utility>

#include "zk/invariant.h"

namespace zk {
namespace detail {

// A sleep: fulfils its promise when the executor's timer fires. Owned by the Context until
// then, so a cancelled sleeper leaves nothing dangling.
class SleepTimer final : public TimerCallback {
 public:
  SleepTimer(FlatMap<uint64_t, std::unique_ptr<SleepTimer>>* owner, uint64_t key)
      : owner_(owner), key_(key) {}
  Promise<Status> promise;
  void on_timer() override {
    promise.fulfil(Status{});
    owner_->erase(key_);  // destroys *this: nothing may follow
  }

 private:
  FlatMap<uint64_t, std::unique_ptr<SleepTimer>>* owner_;
  uint64_t key_;
};

}  // namespace detail

Context::Context(Executor& executor, uint64_t seed) : executor_(executor), rng_(seed) {}

Context::~Context() {
  // Destroy unfinished roots; their awaiters detach from any pending state.
  auto roots = std::move(roots_);
  for (auto& [id, root] : roots) {
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
  sleeps_.try_emplace(key, std::move(timer));
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
  roots_.try_emplace(root->ctx.id, root);
  executor_.schedule(h, &root->ctx);
  return TaskHandle(root);
}

void Context::root_done(void* arg) {
  auto* root = static_cast<detail::RootState*>(arg);
  Context* self = root->owner;
  auto it = self->roots_.find(root->ctx.id);
  LOCKSTEP_ASSERT(it != self->roots_.end());
  auto keep = std::move(it->second);  // keeps the state alive past the erase
  self->roots_.erase(it);
  keep->done = true;
  std::coroutine_handle<> frame = std::exchange(keep->frame, {});
  if (keep->joiners) keep->joiners->post(Status{});
  frame.destroy();  // legal: the coroutine is suspended at its final suspend point
}

}  // namespace zk
