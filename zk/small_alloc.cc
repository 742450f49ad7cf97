// The program's small-object allocator: global operator new and delete for blocks of up to 512
// bytes (every binary of the project links it through lockstep_zk).
//
// A simulated request allocates about ten small blocks (path strings, tree and watch-table
// nodes, futures, listings) and frees them a few events later. glibc's malloc keeps only seven
// blocks of a size per thread before it takes its slower paths, which made allocation about a
// fifth of a fault-injected scenario's instructions. The idea is FoundationDB's FastAllocator:
//   - memory is mapped from the system 4 MiB at a time, aligned to 2 MiB and offered to the
//     kernel for transparent huge pages (below), and cut into 64 KiB spans, each serving one size
//     class (16-byte steps up to 512 bytes);
//   - each thread keeps, per class, a free list and the unused tail of its current span: an
//     allocation or a free is a few instructions on thread-local data, with no header per block;
//   - a span map (one byte per span, in two levels by address) says whether a block is ours and
//     its class, for a delete that is not told the size;
//   - a thread that ends hands its free lists to a shared pool, from which threads refill.
// Memory is only ever mapped as it is used (an address-space limit such as `ulimit -v` counts
// what the program uses, as with malloc). Blocks over 512 bytes, and every block once the
// system gives no more memory, come from malloc as before. Memory only: which block an object
// gets never changes what the program computes. Under AddressSanitizer the program keeps the
// sanitizer's own allocator (so a use after free or an overflow is still caught), and
// LOCKSTEP_SMALL_ALLOC=OFF builds without it.
#include "zk/small_alloc.h"

#include <malloc.h>
#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>

#if !defined(__SANITIZE_ADDRESS__) && !defined(LOCKSTEP_NO_SMALL_ALLOC)
#define LOCKSTEP_SMALL_ALLOC_ENABLED 1

namespace {

constexpr size_t kGranule = 16;
constexpr size_t kMaxSmall = 512;
constexpr size_t kClasses = kMaxSmall / kGranule + 1;  // class c serves c * 16 bytes; 0 unused
constexpr size_t kSpanShift = 16;
constexpr size_t kSpanBytes = size_t{1} << kSpanShift;
constexpr size_t kChunkBytes = size_t{4} << 20;  // what one mmap takes from the system
// Chunks are aligned to the x86-64 huge page and madvise(MADV_HUGEPAGE)d: a simulation of
// thousands of clients touches a few lines of each client's objects per event, spread over
// a hundred megabytes, and with 4 KiB pages nearly every such miss was also a TLB miss and a
// page walk (lockstep_scale, fair mutex, 10,000 clients x 30 rounds: 16.1 -> 14.2 us per grant on
// the 2-core test machine, whose kernel grants huge pages on madvise). A kernel that grants none
// (transparent_hugepage=never) ignores the advice: nothing else changes.
constexpr size_t kHugePage = size_t{2} << 20;
// The span map: a span's class by its address (x86-64 user addresses have 47 bits), in two
// levels: 2^15 leaves of 2^16 spans each; 0 = not a span of ours.
constexpr size_t kAddressBits = 47;
constexpr size_t kLeafBits = 16;
constexpr size_t kRootSize = size_t{1} << (kAddressBits - kSpanShift - kLeafBits);

struct Block {
  Block* next;
};

// The shared state: zero- or constant-initialized before any constructor runs, so operator
// new works from the first static initializer on. g_mutex guards the chunk, the leaves' creation
// and the pool; it is taken once per 64 KiB span a thread starts, not per block.
constinit std::mutex g_mutex;
std::atomic<uint8_t*> g_root[kRootSize];
size_t g_mapped = 0;           // bytes of chunks mapped so far
char* g_chunk_next = nullptr;  // the unused spans of the current chunk
char* g_chunk_end = nullptr;
bool g_failed = false;         // the system gave no more memory: malloc from then on
Block* g_pool[kClasses];       // free blocks of threads that ended, per class

struct ThreadCache {
  Block* free[kClasses];
  char* cursor[kClasses];  // the unused tail of the thread's current span of each class
  char* end[kClasses];
  bool closed;  // the thread is ending: its lists went to the pool
};
thread_local constinit ThreadCache t_cache{};

constexpr size_t class_of(size_t n) { return n == 0 ? 1 : (n + kGranule - 1) / kGranule; }

// The class of the span holding p, or 0 if p is not in a span of ours.
size_t class_at(const void* p) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  if ((addr >> kAddressBits) != 0) return 0;
  const uint8_t* leaf = g_root[addr >> (kSpanShift + kLeafBits)].load(std::memory_order_acquire);
  return leaf == nullptr ? 0 : leaf[(addr >> kSpanShift) & ((size_t{1} << kLeafBits) - 1)];
}

