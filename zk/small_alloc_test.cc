// zk/small_alloc.cc: the replacement operator new serves small blocks from its spans, sized and
// unsized deletes give them back to the right class, and a thread's free blocks outlive it.
#include "zk/small_alloc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <set>
#include <thread>
#include <vector>

namespace {

using zk::small_alloc::enabled;
using zk::small_alloc::owns;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kExpectEnabled = false;  // the sanitizer keeps its own allocator
#elif defined(LOCKSTEP_EXPECT_NO_SMALL_ALLOC)
constexpr bool kExpectEnabled = false;
#else
constexpr bool kExpectEnabled = true;
#endif

TEST(SmallAlloc, IsInUseExactlyWhereTheBuildSaysSo) {
  EXPECT_EQ(enabled(), kExpectEnabled);
  void* p = ::operator new(40);
  EXPECT_EQ(owns(p), kExpectEnabled);  // operator new is the replacement, not libstdc++'s
  ::operator delete(p, 40);
  EXPECT_EQ(zk::small_alloc::mapped_bytes() > 0, kExpectEnabled);
}

TEST(SmallAlloc, EverySizeIsAlignedDistinctAndWholly) {
  std::vector<std::pair<char*, size_t>> blocks;
  for (size_t n = 0; n <= 600; ++n) {
    char* p = static_cast<char*>(::operator new(n));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u) << n;
    std::memset(p, static_cast<int>(n & 0xff), n);
    blocks.emplace_back(p, n);
  }
  for (auto [p, n] : blocks) {  // no block overlapped another: each still holds its own bytes
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(static_cast<unsigned char>(p[i]), n & 0xff) << n;
  }
  std::vector<std::pair<char*, size_t>> sorted = blocks;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < sorted.size(); ++i) {
    EXPECT_LE(sorted[i - 1].first + sorted[i - 1].second, sorted[i].first);
  }
  for (auto [p, n] : blocks) {
    EXPECT_EQ(owns(p), kExpectEnabled && n <= 512) << n;  // larger blocks come from malloc
    ::operator delete(p, n);
  }
}

TEST(SmallAlloc, AnUnsizedDeleteReturnsTheBlockToItsClass) {
  if (!kExpectEnabled) {
    EXPECT_FALSE(enabled());
    return;
  }
  void* a = ::operator new(100);  // the 112-byte class
  ::operator delete(a);           // no size: the span map says the class
  void* b = ::operator new(112);
  EXPECT_EQ(a, b);  // the class's free list gave it back, last in first out
  void* c = ::operator new(96);
  EXPECT_NE(c, b);  // another class
  ::operator delete(b);
  ::operator delete(c);
}

TEST(SmallAlloc, ASizedDeleteReturnsTheBlockToTheClassOfItsSize) {
  if (!kExpectEnabled) {
    EXPECT_FALSE(enabled());
    return;
  }
  // The size alone places a sized delete's block (no lookup in the span map): the 48-byte class
  // for 40, whichever size of that class asks next.
  void* a = ::operator new(40);
  ::operator delete(a, 40);
  void* b = ::operator new(33);
  EXPECT_EQ(a, b);
  void* c = ::operator new(40);  // the class's list is empty again: another block
  EXPECT_NE(c, b);
  void* d = ::operator new(32);  // another class
  ::operator delete(c, 40);
  ::operator delete(b, 33);
  void* e = ::operator new(48);  // last in, first out: b, then c
  void* f = ::operator new(48);
  EXPECT_EQ(e, b);
  EXPECT_EQ(f, c);
  EXPECT_NE(d, e);
  for (void* p : {d, e, f}) ::operator delete(p);
}

TEST(SmallAlloc, AThreadsFreeBlocksOutliveItAndServeTheNextThread) {
  if (!kExpectEnabled) {
    EXPECT_FALSE(enabled());
    return;
  }
  constexpr size_t kSize = 488;  // a class nothing else here uses
  constexpr int kCount = 1000;
  std::set<void*> freed;
  std::thread first([&] {
    std::vector<void*> mine;
    for (int i = 0; i < kCount; ++i) mine.push_back(::operator new(kSize));
    for (void* p : mine) ::operator delete(p, kSize);
    freed.insert(mine.begin(), mine.end());
  });
  first.join();  // its free list went to the pool as it ended
  std::set<void*> reused;
  std::thread second([&] {
    std::vector<void*> mine;
    for (int i = 0; i < kCount; ++i) mine.push_back(::operator new(kSize));
    reused.insert(mine.begin(), mine.end());
    for (void* p : mine) ::operator delete(p, kSize);
  });
  second.join();
  EXPECT_EQ(reused, freed);
}

TEST(SmallAlloc, BlocksCrossThreadsBothWays) {
  std::vector<void*> made(5000);
  std::thread maker([&] {
    for (size_t i = 0; i < made.size(); ++i) made[i] = ::operator new(16 + i % 400);
  });
  maker.join();
  for (size_t i = 0; i < made.size(); ++i) {
    std::memset(made[i], 1, 16 + i % 400);
    ::operator delete(made[i], 16 + i % 400);  // freed by another thread than the one that made it
  }
  std::vector<void*> again(made.size());
  for (size_t i = 0; i < again.size(); ++i) again[i] = ::operator new(16 + i % 400);
  std::thread freer([&] {
    for (size_t i = 0; i < again.size(); ++i) ::operator delete(again[i]);
  });
  freer.join();
  EXPECT_EQ(std::set<void*>(made.begin(), made.end()).size(), made.size());
}

}  // namespace
