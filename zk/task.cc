// The allocator behind coroutine frames (zk/task.h, PromiseBase::operator new/delete).
//
// Frames come from a per-thread free list per 64-byte size class: recipes start a few tasks per
// request, and most frames are too large for malloc's own per-thread cache. Memory only: which
// block a frame gets never changes what runs. Under AddressSanitizer frames go straight to the
// heap, so that a use after free is still caught. The lists are plain thread-local data; a
// cleanup object empties them when the thread ends, after which frames that are still destroyed
// later (by static objects) go straight back to the heap.
#include "zk/task.h"

#include <cstddef>
#include <new>

namespace zk::detail {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPoolFrames = false;
#else
constexpr bool kPoolFrames = true;
#endif

struct FramePool {
  static constexpr size_t kGranule = 64;
  static constexpr size_t kClasses = 64;       // frames up to 4 KiB are pooled
  static constexpr size_t kKeepPerClass = 64;  // a bound on what a class keeps
  void* free[kClasses];
  size_t kept[kClasses];
  bool closed;

  static FramePool& local() {
    static thread_local constinit FramePool pool{};  // trivially destructible
    return pool;
  }
  void drain() {
    for (void*& head : free) {
      while (head != nullptr) {
        void* next = *static_cast<void**>(head);
        ::operator delete(head);
        head = next;
      }
    }
  }
  struct Cleanup {
    ~Cleanup() {
      local().drain();
      local().closed = true;
    }
  };
  static void* allocate(size_t n) {
    static thread_local Cleanup cleanup;  // registered with the thread's first frame
    (void)cleanup;
    FramePool& p = local();
    const size_t c = (n + kGranule - 1) / kGranule;
    if (c >= kClasses || p.closed) return ::operator new(n);
    if (void* f = p.free[c]) {
      p.free[c] = *static_cast<void**>(f);
      --p.kept[c];
      return f;
    }
    return ::operator new(c* kGranule);
  }
  static void release(void* f, size_t n) {
    FramePool& p = local();
    const size_t c = (n + kGranule - 1) / kGranule;
    if (c >= kClasses || p.closed || p.kept[c] >= kKeepPerClass) return ::operator delete(f);
    *static_cast<void**>(f) = p.free[c];
    p.free[c] = f;
    ++p.kept[c];
  }
};

}  // namespace

void* allocate_frame(size_t n) { return kPoolFrames ? FramePool::allocate(n) : ::operator new(n); }

void release_frame(void* frame, size_t n) {
  if (kPoolFrames) return FramePool::release(frame, n);
  ::operator delete(frame);
}

}  // namespace zk::detail
