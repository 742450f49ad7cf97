// sim/scheduler.h's queue of pending events against the plain model it stands for: every pending
// event in a list, the next one being the earliest (a push for a past instant counts as now),
// and among the events due at one instant the one the strategy picks by its place in insertion
// order. Random pushes and takes, with the queue small (kept sorted), large (a heap) and crossing
// between the two many times, with many events sharing an instant, give the same events in the
// same order.
#include "sim/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/world.h"
#include "zk/random.h"

namespace lockstep::sim {
namespace {

// Every event runs.
class RunAll final : public EventFilter {
 public:
  Disposition classify(const Event&) override { return Disposition::kRun; }
  void defer(const Event&) override { ADD_FAILURE() << "nothing is deferred here"; }
  uint32_t owner(const Event& e) override { return e.client; }
  void take_changes(std::vector<uint32_t>*) override {}
};

// Random choices, each remembered so that the model can make the same one.
class Remembering final : public Strategy {
 public:
  explicit Remembering(uint64_t seed) : rng_(seed) {}
  uint32_t choose(ChoiceKind kind, uint32_t n) override {
    EXPECT_EQ(kind, ChoiceKind::kNextEvent);
    last_n = n;
    last = static_cast<uint32_t>(rng_.below(n));
    ++asked;
    return last;
  }
  std::string name() const override { return "remembering"; }

  uint32_t last_n = 0;
  uint32_t last = 0;
  uint64_t asked = 0;

