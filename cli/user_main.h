// lockstep CLI for a user's own recipes: the whole `lockstep` command in a user's binary.
//
// A project built against the installed package (find_package(lockstep), target
// lockstep::cli) writes one main:
//
//   #include "cli/user_main.h"
//   int main(int argc, char** argv) {
//     return lockstep::cli::main_with_recipes(argc, argv, {my_lock_info(), my_broken_info()});
//   }
//
// and its binary is `lockstep` over the user's recipes as well as the built-in ones: `check`
// (the property suite in the simulator, every seed reproducible, failures saved as traces),
// `merge`, `explore`, `replay`, `recheck`, `show`, `corpus`, `list`, `selfcheck`, `help`,
// `version`. The user's recipes state their promises in their RecipeInfo (recipes/registry.h:
// Promises, and for a broken variant an Exposure naming the property that must catch it).
// `check --real` and `conformance` need the real ZooKeeper client, which this library leaves
// out; they say so.
#pragma once

#include <vector>

#include "recipes/registry.h"

namespace lockstep::cli {

// Adds `recipes` to the registry (recipes::add_recipes) and runs the command line argv[1..] with
// the standard streams. A registration that cannot be added is a usage error (exit 2, saying
// why) before anything runs.
int main_with_recipes(int argc, char** argv, std::vector<recipes::RecipeInfo> recipes);

}  // namespace lockstep::cli
