// The CI soak window: every correct recipe of the registry passes a fixed window of seeds with
// its default faults (issue "Trustworthy verdicts"). A false alarm that a fix brings back fails
// `./lockstep test` here, at the same seeds every time, with the command that reproduces it.
//
// The window is kSoakSeeds seeds per correct recipe (seeds 1..kSoakSeeds), split over two
// worker processes; LOCKSTEP_SOAK_SEEDS overrides the count (e.g. 1000000 for a release soak).
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "properties/check.h"
#include "recipes/registry.h"

namespace lockstep::properties {
namespace {

constexpr uint64_t kSoakSeeds = 50000;

uint64_t soak_seeds() {
  const char* env = std::getenv("LOCKSTEP_SOAK_SEEDS");
  if (env == nullptr || *env == '\0') return kSoakSeeds;
  return std::strtoull(env, nullptr, 10);
}

// Every correct recipe passes every property it claims in each of the window's seeds, with the
// default fault mix (any violation prints the table and the reproduce command, and fails).
TEST(Soak, EveryCorrectRecipePassesTheFixedSeedWindow) {
  std::vector<std::string> args = {
      "check", "--seeds",    std::to_string(soak_seeds()), "--first-seed", "1", "--jobs",
      "2",     "--no-traces"};
  size_t correct = 0;
  for (const recipes::RecipeInfo& r : recipes::registry()) {
    if (r.expected != recipes::Expected::kCorrect) continue;
    args.push_back("--recipe");
    args.push_back(r.name);
    ++correct;
  }
  ASSERT_GE(correct, 7u);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  const int code = check_main(static_cast<int>(argv.size()), argv.data(), out, err);
  std::printf("%s", out.str().c_str());
  EXPECT_EQ(code, 0) << out.str() << err.str();
  EXPECT_NE(out.str().find("every recipe behaved as expected"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace lockstep::properties
