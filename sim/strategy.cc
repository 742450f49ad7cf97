// Search strategies: seeded random (one stream per ChoiceKind) and strict replay.
#include <array>
#include <string>
#include <utility>

#include "sim/world.h"

namespace lockstep::sim {
namespace {

class RandomStrategy final : public Strategy {
 public:
  explicit RandomStrategy(uint64_t seed) {
    const zk::Prng root(seed);
    for (size_t k = 0; k < streams_.size(); ++k) {
      streams_[k] = root.split(to_string(static_cast<ChoiceKind>(k)));
    }
  }
  uint32_t choose(ChoiceKind kind, uint32_t n) override {
    return static_cast<uint32_t>(streams_[static_cast<size_t>(kind)].below(n));
  }
  std::string name() const override { return "random"; }

 private:
  std::array<zk::Prng, static_cast<size_t>(ChoiceKind::kCount)> streams_;
};

class ReplayStrategy final : public Strategy {
 public:
  explicit ReplayStrategy(std::vector<Decision> d) : decisions_(std::move(d)) {}
  uint32_t choose(ChoiceKind kind, uint32_t n) override {
    if (diverged_) return 0;
    if (pos_ >= decisions_.size()) return diverge(kind, n, "the recording ended");
    const Decision& d = decisions_[pos_];
    if (d.kind != kind || d.n != n) return diverge(kind, n, "recorded " + describe(d));
    ++pos_;
    return d.chosen;
  }
  std::string name() const override { return "replay"; }
  bool diverged() const override { return diverged_; }
  std::string divergence() const override { return divergence_; }

 private:
  static std::string describe(const Decision& d) {
    return std::string(to_string(d.kind)) + "/" + std::to_string(d.n);
  }
  uint32_t diverge(ChoiceKind kind, uint32_t n, const std::string& why) {
    diverged_ = true;
    divergence_ = "decision " + std::to_string(pos_) + ": asked " + describe(Decision{kind, n, 0}) +
                  ", " + why;
    return 0;
  }

  std::vector<Decision> decisions_;
  size_t pos_ = 0;
  bool diverged_ = false;
  std::string divergence_;
};

}  // namespace

std::unique_ptr<Strategy> make_random_strategy(uint64_t seed) {
  return std::make_unique<RandomStrategy>(seed);
}

std::unique_ptr<Strategy> make_replay_strategy(std::vector<Decision> decisions) {
  return std::make_unique<ReplayStrategy>(std::move(decisions));
}

const char* to_string(ChoiceKind k) {
  switch (k) {
    case ChoiceKind::kNextEvent: return "next-event";
    case ChoiceKind::kLatency: return "latency";
    case ChoiceKind::kAmbiguousOutcome: return "ambiguous-outcome";
    case ChoiceKind::kPingPhase: return "ping-phase";
    case ChoiceKind::kServer: return "server";
    case ChoiceKind::kChildOrder: return "child-order";
    case ChoiceKind::kStall: return "stall";
    case ChoiceKind::kCount: return "count";
  }
  return "?";
}

}  // namespace lockstep::sim
