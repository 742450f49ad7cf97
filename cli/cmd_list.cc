// `lockstep list [--json]`: the recipe registry (recipes/registry.h), correct recipes first.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#if LOCKSTEP_HAVE_RECIPES
#include "recipes/registry.h"
#endif

namespace lockstep::cli {
namespace {

#if LOCKSTEP_HAVE_RECIPES

void print_table(const std::vector<recipes::RecipeInfo>& all) {
  size_t name_w = 4;
  for (const auto& r : all) name_w = std::max(name_w, r.name.size());
  auto pad = [](const std::string& s, size_t w) { return s + std::string(w - s.size(), ' '); };
  std::cout << pad("NAME", name_w) << "  " << pad("KIND", 10) << "  " << pad("EXPECTED", 8) << "  "
            << pad("SEED", 6) << "  DESCRIPTION\n";
  for (const auto& r : all) {
    std::cout << pad(r.name, name_w) << "  " << pad(recipes::to_string(r.kind), 10) << "  "
              << pad(recipes::to_string(r.expected), 8) << "  " << pad(r.seed, 6) << "  "
              << r.description << "\n";
  }
}

int run_list(const Command&, const Args& args) {
  const auto& all = recipes::registry();
  if (!args.has("json")) {
    print_table(all);
    return kExitOk;
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : all) {
    out.push_back({{"name", r.name},
                   {"kind", recipes::to_string(r.kind)},
                   {"expected", recipes::to_string(r.expected)},
                   {"description", r.description},
                   {"seed", r.seed}});
  }
  std::cout << out.dump(2) << "\n";
  return kExitOk;
}

#else  // !LOCKSTEP_HAVE_RECIPES

int run_list(const Command&, const Args&) {
  std::cerr << "lockstep list: the recipe registry (recipes/) is not part of this build yet. "
               "Pull the latest sources and run ./lockstep list again.\n";
  return kExitFailure;
}

#endif

}  // namespace

const Command kListCommand = {
    .name = "list",
    .summary = "List the recipes and deliberately broken variants lockstep knows.",
    .positional = "",
    .flags = {{"json", "", "print a JSON array of {name, kind, expected, description, seed}"}},
    .run = run_list,
};

}  // namespace lockstep::cli
