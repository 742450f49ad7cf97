// RingQueue against std::deque, the plain queue it stands for: the same elements in the same
// order after every push, emplace and pop, across the growths of its buffer and wrapping
// around it; an element pushed from the queue itself survives the growth it causes.
#include "zk/ring_queue.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>

#include "zk/random.h"

namespace zk {
namespace {

// Owns heap memory (a unique_ptr) so that a lost, doubled or stale element shows under ASan and
// as a wrong value here.
struct Item {
  std::unique_ptr<std::string> text;
  uint64_t n = 0;
  Item() = default;
  Item(std::string t, uint64_t k) : text(std::make_unique<std::string>(std::move(t))), n(k) {}
};

template <class Q>
void expect_same(const Q& q, const std::deque<std::pair<std::string, uint64_t>>& model) {
  ASSERT_EQ(q.size(), model.size());
  size_t i = 0;
  for (const Item& it : q) {
    ASSERT_NE(it.text, nullptr) << "element " << i;
    EXPECT_EQ(*it.text, model[i].first) << "element " << i;
    EXPECT_EQ(it.n, model[i].second) << "element " << i;
    ++i;
  }
  EXPECT_EQ(i, model.size());
}

TEST(RingQueue, MatchesADequeUnderRandomPushesEmplacesAndPops) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Prng rng(seed);
    RingQueue<Item> q;
    std::deque<std::pair<std::string, uint64_t>> model;
    for (uint64_t step = 0; step < 2000; ++step) {
      // Pushes outnumber pops early (the buffer grows), then pops catch up (it wraps).
      const uint64_t r = rng.below(10);
      const bool push = step < 1000 ? r < 6 : r < 4;
      const std::string text = "item-" + std::to_string(step) + std::string(step % 40, 'x');
      if (push && rng.below(2) == 0) {
        Item& made = q.emplace_back(text, step);
        EXPECT_EQ(made.n, step);  // the reference is to the new last element
        EXPECT_EQ(&made, &q.back());
        model.emplace_back(text, step);
      } else if (push) {
        q.push_back(Item(text, step));
        model.emplace_back(text, step);
      } else if (!model.empty()) {
        EXPECT_EQ(*q.front().text, model.front().first);
        q.pop_front();
        model.pop_front();
      }
      if (step % 97 == 0) expect_same(q, model);
    }
    expect_same(q, model);
  }
}

TEST(RingQueue, PushingItsOwnElementSurvivesTheGrowthItCauses) {
  RingQueue<Item> q;
  q.push_back(Item("first", 1));  // capacity 1: the next push grows the buffer
  q.push_back(std::move(q.front()));
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q.front().text, nullptr);  // moved from
  ASSERT_NE(q.back().text, nullptr);
  EXPECT_EQ(*q.back().text, "first");
}

TEST(RingQueue, EmplaceBackGrowsFromEmptyAndAfterWrapping) {
  RingQueue<Item> q;
  for (uint64_t i = 0; i < 4; ++i) q.emplace_back("a" + std::to_string(i), i);  // capacity 4
  q.pop_front();
  q.pop_front();
  q.emplace_back("a4", 4);
  q.emplace_back("a5", 5);  // wrapped: head at 2, the last two in slots 0 and 1
  q.emplace_back("a6", 6);  // full: grows, unwrapping
  std::deque<std::pair<std::string, uint64_t>> model;
  for (uint64_t i = 2; i <= 6; ++i) model.emplace_back("a" + std::to_string(i), i);
  expect_same(q, model);
}

}  // namespace
}  // namespace zk