// A new span for class c, marked in the span map; nullptr when the system has no memory left.
// REQUIRES: g_mutex held.
char* new_span(size_t c) {
  if (g_failed) return nullptr;
  if (g_chunk_next == g_chunk_end) {
    // Over-map by a huge page and trim, so that the chunk is aligned to one (and so every span
    // to its size).
    const size_t bytes = kChunkBytes + kHugePage;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      g_failed = true;
      return nullptr;
    }
    const auto addr = reinterpret_cast<uintptr_t>(p);
    const uintptr_t aligned = (addr + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1);
    if (aligned > addr) munmap(p, aligned - addr);
    const uintptr_t tail = addr + bytes - (aligned + kChunkBytes);
    if (tail > 0) munmap(reinterpret_cast<void*>(aligned + kChunkBytes), tail);
    if (((aligned + kChunkBytes - 1) >> kAddressBits) != 0) {  // outside the map's reach
      munmap(reinterpret_cast<void*>(aligned), kChunkBytes);
      g_failed = true;
      return nullptr;
    }
    madvise(reinterpret_cast<void*>(aligned), kChunkBytes, MADV_HUGEPAGE);  // advice only
    g_mapped += kChunkBytes;
    g_chunk_next = reinterpret_cast<char*>(aligned);
    g_chunk_end = g_chunk_next + kChunkBytes;
  }
  char* span = g_chunk_next;
  g_chunk_next += kSpanBytes;
  const auto addr = reinterpret_cast<uintptr_t>(span);
  std::atomic<uint8_t*>& slot = g_root[addr >> (kSpanShift + kLeafBits)];
  uint8_t* leaf = slot.load(std::memory_order_relaxed);
  if (leaf == nullptr) {
    void* p = mmap(nullptr, size_t{1} << kLeafBits, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      g_failed = true;
      return nullptr;
    }
    leaf = static_cast<uint8_t*>(p);
  }
  leaf[(addr >> kSpanShift) & ((size_t{1} << kLeafBits) - 1)] = static_cast<uint8_t>(c);
  slot.store(leaf, std::memory_order_release);  // publishes the class written above
  return span;
}

// Ends the thread's use of its cache: its free blocks go to the pool (the unused span tails are
// left; a span is never given back). Later requests of this thread go through the pool.
struct CacheCloser {
  ~CacheCloser() {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (size_t c = 1; c < kClasses; ++c) {
      while (Block* b = t_cache.free[c]) {
        t_cache.free[c] = b->next;
        b->next = g_pool[c];
        g_pool[c] = b;
      }
    }
    t_cache.closed = true;
  }
};

// The slow path of a small allocation of class c: the pool, then a new span, then malloc.
[[gnu::noinline]] void* refill(size_t c) {
  ThreadCache& t = t_cache;
  if (!t.closed) {
    static thread_local CacheCloser closer;  // registered once per thread, on its first refill
    (void)closer;
  }
  char* span = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (Block* b = g_pool[c]) {
      if (t.closed) {
        g_pool[c] = b->next;
      } else {  // take all of them: they are this class's blocks
        g_pool[c] = nullptr;
        t.free[c] = b->next;
      }
      return b;
    }
    span = new_span(c);
  }
  const size_t size = c * kGranule;
  if (span == nullptr) return std::malloc(size);
  if (t.closed) return span;  // the rest of the span is not used: rare (a thread's last steps)
  t.cursor[c] = span + size;
  t.end[c] = span + (kSpanBytes / size) * size;
  return span;
}

