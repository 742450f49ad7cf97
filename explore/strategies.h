// lockstep explore: search strategies behind the scheduler's one choice function
// (sim::Strategy), for systematic schedule exploration.
//
//   - ScheduleStrategy: stateless re-execution for bounded exhaustive search. It answers the
//     choices a Schedule names (by choice index) and 0 everywhere else, and records every choice
//     point it was asked (kind, n, answer) plus an optional state hash taken just before the
//     answer. A schedule is only its non-zero answers, so the search keeps millions of them.
//     It is event-aware (sim::Strategy::observes_events): it keeps each kNextEvent choice's
//     candidates (sim::EventInfo) and every event that ran, with the footprint the scheduler
//     observed, which the sleep-set reduction of explore/search.h reads after the run.
//   - PCT (probabilistic concurrency testing, Burckhardt et al. 2010) with depth d: every task
//     (sim::EventInfo::task: a client process, a client's request stream into the ensemble, a
//     server's applies, expiries, faults) gets a random priority when it is first seen; at each
//     kNextEvent choice the candidate of the highest-priority task runs (the first in insertion
//     order among a task's candidates); at d-1 change points (random kNextEvent step numbers in
//     [0, steps)) the task that would run next drops below every initial priority. Every other
//     choice kind is drawn from its own seeded stream, exactly as sim::make_random_strategy does.
//   - Borrowed: lends a strategy the caller keeps to an API that takes ownership.
//
// All strategies are deterministic functions of their construction arguments and the sequence
// of requests; none reads a clock. Single-threaded.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/world.h"

namespace lockstep::explore {

// One non-default answer: at choice number `index` (0-based, counting every asked choice) the
// strategy answers `chosen` (>= 1).
struct Pick {
  uint32_t index = 0;
  uint32_t chosen = 0;
  bool operator==(const Pick&) const = default;
};

// A schedule: its non-zero answers, in increasing index order. Every other choice answers 0.
using Schedule = std::vector<Pick>;

// A choice point met during a run.
struct ChoicePoint {
  sim::ChoiceKind kind = sim::ChoiceKind::kNextEvent;
  uint32_t n = 0;
  uint32_t chosen = 0;
  // The state before answering (0 without a probe, and at or before the schedule's last pick,
  // whose states the run that spawned this schedule already met): the world's digest
  // (sim::World::state_digest) mixed with the probe's recipe-level hash.
  uint64_t state = 0;
  uint32_t first_candidate = 0;  // kNextEvent: its n candidates start here in candidates()
};

// An event that ran, and how many choice points the run had met before it was reported (so
// every choice point with a smaller index came before the report: the event's own kNextEvent
// choice and the choices it asked for while it ran).
struct RanEvent {
  sim::EventInfo info;
  uint32_t points_before = 0;
};

// Returns an abstract hash of the run's current state (see explore/probe.h).
using StateProbe = std::function<uint64_t()>;

// Sleep sets' independence relation (explore/search.h explains it): true unless the two events
// belong to two different, known clients, at most one touches the ensemble's shared state, not
// both run application code that wrote shared state, and neither is a fault.
bool dependent(const sim::EventInfo& a, const sim::EventInfo& b);
// Is the event with insertion number `seq` in `sleep`?
bool asleep(const std::vector<sim::EventInfo>& sleep, uint64_t seq);

// A strategy that hashes the state at choice points with a probe the program running it provides
// (Program::run): the state is the attached world's digest (sim::World::state_digest) mixed with
// the probe's recipe-level hash (choice_state).
class StateHashing {
 public:
  virtual void set_probe(StateProbe probe) = 0;

 protected:
  ~StateHashing() = default;
};

// The state at a choice point: `world`'s digest (0 before the world is attached: its first choice,
// the child-order salt, is asked while it is built) mixed with `probe`'s hash.
uint64_t choice_state(const sim::World* world, const StateProbe& probe);

class ScheduleStrategy final : public sim::Strategy, public StateHashing {
 public:
  explicit ScheduleStrategy(Schedule schedule, std::string name = "exhaustive");
  // Hashes the state at each choice point after the schedule's last pick: the attached world's
  // digest mixed with `probe` (empty: no hashes, state 0).
  void set_probe(StateProbe probe) override { probe_ = std::move(probe); }
  void attach(const sim::World* world) override { world_ = world; }
  uint32_t choose(sim::ChoiceKind kind, uint32_t n) override;
  std::string name() const override { return name_; }
  // True when a pick named an answer >= n at its index (the run was not the one the schedule
  // was derived from: a determinism bug); the answer was clamped to 0.
  bool diverged() const override { return !divergence_.empty(); }
  std::string divergence() const override { return divergence_; }
  bool observes_events() const override { return true; }
  uint32_t choose_event(const std::vector<sim::EventInfo>& candidates) override;
  void executed(const sim::EventInfo& event) override;

