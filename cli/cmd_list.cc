// `lockstep list [--json]`: the recipe registry (recipes/registry.h), correct recipes first.
#include <algorithm>
#include <ostream>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "properties/claims.h"
#include "recipes/registry.h"

namespace lockstep::cli {
namespace {

// One row per recipe, columns padded to their widest cell.
void print_table(const std::vector<recipes::RecipeInfo>& all, std::ostream& out) {
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "KIND", "EXPECTED", "SEED", "DESCRIPTION"}};
  for (const auto& r : all) {
    rows.push_back({r.name, recipes::to_string(r.kind), recipes::to_string(r.expected), r.seed,
                    r.description});
  }
  print_columns(rows, out);
}

int run_list(const Command&, const Args& args, const Io& io) {
  const auto& all = recipes::registry();
  if (!args.has("json")) {
    print_table(all, io.out);
    return kExitOk;
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : all) {
    const properties::Claims claims = properties::claims_for(r);
    nlohmann::json claimed = nlohmann::json::array();
    for (properties::Property p : claims.properties) claimed.push_back(properties::to_string(p));
    nlohmann::json survives = nlohmann::json::array();
    for (sim::FaultKind k : claims.survives) survives.push_back(zk::fault_name(k));
    rows.push_back({{"name", r.name},
                    {"kind", recipes::to_string(r.kind)},
                    {"expected", recipes::to_string(r.expected)},
                    {"description", r.description},
                    {"seed", r.seed},
                    {"claims", claimed},
                    {"survives", survives},
                    {"caught_by", claims.must_violate
                                      ? nlohmann::json(properties::to_string(*claims.must_violate))
                                      : nlohmann::json(nullptr)}});
  }
  io.out << rows.dump(2) << "\n";
  return kExitOk;
}

}  // namespace

const Command kListCommand = {
    .name = "list",
    .summary = "List the recipes and deliberately broken variants lockstep knows.",
    .positional = "",
    .flags = {{"json", "",
               "print a JSON array of {name, kind, expected, description, seed, claims, "
               "survives, caught_by}: what the registration promises and what must catch a "
               "broken variant"}},
    .run = run_list,
    .details = "exit: 0, or 2 for a usage error\n",
};

}  // namespace lockstep::cli
