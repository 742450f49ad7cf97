// lockstep properties: what each recipe in the registry claims, and what each deliberately
// broken variant must be caught by, as its registration states them (recipes/registry.h:
// kind_promises, Promises, Exposure); claims_for turns them into what is judged.
//
// A correct recipe claims a set of properties and a set of fault kinds it survives. A property
// is judged in a scenario only if every fault kind present in the scenario is one the recipe
// survives and the property does not exclude it. Belief-level mutual exclusion cannot hold
// under a process pause, a server-side expiry the holder has not heard of yet, or an operator's
// delete of the holder's node (delete-node, delete-dir: ZooKeeper tells watchers, never the
// owner) (the holder believes on while the next client holds — that is what fencing tokens are
// for): under those
// faults fenced safety speaks for exclusion, mutual exclusion is judged only in its informed
// form (no belief after the client was told its session died), and FIFO is not judged.
//
// A broken variant names the one property that must catch it, and the fault kinds (and
// workload features) that expose its bug, which the generator then favours.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "properties/checkers.h"
#include "properties/generator.h"
#include "properties/scenario.h"
#include "recipes/registry.h"
#include "sim/world.h"

namespace lockstep::properties {

struct Claims {
  std::set<Property> properties;         // judged for this recipe (when the faults allow)
  std::set<sim::FaultKind> survives;     // fault kinds a correct recipe claims to survive
  bool reentrant = false;                // exercise re-entrant acquires
  std::optional<Property> must_violate;  // broken variants: the property that must catch it
  std::set<sim::FaultKind> focus;        // broken variants: faults that expose the bug
  std::string stall_task;                // broken variants: the task a stall holds ("": any)
  bool needs_timeouts = false;           // broken variants: timed acquires expose the bug
  bool needs_wrap = false;               // broken variants: the sequence wrap exposes the bug
  uint32_t min_clients = 2;
  uint32_t nodes_per_acquire = 1;  // Promises::nodes_per_acquire (progress)
  bool shared_callers = false;     // Promises::shared_callers: several callers on one Lock
  bool capacity_node = false;      // Promises::capacity_node: set-capacity faults
  bool needs_shared_callers = false;  // broken variants: shared callers expose the bug
  bool needs_long_holds = false;      // broken variants: only a long hold exposes the bug
};

Claims claims_for(const recipes::RecipeInfo& recipe);

// The fault kinds under which belief-level mutual exclusion and FIFO are not claimed by
// anyone: a holder or waiter acts on what it read before its session died on the server.
bool breaks_belief(sim::FaultKind k);

// Is `p` judged for a recipe with `claims` in scenario `s`?
bool judged(Property p, const Claims& claims, const Scenario& s);

// Generator options for a recipe (its kind, the fault kinds it survives or, for a broken
// variant, every kind with its focus), restricted to `allowed` when that is not empty.
GenerateOptions generate_options(const recipes::RecipeInfo& recipe, const Claims& claims,
                                 const std::set<sim::FaultKind>& allowed);

}  // namespace lockstep::properties
