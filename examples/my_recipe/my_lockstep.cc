// A user's own `lockstep`: every command over the user's recipes as well as the built-in ones.
//   ./my_lockstep list
//   ./my_lockstep check --recipe example/my-exclusive --recipe broken/example-trusts-node-exists
//   ./my_lockstep explore --recipe broken/example-trusts-node-exists --faults lost-reply
#include "cli/user_main.h"
#include "my_lock.h"

int main(int argc, char** argv) {
  return lockstep::cli::main_with_recipes(argc, argv,
                                          {example::my_exclusive_info(), example::my_broken_info()});
}
