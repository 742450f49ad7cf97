#include "explore/strategies.h"

#include <algorithm>
#include <array>
#include <set>

#include "zk/random.h"

namespace lockstep::explore {

ScheduleStrategy::ScheduleStrategy(Schedule schedule, std::string name)
    : schedule_(std::move(schedule)), name_(std::move(name)) {}

uint32_t ScheduleStrategy::choose(sim::ChoiceKind kind, uint32_t n) {
  const auto index = static_cast<uint32_t>(points_.size());
  uint32_t chosen = 0;
  if (next_pick_ < schedule_.size() && schedule_[next_pick_].index == index) {
    chosen = schedule_[next_pick_++].chosen;
    if (chosen >= n) {
      if (divergence_.empty()) {
        divergence_ = "choice " + std::to_string(index) + ": the schedule answers " +
                      std::to_string(chosen) + " to " + sim::to_string(kind) + "/" +
                      std::to_string(n);
      }
      chosen = 0;
    }
  }
  points_.push_back(ChoicePoint{kind, n, chosen, probe_ ? probe_() : 0});
  return chosen;
}

namespace {

class PctStrategy final : public sim::Strategy {
 public:
  explicit PctStrategy(const PctOptions& o) : options_(o) {
    const zk::Prng root(o.seed);
    for (size_t k = 0; k < streams_.size(); ++k) {
      streams_[k] = root.split(sim::to_string(static_cast<sim::ChoiceKind>(k)));
    }
    zk::Prng pct = root.split("pct");
    const uint32_t tasks = std::max<uint32_t>(1, o.max_tasks);
    // Distinct initial priorities depth .. depth+tasks-1, in a random order (Fisher-Yates).
    priority_.resize(tasks);
    for (uint32_t i = 0; i < tasks; ++i) priority_[i] = o.depth + i;
    for (uint32_t i = tasks - 1; i > 0; --i) {
      std::swap(priority_[i], priority_[pct.below(i + 1)]);
    }
    // d-1 distinct change points among the first `steps` scheduling steps.
    const uint32_t steps = std::max<uint32_t>(1, o.steps);
    std::set<uint32_t> points;
    for (uint32_t guard = 0; points.size() + 1 < std::min(o.depth, steps + 1) && guard < 10000;
         ++guard) {
      points.insert(static_cast<uint32_t>(pct.below(steps)));
    }
    uint32_t lowered = o.depth;
    for (uint32_t p : points) change_.push_back(Change{p, --lowered});
  }

  uint32_t choose(sim::ChoiceKind kind, uint32_t n) override {
    if (kind != sim::ChoiceKind::kNextEvent) {
      return static_cast<uint32_t>(streams_[static_cast<size_t>(kind)].below(n));
    }
    const uint32_t step = step_++;
    uint32_t pick = highest(n);
    for (const Change& c : change_) {
      if (c.step == step) {
        priority_[slot(pick)] = c.priority;
        pick = highest(n);
      }
    }
    return pick;
  }
  std::string name() const override { return "pct-d" + std::to_string(options_.depth); }

 private:
  struct Change {
    uint32_t step;
    uint32_t priority;
  };
  uint32_t slot(uint32_t position) const {
    return std::min<uint32_t>(position, static_cast<uint32_t>(priority_.size()) - 1);
  }
  // The candidate whose task has the highest priority (the first such, for shared slots).
  uint32_t highest(uint32_t n) const {
    uint32_t best = 0;
    for (uint32_t j = 1; j < n; ++j) {
      if (priority_[slot(j)] > priority_[slot(best)]) best = j;
    }
    return best;
  }

  PctOptions options_;
  std::array<zk::Prng, static_cast<size_t>(sim::ChoiceKind::kCount)> streams_;
  std::vector<uint32_t> priority_;
  std::vector<Change> change_;
  uint32_t step_ = 0;
};

}  // namespace

std::unique_ptr<sim::Strategy> make_pct_strategy(const PctOptions& options) {
  return std::make_unique<PctStrategy>(options);
}

std::vector<sim::Decision> decisions_of(const std::vector<ChoicePoint>& points) {
  std::vector<sim::Decision> out;
  out.reserve(points.size());
  for (const ChoicePoint& p : points) out.push_back(sim::Decision{p.kind, p.n, p.chosen});
  return out;
}

Schedule schedule_of(const std::vector<sim::Decision>& decisions) {
  Schedule out;
  for (size_t i = 0; i < decisions.size(); ++i) {
    if (decisions[i].chosen != 0) {
      out.push_back(Pick{static_cast<uint32_t>(i), decisions[i].chosen});
    }
  }
  return out;
}

}  // namespace lockstep::explore
