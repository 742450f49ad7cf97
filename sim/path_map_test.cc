// sim/path_map.h against std::map: random inserts, lookups, erases and extracts (by a path, or
// by a path with its hash taken once: HashedPath) over small and large key sets give the same
// contents; values do not move while their entries live; a second insert of a key is an
// invariant violation.
#include "sim/path_map.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zk/random.h"

namespace lockstep::sim {
namespace {

std::string key_of(uint64_t i) {
  // Paths as the lock recipes make them: a shared prefix longer than 8 bytes, then a suffix.
  return "/lockstep/lock/lock-" + std::to_string(1000000000 + i);
}

void expect_same(const PathMap<uint64_t>& m, const std::map<std::string, uint64_t>& model,
                 uint64_t universe) {
  ASSERT_EQ(m.size(), model.size());
  std::map<std::string, uint64_t> seen;
  for (const auto& [k, v] : m) EXPECT_TRUE(seen.emplace(std::string(k), v).second) << k;
  EXPECT_EQ(seen, model);
  for (uint64_t i = 0; i < universe; ++i) {
    const std::string k = key_of(i);
    const uint64_t* v = m.find(k);
    auto it = model.find(k);
    ASSERT_EQ(v != nullptr, it != model.end()) << k;
    if (v != nullptr) {
      EXPECT_EQ(*v, it->second) << k;
    }
  }
}

// Keys drawn from a universe a little larger than the map grows to, so runs of occupied slots
// form, wrap around the array's end and are cut by erases in every position.
TEST(PathMap, RandomOperationsMatchAnOrderedMap) {
  for (uint64_t universe : {3u, 12u, 40u, 700u}) {
    zk::Prng rng(universe);
    PathMap<uint64_t> m;
    std::map<std::string, uint64_t> model;
    for (int step = 0; step < 20000; ++step) {
      const std::string k = key_of(rng.below(universe));
      switch (rng.below(7)) {
        case 0:
        case 1:
          if (model.count(k) == 0) {
            const uint64_t v = rng.next();
            EXPECT_EQ(m.insert(k, v), v);
            model[k] = v;
          }
          break;
        case 2: EXPECT_EQ(m.erase(k), model.erase(k) == 1) << k; break;
        case 3: {
          const uint64_t v = rng.next();
          m[k] = v;  // made or overwritten
          model[k] = v;
          break;
        }
        case 4: {
          const std::optional<uint64_t> got = m.extract(k);
          auto it = model.find(k);
          ASSERT_EQ(got.has_value(), it != model.end()) << k;
          if (got) {
            EXPECT_EQ(*got, it->second) << k;
            model.erase(it);
          }
          break;
        }
        case 5:  // by a path hashed once, as a transaction's (the two spellings agree)
          if (model.count(k) == 0) {
            const uint64_t v = rng.next();
            EXPECT_EQ(m.insert(HashedPath::with_hash(k, path_hash(k)), v), v);
            model[k] = v;
          }
          break;
        case 6: {
          const HashedPath hk(k);
          auto it = model.find(k);
          const uint64_t* found = m.find(hk);
          ASSERT_EQ(found != nullptr, it != model.end()) << k;
          if (found == nullptr) break;
          EXPECT_EQ(*found, it->second) << k;
          if (rng.below(2) == 0) break;
          const std::optional<uint64_t> got = m.extract(hk);
          ASSERT_TRUE(got.has_value()) << k;
          EXPECT_EQ(*got, it->second) << k;
          model.erase(it);
          break;
        }
      }
      if (step % 997 == 0) expect_same(m, model, universe);
    }
    expect_same(m, model, universe);
    for (uint64_t i = 0; i < universe; ++i) m.erase(key_of(i));
    EXPECT_TRUE(m.empty());
    EXPECT_EQ(m.begin(), m.end());
  }
}

TEST(PathMap, ValuesStayWhereTheyAreWhileTheMapGrowsAndShrinks) {
  PathMap<std::unique_ptr<int>> m;
  std::vector<const std::unique_ptr<int>*> where;
  for (int i = 0; i < 5000; ++i) {
    where.push_back(&m.insert(key_of(i), std::make_unique<int>(i)));
  }
  for (int i = 0; i < 5000; i += 2) EXPECT_TRUE(m.erase(key_of(i)));
  for (int i = 1; i < 5000; i += 2) {
    const std::unique_ptr<int>* v = m.find(key_of(i));
    ASSERT_EQ(v, where[i]);
    EXPECT_EQ(**v, i);
  }
  EXPECT_EQ(m.size(), 2500u);
  EXPECT_EQ(m[""], nullptr);  // a key may be empty; [] makes a value-initialized one
  EXPECT_EQ(m.size(), 2501u);
}

TEST(PathMapDeathTest, AKeyIsInsertedOnce) {
  PathMap<int> m;
  m.insert("/a", 1);
  EXPECT_DEATH(m.insert("/a", 2), "/a is already in the map");
}

}  // namespace
}  // namespace lockstep::sim
