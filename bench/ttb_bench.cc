// The time-to-bug table (explore/ttb.h) as a program: `explore_ttb [--trials T] [--budget N]`.
// The ctest `explore_ttb_small` runs it with a small budget; the `bench_ttb` target with more.
#include <iostream>

#include "explore/ttb.h"

int main(int argc, char** argv) {
  return lockstep::explore::ttb_main(argc, argv, std::cout, std::cerr);
}
