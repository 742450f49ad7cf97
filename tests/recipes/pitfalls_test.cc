// The coroutine pitfall of recipes/README.md ("Coroutine pitfalls"), shown where it can be:
// under AddressSanitizer (the `sanitize` run of ./lockstep test), a coroutine that keeps a
// reference to a temporary argument reads memory that is no longer the string after its first
// suspension, and ASan stops there naming the coroutine. Without ASan the same code is undefined behaviour with no reliable symptom, so the
// test exists only in the sanitizer build.
#include <gtest/gtest.h>

#include <string>

#include "sim/world.h"
#include "zk/task.h"

namespace lockstep {
namespace {

#if defined(__SANITIZE_ADDRESS__)

// The trap: `text` is a reference, and the caller passes a temporary that dies at the end of the
// full expression that made the task, before the task has even started (tasks start lazily).
zk::Task<size_t> length_after_a_nap(zk::Context& ctx, const std::string& text) {
  (void)co_await ctx.sleep_for(zk::milliseconds(1));
  co_return text.size();
}

// The fix: take the argument by value; the frame keeps its own copy.
zk::Task<size_t> length_after_a_nap_by_value(zk::Context& ctx, std::string text) {
  (void)co_await ctx.sleep_for(zk::milliseconds(1));
  co_return text.size();
}

template <class Coroutine>
size_t run_one(Coroutine coroutine) {
  sim::World w{sim::WorldOptions{}};
  w.add_client();
  size_t length = 0;
  auto caller = [](sim::Client* c, size_t* out, Coroutine f) -> zk::Task<void> {
    zk::Task<size_t> t = f(c->context(), std::string(64, 'x'));  // the temporary dies here
    *out = co_await std::move(t);
  };
  w.client(1).spawn(caller(&w.client(1), &length, coroutine), "pitfall");
  w.run_until_idle(zk::Time{} + zk::seconds(1));
  return length;
}

TEST(CoroutinePitfalls, AReferenceToATemporaryArgumentIsReadAfterItWasFreed) {
  EXPECT_EQ(run_one(length_after_a_nap_by_value), 64u);
  // ASan stops at the read and names the coroutine that made it (the string object itself was
  // a temporary of the caller's: its storage is reported as a stack region out of scope).
  EXPECT_DEATH(run_one(length_after_a_nap), "ERROR: AddressSanitizer: .*in length_after_a_nap");
}

#endif  // __SANITIZE_ADDRESS__

}  // namespace
}  // namespace lockstep
