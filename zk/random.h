// lockstep contract: the project's own pseudo-random generator.
//
// xoshiro256** seeded through splitmix64, with a bounded-integer function of our own (Lemire's
// multiply-and-reject), because std::uniform_int_distribution differs between standard
// libraries and would break "same seed, same event log" across machines. Streams are split by
// name (split("faults"), split("scheduler"), ...) so that adding draws to one concern does not
// reshuffle the others. Not thread-safe; one owner.
#pragma once

#include <cstdint>
#include <string_view>

namespace zk {

class Prng {
 public:
  explicit Prng(uint64_t seed = 0);

  uint64_t next();
  // Uniform in [0, bound). REQUIRES: bound > 0.
  uint64_t below(uint64_t bound);
  // Uniform in [lo, hi]. REQUIRES: lo <= hi.
  int64_t between(int64_t lo, int64_t hi);
  // True with probability num/den, decided with integers only. REQUIRES: den > 0.
  bool chance(uint64_t num, uint64_t den);
  // An independent stream derived from this generator's seed and a label; does not advance
  // this generator.
  Prng split(std::string_view label) const;

  uint64_t seed() const { return seed_; }

 private:
  uint64_t seed_;
  uint64_t s_[4];
};

// splitmix64 step, also used to derive seeds.
uint64_t splitmix64(uint64_t* state);
// FNV-1a over bytes, for labels and event-log hashing.
uint64_t fnv1a(std::string_view bytes, uint64_t h = 1469598103934665603ull);

}  // namespace zk