void* allocate(size_t n) {
  if (n <= kMaxSmall) {
    const size_t c = class_of(n);
    ThreadCache& t = t_cache;
    if (Block* b = t.free[c]) {
      t.free[c] = b->next;
      return b;
    }
    if (t.cursor[c] != t.end[c]) {
      void* p = t.cursor[c];
      t.cursor[c] += c * kGranule;
      return p;
    }
    return refill(c);
  }
  return std::malloc(n);
}

// A free on a thread whose cache is closed: to the pool (kept out of line, so that the common
// path needs no registers saved).
[[gnu::noinline, gnu::cold]] void release_to_pool(Block* b, size_t c) {
  std::lock_guard<std::mutex> lock(g_mutex);
  b->next = g_pool[c];
  g_pool[c] = b;
}

void release(void* p, size_t c) {
  ThreadCache& t = t_cache;
  Block* b = static_cast<Block*>(p);
  if (t.closed) return release_to_pool(b, c);
  b->next = t.free[c];
  t.free[c] = b;
}

void deallocate(void* p) {
  if (p == nullptr) return;
  if (const size_t c = class_at(p); c != 0) return release(p, c);
  std::free(p);
}

// The size alone places the block: every block of up to kMaxSmall bytes that operator new hands
// out is a whole block of its class, either a span's or, once the system gives no more memory, a
// malloc'd one of the class's full size, which serves the class as well as a span's does (it is
// kept, not given back to malloc). So a sized delete needs no lookup in the span map: the sized
// deletes are most of the program's (callgrind, `lockstep check --recipe fair-mutex --seeds 200`:
// 283.4M -> 277.9M instructions).
void deallocate_sized(void* p, size_t n) {
  if (p == nullptr) return;
  if (n <= kMaxSmall) return release(p, class_of(n));
  std::free(p);
}

void* allocate_or_throw(size_t n) {
  void* p = allocate(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

// fork() with the pool's lock held by another thread would leave the child unable to take it.
// What glibc's malloc serves (blocks over kMaxSmall: histories, tables, the event heap) is kept
// when freed instead of going back to the system at each trim of the heap's free top: a
// `lockstep check` frees and makes them again for every scenario, and each give-back cost a
// page fault per page on the next scenario (25,000 faults in 1,500 fault scenarios, about 2% of
// their CPU time; 1,000 with this). Peak memory is the same: a trim only returns the free top.
[[maybe_unused]] const int g_keep_freed_top = mallopt(M_TRIM_THRESHOLD, 256 << 20);

[[maybe_unused]] const int g_atfork = pthread_atfork([] { g_mutex.lock(); },
                                                     [] { g_mutex.unlock(); },
                                                     [] { g_mutex.unlock(); });

}  // namespace

void* operator new(size_t n) { return allocate_or_throw(n); }
void* operator new[](size_t n) { return allocate_or_throw(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void operator delete(void* p) noexcept { deallocate(p); }
void operator delete[](void* p) noexcept { deallocate(p); }
void operator delete(void* p, size_t n) noexcept { deallocate_sized(p, n); }
void operator delete[](void* p, size_t n) noexcept { deallocate_sized(p, n); }
void operator delete(void* p, const std::nothrow_t&) noexcept { deallocate(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { deallocate(p); }

#endif

namespace zk::small_alloc {

#if defined(LOCKSTEP_SMALL_ALLOC_ENABLED)
bool enabled() { return true; }
bool owns(const void* p) { return class_at(p) != 0; }
size_t mapped_bytes() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_mapped;
}
#else
bool enabled() { return false; }
bool owns(const void*) { return false; }
size_t mapped_bytes() { return 0; }
#endif

}  // namespace zk::small_alloc