  // Sleep sets, online: after the schedule's last pick, `sleep` is asleep; every event that runs
  // wakes the sleepers it depends on (dependent()) and the run stops (stopped()) once a sleeper
  // is about to run or ran, since all that follows is redundant. Uses the footprints the
  // scheduler observed, which only add dependences to the ones the search uses after the run,
  // so it stops no later than the search's own analysis marks the run blocked.
  void set_sleep(std::vector<sim::EventInfo> sleep, bool all_dependent);
  bool stopped() const override { return stopped_; }

  const std::vector<ChoicePoint>& points() const { return points_; }
  const std::vector<sim::EventInfo>& candidates() const { return candidates_; }
  const std::vector<RanEvent>& ran() const { return ran_; }

 private:
  bool after_last_pick(uint32_t point) const;

  Schedule schedule_;
  bool sleeping_ = false;  // set_sleep was called
  bool all_dependent_ = false;
  bool stopped_ = false;
  std::vector<sim::EventInfo> sleep_;
  std::vector<sim::EventInfo> candidates_;
  std::vector<RanEvent> ran_;
  size_t next_pick_ = 0;
  StateProbe probe_;
  const sim::World* world_ = nullptr;
  std::string name_;
  std::vector<ChoicePoint> points_;
  std::string divergence_;
};

struct PctOptions {
  uint64_t seed = 1;
  uint32_t depth = 3;     // d: the bug depth PCT targets (d-1 priority change points)
  uint32_t steps = 1000;  // k: an estimate of the number of kNextEvent choices in a run
};

std::unique_ptr<sim::Strategy> make_pct_strategy(const PctOptions& options);

// Forwards every call to `inner`, which the caller keeps alive for the run.
class Borrowed final : public sim::Strategy {
 public:
  explicit Borrowed(sim::Strategy* inner) : inner_(inner) {}
  uint32_t choose(sim::ChoiceKind kind, uint32_t n) override { return inner_->choose(kind, n); }
  std::string name() const override { return inner_->name(); }
  bool diverged() const override { return inner_->diverged(); }
  std::string divergence() const override { return inner_->divergence(); }
  bool observes_events() const override { return inner_->observes_events(); }
  uint32_t choose_event(const std::vector<sim::EventInfo>& candidates) override {
    return inner_->choose_event(candidates);
  }
  void executed(const sim::EventInfo& event) override { inner_->executed(event); }
  bool stopped() const override { return inner_->stopped(); }
  void attach(const sim::World* world) override { inner_->attach(world); }

 private:
  sim::Strategy* inner_;
};

// Forwards every call to `inner` (kept alive by the caller for the run) and, once given a probe,
// records the state before every choice point (choice_state): for sampling strategies, which
// keep no record of their own.
class StateRecorder final : public sim::Strategy, public StateHashing {
 public:
  explicit StateRecorder(sim::Strategy* inner) : inner_(inner) {}
  void set_probe(StateProbe probe) override { probe_ = std::move(probe); }
  const std::vector<uint64_t>& states() const { return states_; }

  uint32_t choose(sim::ChoiceKind kind, uint32_t n) override {
    record();
    return inner_->choose(kind, n);
  }
  uint32_t choose_event(const std::vector<sim::EventInfo>& candidates) override {
    record();
    return inner_->choose_event(candidates);
  }
  std::string name() const override { return inner_->name(); }
  bool diverged() const override { return inner_->diverged(); }
  std::string divergence() const override { return inner_->divergence(); }
  bool observes_events() const override { return inner_->observes_events(); }
  void executed(const sim::EventInfo& event) override { inner_->executed(event); }
  bool stopped() const override { return inner_->stopped(); }
  void attach(const sim::World* world) override {
    world_ = world;
    inner_->attach(world);
  }

 private:
  void record() {
    if (probe_) states_.push_back(choice_state(world_, probe_));
  }

  sim::Strategy* inner_;
  StateProbe probe_;
  const sim::World* world_ = nullptr;
  std::vector<uint64_t> states_;
};

// The schedule whose run makes `decisions` (their non-zero answers).
Schedule schedule_of(const std::vector<sim::Decision>& decisions);
// Number of non-zero answers (preemptions, in the CHESS sense).
inline uint32_t preemptions(const Schedule& s) { return static_cast<uint32_t>(s.size()); }

}  // namespace lockstep::explore
