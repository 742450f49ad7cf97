// Tests of the contract's value types: sequence suffixes, name logs and their listings, and the
// PRNG's reproducibility.
#include "zk/types.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

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
       {"", "42", "00000000042", "00000x0042", "9999999999", "-0000000000", "-0000000005",
        "-0999999999", "lock-0000000001"}) {
    EXPECT_FALSE(parse_sequence_suffix(bad, &s)) << bad;
  }
}

TEST(NameLog, EachListingIsItsVersionAndOnlyHeldVersionsKeepTheirNames) {
  // A listing shows the names alive when it was made, in key order, whatever came or went
  // later; one made at the same version is the same list; names no held listing can see are
  // dropped, so a churning directory keeps a log of its own size.
  auto log = std::make_shared<NameLog>();
  log->add(3, "c");
  log->add(1, "a");
  const Names first = log->listing();
  EXPECT_EQ(first, (std::vector<std::string>{"a", "c"}));
  EXPECT_TRUE(first.indexed());
  EXPECT_EQ(first.wire_bytes(), 10u);
  log->remove(1, "a");
  log->add(2, "b");
  log->add(1, "a");  // the same name again: a new entry
  const Names second = log->listing();
  EXPECT_EQ(first, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(second, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(second.size(), 3u);
  EXPECT_EQ(second[1], "b");
  const Names again = log->listing();
  EXPECT_EQ(&again.vector(), &second.vector());  // one list per version, shared
  for (int i = 0; i < 1000; ++i) {
    const std::string name = "n-" + format_sequence(Sequence{i});
    log->add(100 + static_cast<uint64_t>(i), name);
    if (i % 10 == 0) {
      const Names passing = log->listing();  // made and let go, as a recipe does
      EXPECT_EQ(passing.size(), 4u);  // the live three and this one
    }
    log->remove(100 + static_cast<uint64_t>(i), name);
  }
  EXPECT_EQ(log->size(), 3u);
  EXPECT_EQ(first, (std::vector<std::string>{"a", "c"}));  // held: still whole
  EXPECT_LE(log->kept(), 3u + 2u);  // the live three and the old "a"; none of the 1000
  bool any = false;
  EXPECT_TRUE(second.walk_before(0, "", [&](std::string_view, int32_t) { return any = true; }));
  EXPECT_FALSE(any);  // no name of these three ends in a sequence suffix
  EXPECT_FALSE(Names(std::vector<std::string>{"a"}).walk_before(0, "", [](auto, auto) { return true; }));
}

TEST(NameLog, ARemoveByPlaceIsARemoveByName) {
  // The place add() returns takes its name out as a search by (key, name) would, listings made
  // before it keep the name, and a name re-added gets a new place; a place given with another
  // name than its own is an invariant violation.
  auto by_place = std::make_shared<NameLog>();
  auto by_name = std::make_shared<NameLog>();
  std::vector<NameLog::Place> places;
  for (uint64_t i = 0; i < 50; ++i) {
    const std::string name = "n-" + format_sequence(Sequence{static_cast<int32_t>(i)});
    places.push_back(by_place->add(i * 7919 % 50, name));
    by_name->add(i * 7919 % 50, name);
  }
  const Names before = by_place->listing();
  const std::vector<std::string> all = by_name->listing().vector();  // the 50, in log order
  for (uint64_t i = 0; i < 50; i += 3) {
    const std::string name = "n-" + format_sequence(Sequence{static_cast<int32_t>(i)});
    by_place->remove(places[i], name);
    by_name->remove(i * 7919 % 50, name);
  }
  places[0] = by_place->add(0, "n-" + format_sequence(Sequence{0}));
  by_name->add(0, "n-" + format_sequence(Sequence{0}));
  EXPECT_EQ(by_place->listing(), by_name->listing().vector());
  EXPECT_EQ(before, all);  // the removed names are still in the listing made before
  EXPECT_EQ(by_place->size(), 34u);
  EXPECT_DEATH(by_place->remove(places[1], "n-" + format_sequence(Sequence{2})),
               "not at that place");
}

TEST(NameLog, ListingsMatchAnOrderedModelThroughSplitsAndChangesMidIteration) {
  // Random adds and removes over random 64-bit keys (a few shared by two names, so ties order
  // by name), up to thousands of names so that the buckets split many times. Names end in a
  // sequence suffix: mostly growing values, as a lock's, some random (inserts amid the suffix
  // index's blocks) and some repeating a live name's value (ties order by name). Every listing
  // made matches the model's (key, name) order at its version, also when it is read by an
  // iterator that was left part-way while the log changed under it; its walks back from a
  // random value visit what the model says in the model's order, and it has the suffixed names
  // it holds and not the ones added after it.
  Prng rng(2026);
  auto log = std::make_shared<NameLog>();
  struct Live {
    uint64_t key;
    std::string name;
    int32_t seq;
  };
  std::map<std::pair<uint64_t, std::string>, int32_t> model;  // live names -> suffix value
  struct Held {
    Names names;
    std::vector<std::string> expected;
    std::vector<std::pair<int32_t, std::string>> items;  // (suffix value, name)
    Names::const_iterator it;                            // left part-way
    size_t read = 0;
  };
  std::vector<Held> held;
  std::vector<Live> live;
  int32_t next = 0;
  for (int step = 0; step < 20000; ++step) {
    const bool grow = step < 12000 ? rng.below(4) != 0 : rng.below(3) == 0;
    if (grow || live.empty()) {
      const uint64_t key =
          live.empty() || rng.below(20) != 0 ? rng.next() : live[rng.below(live.size())].key;
      const uint64_t kind = rng.below(20);
      const int32_t seq = kind < 15                   ? next++
                          : kind < 19 || live.empty() ? static_cast<int32_t>(rng.below(INT32_MAX))
                                                      : live[rng.below(live.size())].seq;
      // (No dash before the suffix: "-1618268234" would index the name under a second value.)
      const std::string name = "n" + std::to_string(step) + "_" + format_sequence(Sequence{seq});
      log->add(key, name);
      model[{key, name}] = seq;
      live.push_back({key, name, seq});
    } else {
      const size_t i = rng.below(live.size());
      log->remove(live[i].key, live[i].name);
      model.erase({live[i].key, live[i].name});
      live[i] = live.back();
      live.pop_back();
    }
    if (rng.below(50) == 0) {
      Held h{log->listing(), {}, {}, {}, 0};
      for (const auto& [kn, seq] : model) {
        h.expected.push_back(kn.second);
        h.items.emplace_back(seq, kn.second);
      }
      h.it = h.names.begin();
      const size_t part = rng.below(h.expected.size() + 1);
      for (; h.read < part; ++h.read, ++h.it) ASSERT_EQ(*h.it, h.expected[h.read]) << step;
      held.push_back(std::move(h));
    }
    if (held.size() > 8 || (!held.empty() && rng.below(40) == 0)) {
      Held& h = held[rng.below(held.size())];
      for (; h.read < h.expected.size(); ++h.read, ++h.it) {
        ASSERT_NE(h.it, h.names.end()) << step;
        ASSERT_EQ(*h.it, h.expected[h.read]) << step;
      }
      EXPECT_EQ(h.it, h.names.end()) << step;
      EXPECT_EQ(h.names, h.expected) << step;
      // A walk back from a random value (or a held name's): every name serially before it,
      // nearest first, names of one value in descending order.
      const int32_t from = h.items.empty() || rng.below(2) == 0
                               ? static_cast<int32_t>(rng.next())
                               : h.items[rng.below(h.items.size())].first;
      auto serial = [&](int32_t seq) {
        return static_cast<int32_t>(static_cast<uint32_t>(seq) - static_cast<uint32_t>(from));
      };
      std::vector<std::pair<int32_t, std::string>> want;
      for (const auto& item : h.items) {
        if (serial(item.first) < 0) want.push_back(item);
      }
      std::sort(want.begin(), want.end(), [&](const auto& x, const auto& y) {
        if (serial(x.first) != serial(y.first)) return serial(x.first) > serial(y.first);
        return x.second > y.second;
      });
      std::vector<std::pair<int32_t, std::string>> got;
      EXPECT_TRUE(h.names.walk_before(from, "", [&](std::string_view name, int32_t seq) {
        got.emplace_back(seq, std::string(name));
        return true;
      }));
      EXPECT_EQ(got, want) << step;
      for (const auto& [seq, name] : h.items) EXPECT_TRUE(h.names.has_suffixed(seq, name));
      if (!live.empty()) {
        const Live& l = live.back();
        const bool listed =
            std::find(h.expected.begin(), h.expected.end(), l.name) != h.expected.end();
        EXPECT_EQ(h.names.has_suffixed(l.seq, l.name), listed) << step;
      }
      h = std::move(held.back());
      held.pop_back();
    }
  }
  EXPECT_EQ(log->size(), model.size());
  held.clear();
  log->add(1, "after");  // collects what no listing sees now
  EXPECT_EQ(log->kept(), model.size() + 1);
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
