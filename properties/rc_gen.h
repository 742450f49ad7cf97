// lockstep properties: RapidCheck's draws for the one scenario generator (header-only; link
// `rapidcheck`).
//
// rcgen::scenario(o) is properties/generator.h's generate() with RcDraws: every draw is a
// RapidCheck generator, so the scenario keeps the generator's contract (see generator.h) and a
// failing one shrinks — each number toward the low end of its range, each chance toward false:
// fewer clients, rounds and faults, shorter timings, the seed toward 1. Generation draws only
// from RapidCheck's own random source; the simulator run it feeds is deterministic, so
// RapidCheck's printed reproduction string (RC_PARAMS="reproduce=...") replays the same run.
#pragma once

#include <rapidcheck.h>

#include <cstdint>

#include "properties/generator.h"
#include "properties/scenario.h"

namespace lockstep::properties::rcgen {

// Draws through RapidCheck (inside rc::gen::exec or a property).
class RcDraws final : public Draws {
 public:
  using Draws::between;
  int64_t between(int64_t lo, int64_t hi) override {
    return *rc::gen::inRange<int64_t>(lo, hi + 1);
  }
  uint64_t below(uint64_t bound) override { return *rc::gen::inRange<uint64_t>(0, bound); }
  // Shrinks toward false: the drawn number shrinks toward 0, below den - num.
  bool chance(uint64_t num, uint64_t den) override {
    return *rc::gen::inRange<uint64_t>(0, den) >= den - num;
  }
};

// A whole scenario for a recipe of kind o.kind drawing faults from o.faults.
inline rc::Gen<Scenario> scenario(GenerateOptions o) {
  return rc::gen::exec([o]() {
    RcDraws draws;
    Scenario s = generate(draws, o);
    s.seed = *rc::gen::inRange<uint64_t>(1, 1u << 30);
    return s;
  });
}

}  // namespace lockstep::properties::rcgen

namespace rc {

// So that RapidCheck prints a counterexample readably.
template <>
struct Arbitrary<lockstep::properties::Scenario> {
  static Gen<lockstep::properties::Scenario> arbitrary() {
    return lockstep::properties::rcgen::scenario({});
  }
};

}  // namespace rc

namespace lockstep::properties {
inline void showValue(const Scenario& s, std::ostream& os) { os << describe(s); }
}  // namespace lockstep::properties
