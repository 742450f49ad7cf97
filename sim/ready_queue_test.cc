// sim/ready_queue.h against the plain model it stands for: a vector of candidates in arrival
// order, re-classified whole before every choice. Random pushes, filters and takes, with a few
// candidates (found by counting) and with hundreds (the Fenwick tree), give the same answers.
#include "sim/ready_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "zk/random.h"

namespace lockstep::sim {
namespace {

// Each owner (a client) is runnable, paused (its events deferred) or crashed (dropped); the
// filter reports the owners whose state changed, as World does.
class ModelFilter final : public EventFilter {
 public:
  enum class State : uint8_t { kRuns, kPaused, kCrashed };
  explicit ModelFilter(uint32_t owners)
      : deferred(owners + 1), state_(owners + 1, State::kRuns) {}

  Disposition classify(const Event& e) override {
    switch (state_[e.client]) {
      case State::kRuns: return Disposition::kRun;
      case State::kPaused: return Disposition::kDefer;
      case State::kCrashed: return Disposition::kDrop;
    }
    return Disposition::kRun;
  }
  void defer(const Event& e) override { deferred[e.client].push_back(e.seq); }
  uint32_t owner(const Event& e) override { return e.client; }
  void take_changes(std::vector<uint32_t>* owners) override {
    owners->insert(owners->end(), changed_.begin(), changed_.end());
    changed_.clear();
  }
  void set(uint32_t owner, State s) {
    if (state_[owner] == s) return;
    state_[owner] = s;
    changed_.push_back(owner);
  }
  State state(uint32_t owner) const { return state_[owner]; }

  // Per owner, in the order defer() was called (the order across owners is not promised).
  std::vector<std::vector<uint64_t>> deferred;

 private:
  std::vector<State> state_;
  std::vector<uint32_t> changed_;
};

// Runs `steps` random operations on a ReadyQueue and on the model; at most `cap` candidates.
void run_against_model(uint64_t seed, uint32_t owners, size_t cap, int steps) {
  zk::Prng rng(seed);
  ReadyQueue q;
  std::vector<Event> model;  // the live candidates, in arrival order
  ModelFilter f(owners);
  std::vector<std::vector<uint64_t>> model_deferred(owners + 1);
  std::vector<uint32_t> changes;
  uint64_t seq = 0;
  for (int step = 0; step < steps; ++step) {
    const uint64_t what = rng.below(10);
    if (what < 5 && model.size() < cap) {  // a burst of arrivals
      const uint64_t burst = 1 + rng.below(cap > 40 ? 40 : 3);
      for (uint64_t i = 0; i < burst && model.size() < cap; ++i) {
        Event e;
        e.seq = ++seq;
        e.client = 1 + static_cast<uint32_t>(rng.below(owners));
        if (f.state(e.client) != ModelFilter::State::kRuns) continue;  // World would not queue it
        q.push(e);
        model.push_back(e);
      }
    } else if (what < 7) {  // an owner's state changes
      const auto o = 1 + static_cast<uint32_t>(rng.below(owners));
      f.set(o, static_cast<ModelFilter::State>(rng.below(3)));
    }
    // Before a choice: the scheduler's filter, and the model's whole re-classification.
    f.take_changes(&changes);
    q.filter(f, changes);
    changes.clear();
    std::vector<Event> kept;
    for (const Event& e : model) {
      const Disposition d = f.classify(e);
      if (d == Disposition::kRun) kept.push_back(e);
      if (d == Disposition::kDefer) model_deferred[e.client].push_back(e.seq);
    }
    model = std::move(kept);
    ASSERT_EQ(q.size(), model.size()) << "seed " << seed << " step " << step;
    ASSERT_EQ(f.deferred, model_deferred) << "seed " << seed << " step " << step;
    std::vector<uint64_t> order;
    q.for_each([&](const Event& e) { order.push_back(e.seq); });
    std::vector<uint64_t> model_order;
    for (const Event& e : model) model_order.push_back(e.seq);
    ASSERT_EQ(order, model_order) << "seed " << seed << " step " << step;
    if (!model.empty() && rng.below(3) != 0) {  // a choice
      const size_t i = rng.below(model.size());
      const Event taken = q.take(i);
      EXPECT_EQ(taken.seq, model[i].seq) << "seed " << seed << " step " << step;
      model.erase(model.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
}

TEST(ReadyQueue, AFewCandidatesAnswerAsTheModelDoes) {
  for (uint64_t seed = 1; seed <= 50; ++seed) run_against_model(seed, 4, 8, 400);
}

TEST(ReadyQueue, HundredsOfCandidatesAnswerAsTheModelDoes) {
  for (uint64_t seed = 1; seed <= 10; ++seed) run_against_model(seed, 60, 600, 1500);
}

TEST(ReadyQueue, GrowingPastTheCountedSizeAndShrinkingBackAnswerAsTheModelDoes) {
  for (uint64_t seed = 1; seed <= 30; ++seed) run_against_model(seed, 12, 48, 1500);
}

}  // namespace
}  // namespace lockstep::sim
