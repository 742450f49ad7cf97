#include "explore/strategies.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "sim/digest.h"
#include "zk/random.h"

namespace lockstep::explore {

bool dependent(const sim::EventInfo& a, const sim::EventInfo& b) {
  const uint32_t both = a.footprint & b.footprint;
  if (((a.footprint | b.footprint) & sim::kTouchesWorld) != 0) return true;
  if ((both & sim::kTouchesServer) != 0) return true;
  if ((both & sim::kRunsUserCode) != 0) return true;  // the workload's history, the resource
  if (a.client == 0 || b.client == 0) return true;    // an owner the scheduler does not know
  return a.client == b.client;
}

uint64_t choice_state(const sim::World* world, const StateProbe& probe) {
  sim::Digest d;
  d.word(world != nullptr ? world->state_digest() : 0).word(probe());
  return d.value();
}

ScheduleStrategy::ScheduleStrategy(Schedule schedule, std::string name)
    : schedule_(std::move(schedule)), name_(std::move(name)) {}

uint32_t ScheduleStrategy::choose_event(const std::vector<sim::EventInfo>& candidates) {
  if (sleeping_ && after_last_pick(static_cast<uint32_t>(points_.size())) &&
      asleep(sleep_, candidates[0].seq)) {
    stopped_ = true;  // the default is asleep: the run ends after it
  }
  const auto first = static_cast<uint32_t>(candidates_.size());
  candidates_.insert(candidates_.end(), candidates.begin(), candidates.end());
  const uint32_t chosen =
      choose(sim::ChoiceKind::kNextEvent, static_cast<uint32_t>(candidates.size()));
  points_.back().first_candidate = first;
  return chosen;
}

void ScheduleStrategy::set_sleep(std::vector<sim::EventInfo> sleep, bool all_dependent) {
  sleeping_ = true;
  all_dependent_ = all_dependent;
  sleep_ = std::move(sleep);
}

bool ScheduleStrategy::after_last_pick(uint32_t point) const {
  return schedule_.empty() || static_cast<int64_t>(point) > schedule_.back().index;
}

bool asleep(const std::vector<sim::EventInfo>& sleep, uint64_t seq) {
  return std::any_of(sleep.begin(), sleep.end(),
                     [seq](const sim::EventInfo& z) { return z.seq == seq; });
}

void ScheduleStrategy::executed(const sim::EventInfo& event) {
  const auto before = static_cast<uint32_t>(points_.size());
  ran_.push_back(RanEvent{event, before});
  // The same events as the search's analysis: those reported after the last pick's choice.
  if (!sleeping_ || stopped_ || !after_last_pick(before)) return;
  if (asleep(sleep_, event.seq)) {
    stopped_ = true;
    return;
  }
  std::erase_if(sleep_,
                [&](const sim::EventInfo& z) { return all_dependent_ || dependent(z, event); });
}

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
  const uint64_t state = probe_ && after_last_pick(index) ? choice_state(world_, probe_) : 0;
  points_.push_back(ChoicePoint{kind, n, chosen, state, 0});
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
    pct_ = root.split("pct");
    // d-1 distinct change points among the first `steps` scheduling steps.
    const uint32_t steps = std::max<uint32_t>(1, o.steps);
    std::set<uint32_t> points;
    for (uint32_t guard = 0; points.size() + 1 < std::min(o.depth, steps + 1) && guard < 10000;
         ++guard) {
      points.insert(static_cast<uint32_t>(pct_.below(steps)));
    }
    uint64_t lowered = o.depth;
    for (uint32_t p : points) change_.push_back(Change{p, --lowered});
  }

  uint32_t choose(sim::ChoiceKind kind, uint32_t n) override {
    return static_cast<uint32_t>(streams_[static_cast<size_t>(kind)].below(n));
  }
  bool observes_events() const override { return true; }
  uint32_t choose_event(const std::vector<sim::EventInfo>& candidates) override {
    const uint32_t step = step_++;
    uint32_t pick = highest(candidates);
    for (const Change& c : change_) {
      if (c.step == step) {
        priority_[candidates[pick].task] = c.priority;
        pick = highest(candidates);
      }
    }
    return pick;
  }
  std::string name() const override { return "pct-d" + std::to_string(options_.depth); }

 private:
  struct Change {
    uint32_t step;
    uint64_t priority;
  };
  // Initial priorities lie above every lowered one (those are < depth).
  static constexpr uint64_t kInitial = uint64_t{1} << 40;

  uint64_t priority(uint32_t task) {
    auto it = priority_.find(task);
    if (it == priority_.end()) {
      // A task seen for the first time gets a random priority among the initial ones.
      it = priority_.emplace(task, kInitial + pct_.below(uint64_t{1} << 32)).first;
    }
    return it->second;
  }
  // The first candidate of the highest-priority task. Tasks get their priority in candidate
  // order, so the draws do not depend on anything but the run.
  uint32_t highest(const std::vector<sim::EventInfo>& c) {
    uint32_t best = 0;
    uint64_t best_priority = priority(c[0].task);
    for (uint32_t j = 1; j < c.size(); ++j) {
      const uint64_t p = priority(c[j].task);
      if (p > best_priority) {
        best = j;
        best_priority = p;
      }
    }
    return best;
  }

  PctOptions options_;
  std::array<zk::Prng, static_cast<size_t>(sim::ChoiceKind::kCount)> streams_;
  zk::Prng pct_;
  std::map<uint32_t, uint64_t> priority_;  // task -> priority
  std::vector<Change> change_;
  uint32_t step_ = 0;
};

}  // namespace

std::unique_ptr<sim::Strategy> make_pct_strategy(const PctOptions& options) {
  return std::make_unique<PctStrategy>(options);
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
