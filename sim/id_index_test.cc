// sim/id_index.h against std::map: random inserts, lookups and erases over small and large id
// sets give the same answers, through runs of slots that wrap around the array's end, and a sweep
// of the slots sees every indexed value once; IdCounts the same for counts up and down.
#include "sim/id_index.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "zk/random.h"

namespace lockstep::sim {
namespace {

TEST(IdIndex, RandomOperationsMatchAnOrderedMap) {
  for (uint64_t universe : {2u, 9u, 50u, 3000u}) {
    zk::Prng rng(universe);
    std::vector<uint64_t> ids;  // random 64-bit ids, as sessions have
    std::vector<int> targets(universe);
    for (uint64_t i = 0; i < universe; ++i) ids.push_back(rng.next());
    IdIndex<int> index;
    std::map<uint64_t, int*> model;
    for (int step = 0; step < 30000; ++step) {
      const uint64_t k = rng.below(universe);
      const uint64_t id = ids[k];
      if (rng.below(2) == 0) {
        if (model.count(id) == 0) {
          index.insert(id, &targets[k]);
          model[id] = &targets[k];
        }
      } else {
        EXPECT_EQ(index.erase(id), model.erase(id) == 1);
      }
      if (step % 1009 == 0 || step == 29999) {
        ASSERT_EQ(index.size(), model.size());
        for (uint64_t i = 0; i < universe; ++i) {
          auto it = model.find(ids[i]);
          EXPECT_EQ(index.find(ids[i]), it == model.end() ? nullptr : it->second) << i;
        }
        // A sweep of the slots (the session audit's) sees every indexed value once.
        std::multiset<int*> swept;
        for (size_t i = 0; i < index.slot_count(); ++i) {
          if (int* v = index.at_slot(i)) swept.insert(v);
        }
        std::multiset<int*> expected;
        for (const auto& [id, v] : model) expected.insert(v);
        EXPECT_EQ(swept, expected);
      }
    }
  }
}

// Eight random ids whose home is one of the last two of a first 16-slot array (the tables'
// hash, repeated here): few enough that the array does not grow, so their runs wrap its end.
std::vector<uint64_t> ids_homed_at_the_end(zk::Prng& rng) {
  std::vector<uint64_t> ids;
  while (ids.size() < 8) {
    const uint64_t id = rng.next();
    if (((id * 0x9e3779b97f4a7c15ull) >> 60) >= 14) ids.push_back(id);
  }
  return ids;
}

// White-box: every erase among runs that wrap around the array's end must move the wrapped
// entries back where a lookup finds them.
TEST(IdIndex, RunsThatWrapAroundTheEndSurviveErases) {
  zk::Prng rng(42);
  const std::vector<uint64_t> ids = ids_homed_at_the_end(rng);
  int target = 0;
  for (int round = 0; round < 200; ++round) {
    IdIndex<int> index;
    std::map<uint64_t, int*> model;
    for (int step = 0; step < 40; ++step) {
      const uint64_t id = ids[rng.below(ids.size())];
      if (rng.below(3) != 0 && model.count(id) == 0) {
        index.insert(id, &target);
        model[id] = &target;
      } else {
        EXPECT_EQ(index.erase(id), model.erase(id) == 1);
      }
      for (uint64_t other : ids) {
        EXPECT_EQ(index.find(other), model.count(other) != 0 ? &target : nullptr);
      }
    }
  }
}

TEST(IdIndexDeathTest, AnIdIsIndexedOnce) {
  IdIndex<int> index;
  int a = 0;
  index.insert(7, &a);
  EXPECT_DEATH(index.insert(7, &a), "7 is indexed");
}

TEST(IdCounts, RandomIncrementsAndDecrementsMatchAnOrderedMap) {
  for (uint64_t universe : {1u, 9u, 50u, 3000u}) {
    zk::Prng rng(universe + 100);
    std::vector<uint64_t> ids;
    for (uint64_t i = 0; i < universe; ++i) ids.push_back(rng.next());
    IdCounts counts;
    std::map<uint64_t, uint32_t> model;  // only positive counts
    for (int step = 0; step < 30000; ++step) {
      const uint64_t id = ids[rng.below(universe)];
      // Up more often than down while small, so that counts above 1 and ids leaving both occur.
      if (model.count(id) == 0 || rng.below(5) < 2) {
        counts.increment(id);
        ++model[id];
      } else {
        counts.decrement(id);
        if (--model[id] == 0) model.erase(id);
      }
      if (step % 997 == 0 || step == 29999) {
        ASSERT_EQ(counts.size(), model.size());
        for (uint64_t i = 0; i < universe; ++i) {
          auto it = model.find(ids[i]);
          EXPECT_EQ(counts.count(ids[i]), it == model.end() ? 0u : it->second) << i;
        }
      }
    }
  }
}

// White-box, as for IdIndex: ids crowded into the first array's last two homes, their runs
// wrapping around its end, counted up and down to zero in random order.
TEST(IdCounts, RunsThatWrapAroundTheEndSurviveCountsFallingToZero) {
  zk::Prng rng(7);
  const std::vector<uint64_t> ids = ids_homed_at_the_end(rng);
  for (int round = 0; round < 200; ++round) {
    IdCounts counts;
    std::map<uint64_t, uint32_t> model;
    for (int step = 0; step < 60; ++step) {
      const uint64_t id = ids[rng.below(ids.size())];
      if (model.count(id) == 0 || rng.below(2) == 0) {
        counts.increment(id);
        ++model[id];
      } else {
        counts.decrement(id);
        if (--model[id] == 0) model.erase(id);
      }
      for (uint64_t other : ids) {
        EXPECT_EQ(counts.count(other), model.count(other) != 0 ? model[other] : 0u);
      }
    }
  }
}

TEST(IdCountsDeathTest, OnlyACountedIdGoesDown) {
  IdCounts counts;
  EXPECT_DEATH(counts.decrement(7), "7 has no count");
  counts.increment(8);
  counts.decrement(8);
  EXPECT_DEATH(counts.decrement(8), "8 has no count");
}

}  // namespace
}  // namespace lockstep::sim
