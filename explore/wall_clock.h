// lockstep explore: the one place explore/ reads the wall clock — elapsed times for reports
// (`lockstep explore`, the time-to-bug table) only. The search core never calls it: the same
// scope and options give the same result whatever the machine's speed.
#pragma once

#include <chrono>

namespace lockstep::explore {

class Stopwatch {
 public:
  Stopwatch() : start_(now()) {}
  double elapsed_ms() const {
    return std::chrono::duration<double, std::milli>(now() - start_).count();
  }

 private:
  using Clock = std::chrono::steady_clock;  // lockstep-allow: wall time for the report only
  static Clock::time_point now() { return Clock::now(); }
  Clock::time_point start_;
};

}  // namespace lockstep::explore
