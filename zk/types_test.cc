// Tests of the contract's value types: sequence suffixes and the PRNG's reproducibility.
#include "zk/types.h"

#include <gtest/gtest.h>

#include "zk/random.h"

namespace zk {
namespace {

TEST(Sequence, SuffixRoundTripsIncludingTheSignedWrap) {
  // %010d formatting and parsing agree at zero, the top of int32 and past the wrap.
  for (int32_t v : {0, 42, 999999999, INT32_MAX, INT32_MIN, -7, -1000000000}) {
    Sequence s{};
    ASSERT_TRUE(parse_sequence_suffix(format_sequence(Sequence{v}), &s)) << v;
    EXPECT_EQ(s.value, v);
  }
  EXPECT_EQ(format_sequence(Sequence{42}), "0000000042");
  EXPECT_EQ(format_sequence(Sequence{INT32_MIN}), "-2147483648");
}

TEST(Sequence, RejectsWhatTheServerCannotProduce) {
  // Short, long, non-digit and out-of-range suffixes are refused.
  Sequence s{};
  for (const char* bad :
       {"", "42", "00000000042", "00000x0042", "9999999999", "-0000000000", "lock-0000000001"}) {
    EXPECT_FALSE(parse_sequence_suffix(bad, &s)) << bad;
  }
}

TEST(Prng, SameSeedSameStreamAndSplitsAreIndependent) {
  // One seed reproduces a stream; split streams differ from each other and from the parent.
  Prng a(123), b(123), c(124);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    if (x != c.next()) differs = true;
  }
  EXPECT_TRUE(differs);
  Prng f = a.split("faults"), s = a.split("scheduler"), f2 = a.split("faults");
  EXPECT_NE(f.next(), s.next());
  EXPECT_EQ(a.split("faults").next(), Prng(a.split("faults")).next());
  (void)f2;
}

TEST(Prng, BelowIsInRangeAndCoversIt) {
  // below(n) stays in [0, n) and hits every value of a small range.
  Prng p(9);
  int hits[7] = {};
  for (int i = 0; i < 7000; ++i) {
    uint64_t v = p.below(7);
    ASSERT_LT(v, 7u);
    ++hits[v];
  }
  for (int h : hits) EXPECT_GT(h, 800);
  EXPECT_FALSE(p.chance(0, 5));
  EXPECT_TRUE(p.chance(5, 5));
}

}  // namespace
}  // namespace zk
