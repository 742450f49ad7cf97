// lockstep recipes: the one registry of recipes and deliberately broken variants.
//
// Every recipe the tool knows is an entry here: its name, its kind, whether it is expected to
// be correct, a one-line description (for a broken variant: the bug it carries), the seed it
// comes from, a factory, and its promises: the properties it claims beyond its kind's (FIFO,
// herd-freedom), the fault kinds it claims to survive, and for a broken variant the property
// that must catch it and what exposes the bug. properties/claims.h turns the promises into what
// `lockstep check` judges; a property nobody claimed shows as "unclaimed". The CLI (`lockstep
// list`, `lockstep check`), the property suites and the tests all enumerate this one list;
// adding a variant of your own is adding one entry (see README "Add your own variant").
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "recipes/lock.h"
#include "recipes/promises.h"
#include "zk/faults.h"
#include "zk/session.h"

namespace lockstep::recipes {

enum class Kind : uint8_t { kMutex, kReadWrite, kSemaphore, kElection };
enum class Expected : uint8_t { kCorrect, kBroken };

const char* to_string(Kind k);      // "mutex", "read-write", "semaphore", "election"
const char* to_string(Expected e);  // "correct", "broken"

using LockFactory = std::function<std::unique_ptr<Lock>(zk::Session&, const LockOptions&)>;

// What every recipe of a kind is judged on: mutual exclusion (N holders for a semaphore),
// liveness, no orphans, re-entrancy, timeout cleanup, and for a mutex or an election fenced
// safety (its tokens fence the resource).
std::set<Property> kind_promises(Kind kind);

// What a recipe promises beyond its kind's (kind_promises).
struct Promises {
  std::set<Property> claims = {};         // e.g. {kFifo, kHerdFree}
  std::set<zk::FaultKind> survives = {};  // fault kinds it survives; empty: every kind drawn
  // Lock nodes one acquire creates when nothing goes wrong (progress): 1 for a queue lock, 2
  // for a semaphore that queues on a gate mutex before it creates its lease.
  uint32_t nodes_per_acquire = 1;
  // One Lock may be used by several tasks of a client at once (LockOptions::shared_callers):
  // each caller task is its own holder, with its own grant and hold count, like Curator's
  // InterProcessMutex used from several threads, whose lock data is per thread. The workload
  // then runs several callers per client on one Lock.
  bool shared_callers = false;
  // A semaphore that reads its capacity from LockOptions::capacity_path (Curator's
  // InterProcessSemaphoreV2 with a SharedCountReader): set-capacity faults are drawn for it.
  bool capacity_node = false;
};

// How a broken variant is caught: the property that must catch it, and what exposes its bug
// (the generator favours these).
struct Exposure {
  Property caught_by = Property::kMutualExclusion;
  std::set<zk::FaultKind> focus = {};  // fault kinds that expose it (always drawn)
  bool needs_timeouts = false;    // timed acquires expose it
  bool needs_wrap = false;        // the sequence counter's signed wrap exposes it
  uint32_t min_clients = 2;       // fewer clients cannot show it
  std::string stall_task = {};    // with kStall in focus: the client task a stall holds
  bool needs_shared_callers = false;  // several tasks on one Lock expose it (always drawn)
  // Only a hold that outlasts a timer exposes it (a contender node's TTL, the liveness grace
  // while a lease ahead stays held): explore's scopes, whose holds last 1-4 ms, then hold long.
  bool needs_long_holds = false;
};

struct RecipeInfo {
  std::string name;  // "fair-mutex", "broken/no-id-in-name", ...
  Kind kind = Kind::kMutex;
  Expected expected = Expected::kCorrect;
  std::string description;  // for a broken variant: its bug, in one line
  std::string seed;         // which seed document / DESIGN row it comes from ("S2", "001 §1")
  LockFactory make;
  Promises promises;
  std::optional<Exposure> exposure;  // set for a broken variant (expected == kBroken)
};

// In a fixed order: correct recipes first, then broken variants, each group by name.
const std::vector<RecipeInfo>& registry();

// Adds a user's own recipes to the built-in ones (cli::main_with_recipes does it for a user's
// binary). Only before anything has read the registry: it is one immutable table from then on.
// "" when added; otherwise why not (the registry was read already, an empty or taken name, a
// name that does not start with "broken/" exactly when the recipe is a broken variant, a broken
// variant without an Exposure, a correct one with one, no factory), and nothing is added.
std::string add_recipes(std::vector<RecipeInfo> recipes);
// nullptr when no recipe has that name.
const RecipeInfo* find_recipe(std::string_view name);

}  // namespace lockstep::recipes