 private:
  zk::Prng rng_;
};

struct Pending {
  int64_t at;  // microseconds, clamped to the clock when pushed
  uint64_t seq;
  uint64_t tag;  // the event's `a`, unique: which event this is
};

// How far a run's queue went: the most events pending at once, and how many times it went from
// more than `high` pending back down to `low` or fewer (the model's count, every pending event;
// the scheduler's queue holds those not yet due, most of them).
struct Reach {
  size_t largest = 0;
  int returns = 0;
};

// Runs `rounds` rounds of random pushes (up to `burst` at a time, at most `cap` pending) and
// takes on a Scheduler and on the model. `spread`: how many distinct instants ahead an event
// may fall on (small: many events share an instant).
Reach run_against_model(uint64_t seed, size_t cap, size_t burst, int64_t spread, int rounds,
                        size_t high = 40, size_t low = 8) {
  zk::Prng rng(seed);
  Remembering strategy(seed ^ 0x5eed);
  EventLog log;
  Scheduler s(&strategy, &log);
  RunAll filter;
  std::vector<Pending> model;
  uint64_t next_tag = 1;
  uint64_t last_seq = 0;
  Reach reach;
  bool was_high = false;
  for (int round = 0; round < rounds; ++round) {
    const int64_t now = s.now().us;
    // Pushes: some for now or the past (they join the instant's candidates), most ahead.
    const size_t pushes =
        model.size() >= cap ? 0 : rng.below(std::min(burst, cap - model.size()) + 1);
    for (size_t i = 0; i < pushes; ++i) {
      Event e;
      const int64_t ahead = static_cast<int64_t>(rng.below(static_cast<uint64_t>(spread) + 1));
      e.at = Time{rng.chance(1, 8) ? std::max<int64_t>(0, now - 5) : now + 10 * ahead};
      e.type = EventTag::kTimer;
      e.client = 1 + static_cast<uint32_t>(rng.below(4));
      e.a = next_tag++;
      const uint64_t seq = s.push(e);
      EXPECT_GT(seq, last_seq) << "seed " << seed << " round " << round;
      last_seq = seq;
      model.push_back(Pending{std::max(e.at.us, now), seq, e.a});
    }
    reach.largest = std::max(reach.largest, model.size());
    was_high = was_high || model.size() > high;
    // Takes: a few up to a near limit, or now and then every pending event (so that the queue
    // shrinks back to a sorted one).
    const bool drain = rng.chance(1, 16);
    const size_t takes = drain ? model.size() + 1 : rng.below(burst + 1);
    for (size_t i = 0; i < takes; ++i) {
      const int64_t limit = drain ? std::numeric_limits<int64_t>::max()
                                  : s.now().us + 10 * static_cast<int64_t>(rng.below(4));
      Event out;
      const uint64_t asked = strategy.asked;
      const bool got = s.next(filter, Time{limit}, &out);
      // The model: the earliest instant's events, in insertion order.
      int64_t earliest = INT64_MAX;
      for (const Pending& p : model) earliest = std::min(earliest, p.at);
      if (model.empty() || earliest > limit) {
        EXPECT_FALSE(got) << "seed " << seed << " round " << round << ": ran a=" << out.a;
        break;
      }
      EXPECT_TRUE(got) << "seed " << seed << " round " << round;
      if (!got) return reach;
      std::vector<size_t> due;
      for (size_t k = 0; k < model.size(); ++k) {
        if (model[k].at == earliest) due.push_back(k);
      }
      std::sort(due.begin(), due.end(),
                [&](size_t x, size_t y) { return model[x].seq < model[y].seq; });
      size_t pick = 0;
      if (due.size() >= 2) {
        EXPECT_EQ(strategy.asked, asked + 1)
            << "seed " << seed << ": no choice among " << due.size() << " due at " << earliest;
        EXPECT_EQ(strategy.last_n, due.size()) << "seed " << seed << " round " << round;
        pick = strategy.last;
      } else {
        EXPECT_EQ(strategy.asked, asked) << "seed " << seed << ": a choice with one due";
      }
      const Pending want = model[due[pick]];
      EXPECT_EQ(out.a, want.tag) << "seed " << seed << " round " << round;
      EXPECT_EQ(out.seq, want.seq) << "seed " << seed << " round " << round;
      EXPECT_EQ(out.at.us, want.at) << "seed " << seed << " round " << round;
      EXPECT_EQ(s.now().us, want.at);
      model.erase(model.begin() + static_cast<std::ptrdiff_t>(due[pick]));
      if (was_high && model.size() <= low) {
        ++reach.returns;
        was_high = false;
      }
      if (::testing::Test::HasFailure()) return reach;
    }
    EXPECT_EQ(s.idle(), model.empty()) << "seed " << seed << " round " << round;
  }
  return reach;
}

// The queue stays sorted (32 events at most; scheduler.cc's kSortedMax).
TEST(SchedulerQueue, AFewPendingLeaveInTheModelsOrder) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Reach r = run_against_model(seed, 12, 4, 6, 300);
    EXPECT_GE(r.largest, 10u) << "seed " << seed << ": the queue never filled";
    if (HasFailure()) break;
  }
}

// The queue is a heap of thousands.
TEST(SchedulerQueue, ThousandsPendingLeaveInTheModelsOrder) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const Reach r = run_against_model(seed, 2000, 200, 400, 60);
    EXPECT_GE(r.largest, 1000u) << "seed " << seed << ": the queue never grew to thousands";
    if (HasFailure()) break;
  }
}

// Around the sizes where the queue turns from sorted into a heap and back (past 32, then 8 or
// fewer): each run goes from more than 40 pending to 8 or fewer several times.
TEST(SchedulerQueue, CrossingBetweenSortedAndHeapLeavesInTheModelsOrder) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const Reach r = run_against_model(seed, 48, 12, 20, 400);
    EXPECT_GE(r.returns, 3) << "seed " << seed << ": the queue did not cross back and forth";
    if (HasFailure()) break;
  }
}

// Many events at one instant, on both sides of the crossing: the choice among them is asked
// with the same count and answered with the same event.
TEST(SchedulerQueue, EventsSharingAnInstantAreChosenAmongInInsertionOrder) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Reach r = run_against_model(seed, 64, 16, 1, 300);
    EXPECT_GE(r.returns, 1) << "seed " << seed << ": the queue did not cross back and forth";
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace lockstep::sim
