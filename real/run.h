// lockstep real client: driving coroutines to completion from a test's thread.
//
// Tests and tools talk to a real server synchronously: run_task() spawns a task on a context
// and runs the context's EventLoop on the calling thread (the loop's owner) until the task
// finishes; await_future() does the same for one Future. Both give up after a wall-clock
// limit (a hang guard, not a timing assertion) and then return nullopt / false; the task is
// left suspended and is destroyed with its context.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "real/event_loop.h"
#include "zk/context.h"
#include "zk/task.h"
#include "zk/wait.h"

namespace lockstep::real {

namespace detail {
template <class T>
zk::Task<void> store_result(zk::Task<T> task, std::shared_ptr<std::optional<T>> out) {
  out->emplace(co_await std::move(task));
}
inline zk::Task<void> mark_done(zk::Task<void> task, std::shared_ptr<bool> done) {
  co_await std::move(task);
  *done = true;
}
template <class T>
zk::Task<T> await_one(zk::Future<T> f) {
  co_return co_await std::move(f);
}
}  // namespace detail

inline constexpr int64_t kRunLimitMs = 20000;

// REQUIRES: ctx.executor() is `loop`; called on the loop's owner thread.
template <class T>
std::optional<T> run_task(EventLoop& loop, zk::Context& ctx, zk::Task<T> task,
                          int64_t limit_ms = kRunLimitMs) {
  auto out = std::make_shared<std::optional<T>>();
  ctx.spawn(detail::store_result(std::move(task), out), "run_task");
  loop.run_until([&] { return out->has_value(); }, limit_ms);
  return std::move(*out);
}

inline bool run_task(EventLoop& loop, zk::Context& ctx, zk::Task<void> task,
                     int64_t limit_ms = kRunLimitMs) {
  auto done = std::make_shared<bool>(false);
  ctx.spawn(detail::mark_done(std::move(task), done), "run_task");
  loop.run_until([&] { return *done; }, limit_ms);
  return *done;
}

template <class T>
std::optional<T> await_future(EventLoop& loop, zk::Context& ctx, zk::Future<T> f,
                              int64_t limit_ms = kRunLimitMs) {
  return run_task(loop, ctx, detail::await_one(std::move(f)), limit_ms);
}

}  // namespace lockstep::real
