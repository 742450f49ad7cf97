// lockstep recipes: the one registry of recipes and deliberately broken variants.
//
// Every recipe the tool knows is an entry here: its name, its kind, whether it is expected to
// be correct, a one-line description (for a broken variant: the bug it carries), the seed it
// comes from, and a factory. What each recipe claims (properties, faults survived) and which
// property must catch each broken variant are kept by properties/claims.h. The CLI (`lockstep list`,
// `lockstep check`), the property suites and the tests all enumerate this one list; adding a
// variant of your own is adding one entry (see README "Add your own variant").
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "recipes/lock.h"
#include "zk/session.h"

namespace lockstep::recipes {

enum class Kind : uint8_t { kMutex, kReadWrite, kSemaphore, kElection };
enum class Expected : uint8_t { kCorrect, kBroken };

const char* to_string(Kind k);      // "mutex", "read-write", "semaphore", "election"
const char* to_string(Expected e);  // "correct", "broken"

using LockFactory = std::function<std::unique_ptr<Lock>(zk::Session&, const LockOptions&)>;

struct RecipeInfo {
  std::string name;  // "fair-mutex", "broken/no-id-in-name", ...
  Kind kind = Kind::kMutex;
  Expected expected = Expected::kCorrect;
  std::string description;  // for a broken variant: its bug, in one line
  std::string seed;         // which seed document / DESIGN row it comes from ("S2", "001 §1")
  LockFactory make;
};

// In a fixed order: correct recipes first, then broken variants, each group by name.
const std::vector<RecipeInfo>& registry();
// nullptr when no recipe has that name.
const RecipeInfo* find_recipe(std::string_view name);

}  // namespace lockstep::recipes
