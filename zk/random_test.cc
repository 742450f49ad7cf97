// zk::fnv1a: its value is part of what the simulator shows (the order of a directory's children
// follows it, and the corpus pins that order), so it must stay FNV-1a however it reads its input.
#include <cstdint>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "zk/random.h"

namespace zk {
namespace {

uint64_t byte_by_byte(std::string_view s, uint64_t h) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Published FNV-1a 64-bit values, from the published offset basis. (The default start is
// 1469598103934665603, a digit short of that basis: it has been the project's since the start,
// and the values it gives are pinned, so it stays.)
TEST(Fnv1a, KnownValues) {
  constexpr uint64_t kBasis = 14695981039346656037ull;
  EXPECT_EQ(fnv1a("", kBasis), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a("a", kBasis), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a("foobar", kBasis), 0x85944171f73967e8ull);
  EXPECT_EQ(fnv1a("foobar"), byte_by_byte("foobar", 1469598103934665603ull));
}

// Every length around the eight-byte steps, bytes above 0x7f included, from the standard and
// from another starting value, and at every alignment within a buffer.
TEST(Fnv1a, SameAsByteByByteAtEveryLengthAndOffset) {
  std::string buf;
  Prng rng(42);
  for (int i = 0; i < 80; ++i) buf.push_back(static_cast<char>(rng.below(256)));
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t len = 0; offset + len <= buf.size(); ++len) {
      const std::string_view s(buf.data() + offset, len);
      ASSERT_EQ(fnv1a(s), byte_by_byte(s, 1469598103934665603ull)) << offset << " " << len;
      ASSERT_EQ(fnv1a(s, 12345), byte_by_byte(s, 12345)) << offset << " " << len;
    }
  }
}

}  // namespace
}  // namespace zk
