// A stand-alone `lockstep explore` (explore/explore.h) for builds whose CLI does not dispatch
// to it yet: `lockstep-explore --recipe fair-mutex ...` == `lockstep explore --recipe ...`.
#include <iostream>

#include "explore/explore.h"

int main(int argc, char** argv) {
  return lockstep::explore::explore_main(argc, argv, std::cout, std::cerr);
}
