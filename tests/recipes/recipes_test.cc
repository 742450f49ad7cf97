// Scripted simulator scenarios for the correct recipes: grants, queue order, every fault they
// claim to survive, re-entrancy, ownership, and S7 safety reporting.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "recipes/queue_lock.h"
#include "recipes/registry.h"
#include "tests/recipes/scenario_test_util.h"

namespace lockstep::recipes::testing {
namespace {

using sim::FaultKind;
using zk::Error;
using zk::milliseconds;

constexpr zk::Duration kSettle = Scenario::kSettle;

// Options for a party of a recipe: the read-write lock as a writer, the semaphore with 1 lease,
// so that every recipe behaves as a mutex in the generic tests.
LockOptions mutex_like(const RecipeInfo& r) {
  LockOptions o;
  if (r.kind == Kind::kReadWrite) o.role = Role::kWrite;
  return o;
}

std::vector<const RecipeInfo*> correct_recipes() {
  std::vector<const RecipeInfo*> out;
  for (const RecipeInfo& r : registry()) {
    if (r.expected == Expected::kCorrect) out.push_back(&r);
  }
  return out;
}

// How many nodes a waiter queued behind a holder owns: none for the exclusive lock (it only
// watches), its gate and lease nodes for the gated semaphore, else its one contender node.
size_t waiter_nodes(std::string_view recipe) {
  if (recipe == "exclusive") return 0;
  return recipe == "semaphore-gated" ? 2 : 1;
}

// Releases the current holder whenever there is one, until `grants` grants happened.
void drain_queue(Scenario& s, size_t grants, zk::Duration step = milliseconds(20)) {
  for (int i = 0; i < 200 && s.grant_order.size() < grants; ++i) {
    for (auto& p : s.parties) {
      if (p->holds()) s.release(*p);
    }
    s.run_for(step);
  }
  for (auto& p : s.parties) {
    if (p->holds()) s.release(*p);
  }
  s.run_for(step);
}

// `ps` queue up (Scenario::queue_up) and every holder releases as soon as it holds: the
// grants, those before the queue included, go to c1, c2, ... (every party of `s`, in join
// order), never two at once.
void expect_granted_in_queue_order(Scenario& s, const std::vector<Party*>& ps) {
  s.queue_up(ps);
  drain_queue(s, s.parties.size());
  std::vector<std::string> in_join_order;
  for (size_t i = 1; i <= s.parties.size(); ++i) in_join_order.push_back("c" + std::to_string(i));
  EXPECT_EQ(s.grant_order, in_join_order);
  EXPECT_EQ(s.max_holders, 1);
}

TEST(Registry, ListsEveryRecipeAndVariantCorrectFirstThenByName) {
  // The registry names every seed recipe and at least the required broken variants, in order.
  const auto& reg = registry();
  for (const char* name :
       {"exclusive", "fair-mutex", "naive-mutex", "read-write", "semaphore", "election"}) {
    const RecipeInfo* r = find_recipe(name);
    ASSERT_NE(r, nullptr) << name;
    EXPECT_EQ(r->expected, Expected::kCorrect) << name;
  }
  for (const char* name : {"broken/no-id-in-name", "broken/timeout-leaves-node", "broken/no-relist",
                           "broken/ignores-expiry", "broken/watch-first",
                           "broken/seed001-exclusive", "broken/sort-by-name"}) {
    const RecipeInfo* r = find_recipe(name);
    ASSERT_NE(r, nullptr) << name;
    EXPECT_EQ(r->expected, Expected::kBroken) << name;
  }
  EXPECT_EQ(find_recipe("no-such-recipe"), nullptr);
  EXPECT_EQ(find_recipe("election")->kind, Kind::kElection);
  EXPECT_EQ(find_recipe("read-write")->kind, Kind::kReadWrite);
  EXPECT_EQ(find_recipe("semaphore")->kind, Kind::kSemaphore);
  bool seen_broken = false;
  for (size_t i = 0; i < reg.size(); ++i) {
    EXPECT_FALSE(reg[i].description.empty()) << reg[i].name;
    EXPECT_FALSE(reg[i].seed.empty()) << reg[i].name;
    EXPECT_TRUE(static_cast<bool>(reg[i].make)) << reg[i].name;
    EXPECT_EQ(reg[i].name.rfind("broken/", 0) == 0, reg[i].expected == Expected::kBroken);
    if (reg[i].expected == Expected::kBroken) seen_broken = true;
    if (reg[i].expected == Expected::kCorrect) {
      EXPECT_FALSE(seen_broken) << reg[i].name;
    }
    if (i > 0 && reg[i].expected == reg[i - 1].expected) {
      EXPECT_LT(reg[i - 1].name, reg[i].name);
    }
  }
}

// Every registration states its promises: a broken variant says which property must catch it
// (one its kind does not already make it pass by construction: it is judged), a correct recipe
// never carries an exposure, and the fair recipes claim FIFO (the seeds document it).
TEST(Registry, EveryRegistrationStatesItsPromises) {
  for (const RecipeInfo& r : registry()) {
    EXPECT_EQ(r.exposure.has_value(), r.expected == Expected::kBroken) << r.name;
    if (r.exposure) {
      EXPECT_GE(r.exposure->min_clients, 2u) << r.name;
      EXPECT_TRUE(r.promises.claims.empty()) << r.name << ": a broken variant claims nothing more";
    }
  }
  const std::set<Property> mutex_defaults = kind_promises(Kind::kMutex);
  EXPECT_EQ(mutex_defaults.count(Property::kFencedSafety), 1u);
  EXPECT_EQ(mutex_defaults.count(Property::kFifo), 0u);
  EXPECT_EQ(kind_promises(Kind::kSemaphore).count(Property::kFencedSafety), 0u);
  for (const char* fair : {"fair-mutex", "naive-mutex", "read-write", "election"}) {
    EXPECT_EQ(find_recipe(fair)->promises.claims.count(Property::kFifo), 1u) << fair;
  }
  EXPECT_EQ(find_recipe("exclusive")->promises.claims.count(Property::kFifo), 0u);
  EXPECT_EQ(find_recipe("broken/watch-first")->exposure->caught_by, Property::kHerdFree);
}

// A user's recipes join the registry only before anyone has read it (cli::main_with_recipes
// adds them first thing; examples/my_recipe's my_lockstep shows it working): afterwards the
// registry is one immutable table and add_recipes says why it refuses.
TEST(Registry, AddingRecipesAfterTheRegistryWasReadIsRefused) {
  ASSERT_FALSE(registry().empty());
  RecipeInfo mine = *find_recipe("fair-mutex");
  mine.name = "example/late";
  const size_t before = registry().size();
  EXPECT_NE(add_recipes({mine}).find("read already"), std::string::npos);
  EXPECT_EQ(registry().size(), before);
  EXPECT_EQ(find_recipe("example/late"), nullptr);
}

TEST(Contenders, ParseIgnoresForeignChildrenAndSortsAcrossTheSignedWrap) {
  // Names are parsed after their last marker; sorting relative to our sequence keeps creation
  // order across 2147483647 -> -2147483648, which plain int or name order get wrong.
  const std::vector<std::string> names = {"_c_b-1x0-lock--2147483648", "foreign",
                                          "_c_a-1x0-lock-2147483647",  "lock-12",
                                          "_c_c-1x0-lock--2147483647", "_c_lock-x-lock-0000000001"};
  std::vector<Contender> cs = parse_contenders(names, {"lock-"});
  ASSERT_EQ(cs.size(), 4u);  // "foreign" and "lock-12" (not a %010d suffix) are ignored
  EXPECT_EQ(cs[3].name, "_c_lock-x-lock-0000000001");
  EXPECT_EQ(cs[3].seq.value, 1);  // the last marker counts, not one inside the client name
  std::vector<Contender> wrap = parse_contenders(
      {"_c_b-1x0-lock--2147483648", "_c_a-1x0-lock-2147483647", "_c_c-1x0-lock--2147483647"},
      {"lock-"});
  sort_contenders(&wrap, zk::Sequence{INT32_MIN}, SortOrder::kSequence);
  EXPECT_EQ(wrap[0].name, "_c_a-1x0-lock-2147483647");
  EXPECT_EQ(wrap[1].name, "_c_b-1x0-lock--2147483648");
  EXPECT_EQ(wrap[2].name, "_c_c-1x0-lock--2147483647");
  sort_contenders(&wrap, zk::Sequence{INT32_MIN}, SortOrder::kSignedValue);
  EXPECT_EQ(wrap[0].name, "_c_b-1x0-lock--2147483648");
  std::vector<Contender> rw = parse_contenders(
      {"_c_read-1-2x0-write-0000000003", "_c_w-1x0-read-0000000002"}, {"read-", "write-"});
  ASSERT_EQ(rw.size(), 2u);
  EXPECT_EQ(rw[0].marker, 1u);
  EXPECT_EQ(rw[0].seq.value, 3);
  EXPECT_EQ(rw[1].marker, 0u);
}

// What a waiter asks of the queue ahead of it, answered from a parsed listing: every question
// detail::Ahead answers, as text, to compare the two ways of answering.
std::string ask_ahead(detail::Ahead& a) {
  std::string out = "count1=" + std::to_string(a.count_up_to(1)) +
                    " count3=" + std::to_string(a.count_up_to(3));
  if (a.count_up_to(1) > 0) out += " nearest=" + std::string(a.nearest().name);
  for (size_t m = 0; m < 2; ++m) {
    const detail::ContenderView* c = a.nearest_with_marker(m);
    out += " marker" + std::to_string(m) + "=" + (c != nullptr ? std::string(c->name) : "-");
  }
  const size_t n = a.size();
  out += " size=" + std::to_string(n);
  if (n > 0) out += " first=" + std::string(a.first().name);
  for (size_t k = 0; k < n; k += 1 + n / 4) out += " at" + std::to_string(k) + "=" + std::string(a.at(k).name);
  return out;
}

TEST(Contenders, WalkingTheIndexAnswersAsReadingEveryName) {
  // The simulator's listings are versions of a NameLog with an index by sequence suffix, and a
  // waiter walks back from its own node instead of reading every name. For random directories
  // (readers and writers, foreign names, sequences across the signed wrap, names removed while
  // older listings are still held) every answer must be the one reading every name gives.
  const std::vector<std::string> markers = {"read-", "write-"};
  std::mt19937_64 rng(20261126);
  size_t compared = 0, walked = 0;
  for (int round = 0; round < 60; ++round) {
    auto log = std::make_shared<zk::NameLog>();
    const int32_t bases[] = {0, INT32_MAX - 6, -1000000003, 999999995};
    uint32_t next = static_cast<uint32_t>(bases[round % 4]);
    std::vector<std::string> live;
    std::vector<zk::Names> held;  // older listings kept, so removed names stay in the log
    auto key = [](const std::string& n) { return std::hash<std::string>{}(n) * 31u; };
    for (int step = 0; step < 40; ++step) {
      const uint64_t r = rng() % 10;
      if (r < 6 || live.empty()) {
        std::string name;
        if (r == 5) {
          name = (rng() % 2 ? "foreign-" : "x-read--") + zk::format_sequence(zk::Sequence{
                                                              static_cast<int32_t>(rng())});
        } else {
          name = "_c_" + std::to_string(step) + "-1x0-" + markers[rng() % 2] +
                 zk::format_sequence(zk::Sequence{static_cast<int32_t>(next)});
          ++next;
        }
        if (std::find(live.begin(), live.end(), name) != live.end()) continue;
        log->add(key(name), name);
        live.push_back(name);
      } else {
        const size_t i = rng() % live.size();
        log->remove(key(live[i]), live[i]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      }
      if (rng() % 3 == 0) held.push_back(log->listing());
    }
    held.push_back(log->listing());
    for (const zk::Names& indexed : held) {
      ASSERT_TRUE(indexed.indexed());
      const zk::Names plain(indexed.vector());
      ASSERT_FALSE(plain.indexed());
      for (const Contender& mine : parse_contenders(plain, markers)) {
        std::vector<detail::ContenderView> s1, s2;
        std::optional<detail::Ahead> by_walk =
            detail::Ahead::of(indexed, markers, mine.name, mine.seq, SortOrder::kSequence, &s1);
        std::optional<detail::Ahead> by_read =
            detail::Ahead::of(plain, markers, mine.name, mine.seq, SortOrder::kSequence, &s2);
        ASSERT_TRUE(by_walk && by_read) << mine.name;
        EXPECT_EQ(ask_ahead(*by_walk), ask_ahead(*by_read)) << "round " << round << ", " << mine.name;
        ++compared;
        walked += by_walk->size() > 0 ? 1 : 0;
      }
      std::vector<detail::ContenderView> s;
      EXPECT_FALSE(detail::Ahead::of(indexed, markers, "_c_gone-1x0-read-0000000001",
                                     zk::Sequence{1}, SortOrder::kSequence, &s));
    }
  }
  EXPECT_GT(compared, 1000u);
  EXPECT_GT(walked, compared / 2);
}

TEST(EveryCorrectRecipe, AcquiresAndReleasesAloneLeavingNoNode) {
  // One client acquires each correct recipe, gets a fencing token, and its release removes the
  // node.
  for (const RecipeInfo* r : correct_recipes()) {
    SCOPED_TRACE(r->name);
    Scenario s;
    Party& a = s.join(r->name, mutex_like(*r));
    s.acquire_and_settle(a);
    ASSERT_TRUE(a.acquired.done);
    ASSERT_EQ(a.acquired.error, Error::kOk);
    EXPECT_TRUE(a.holds());
    EXPECT_EQ(a.lock->state(), LockState::kHeld);
    EXPECT_GT(a.acquired.grant.fencing_token, 0);
    EXPECT_EQ(a.acquired.grant.hold_count, 1u);
    EXPECT_EQ(s.children().size(), 1u);
    s.release_and_settle(a);
    ASSERT_TRUE(a.released.done);
    EXPECT_EQ(a.released.error, Error::kOk);
    EXPECT_EQ(a.lock->state(), LockState::kIdle);
    EXPECT_TRUE(s.children().empty());
    EXPECT_EQ(a.lock->name(), r->name);
  }
}

TEST(EveryCorrectRecipe, ContendersNeverHoldTogetherAndTokensIncrease) {
  // Four clients contend (staggered 3 ms apart); each release hands the lock on; at most one
  // holds at any slice and every grant's fencing token exceeds the previous one.
  for (const RecipeInfo* r : correct_recipes()) {
    SCOPED_TRACE(r->name);
    Scenario s;
    const std::vector<Party*> ps = s.join_many(4, r->name, mutex_like(*r));
    s.queue_up(ps);
    int64_t last_token = 0;
    for (int i = 0; i < 4; ++i) {
      Party* holder = nullptr;
      for (Party* p : ps) {
        if (p->holds()) holder = p;
      }
      ASSERT_NE(holder, nullptr) << "grant " << i;
      EXPECT_GT(holder->acquired.grant.fencing_token, last_token);
      last_token = holder->acquired.grant.fencing_token;
      s.release_and_settle(*holder);
    }
    EXPECT_EQ(s.max_holders, 1);
    EXPECT_EQ(s.grant_order.size(), 4u);
    EXPECT_TRUE(s.children().empty());
  }
}

TEST(QueueRecipes, GrantInQueueOrder) {
  // The queue recipes grant in creation (sequence) order: three waiters queued 3 ms apart
  // behind a holder are granted c1, c2, c3, c4.
  for (const char* name :
       {"fair-mutex", "naive-mutex", "election", "read-write", "semaphore", "semaphore-gated"}) {
    SCOPED_TRACE(name);
    Scenario s;
    expect_granted_in_queue_order(s, s.join_many(4, name, mutex_like(*find_recipe(name))));
  }
}

TEST(FairMutex, WaitersWatchOnlyTheirPredecessor) {
  // With five waiters queued, each release notifies exactly one client (no herd).
  Scenario s;
  const std::vector<Party*> ps = s.join_many(6, "fair-mutex");
  s.queue_up(ps);
  drain_queue(s, 6);
  const HerdFigures h = herd_under(s.world, "/locks/test");
  EXPECT_EQ(h.releases, 6u);
  EXPECT_LE(h.max_per_release, 1u);
  EXPECT_EQ(h.notifications, 5u);
}

TEST(Crash, NextWaiterAcquiresAfterTheSessionTimeout) {
  // S9: the holder's process dies; its session expires on the server after the timeout, its
  // node goes, and the waiter acquires then (not before).
  for (const char* name : {"fair-mutex", "exclusive", "naive-mutex", "election"}) {
    SCOPED_TRACE(name);
    Scenario s;
    Party& a = s.join(name);
    Party& b = s.join(name);
    s.one_after_another(a, b);
    ASSERT_TRUE(a.holds());
    ASSERT_FALSE(b.acquired.done);
    const zk::Time crash_at = s.now();
    s.inject(FaultKind::kCrash, 1);
    s.run_for(zk::seconds(3));
    ASSERT_TRUE(b.acquired.done);
    EXPECT_EQ(b.acquired.error, Error::kOk);
    const zk::Duration waited = b.acquired.at - crash_at;
    EXPECT_GE(waited, milliseconds(500)) << zk::to_string(waited);
    EXPECT_LE(waited, milliseconds(1500)) << zk::to_string(waited);
    EXPECT_TRUE(b.holds());
  }
}

TEST(AmbiguousCreate, LostCreateReplyOnAFreeLockIsAdopted) {
  // S6: the contender create is applied but its reply is lost; after reconnecting the client
  // finds its own node (per-attempt id, or the exclusive node's ephemeral owner), adopts it and
  // holds with exactly one node.
  for (const RecipeInfo* r : correct_recipes()) {
    SCOPED_TRACE(r->name);
    Scenario s;
    Party& a = s.join(r->name, mutex_like(*r));
    Party& setup = s.join(r->name, mutex_like(*r));
    // setup creates the directory, so that a's next mutation is its contender create.
    s.acquire_and_settle(setup);
    s.release_and_settle(setup);
    s.inject(FaultKind::kLoseNextReply, 1);
    s.acquire_and_settle(a);
    ASSERT_TRUE(a.acquired.done);
    EXPECT_EQ(a.acquired.error, Error::kOk);
    EXPECT_EQ(a.stats().ambiguous_creates, 1u);
    EXPECT_EQ(a.stats().adopted, 1u);
    EXPECT_GT(a.acquired.grant.fencing_token, setup.acquired.grant.fencing_token);
    EXPECT_EQ(s.children().size(), 1u) << "no orphan";
    s.release_and_settle(a);
    EXPECT_TRUE(s.children().empty());
  }
}

TEST(AmbiguousCreate, LostCreateReplyWhileQueuedIsAdoptedNoOrphan) {
  // S6: the same lost reply while another client holds: the client adopts its queued node,
  // is granted after the holder's release, and no orphan is left.
  for (const char* name :
       {"fair-mutex", "naive-mutex", "semaphore", "semaphore-gated", "election"}) {
    SCOPED_TRACE(name);
    Scenario s;
    Party& a = s.join(name);
    Party& b = s.join(name);
    s.acquire_and_settle(b);  // b creates the directory and holds
    ASSERT_TRUE(b.holds());
    s.inject(FaultKind::kLoseNextReply, 1);
    s.acquire_and_settle(a);
    EXPECT_EQ(a.stats().ambiguous_creates, 1u);
    EXPECT_EQ(a.stats().adopted, 1u);
    EXPECT_EQ(s.children().size(), 1 + waiter_nodes(name)) << "no orphan";
    s.release_and_settle(b);
    ASSERT_TRUE(a.acquired.done);
    EXPECT_EQ(a.acquired.error, Error::kOk);
    EXPECT_TRUE(a.holds());
    s.release_and_settle(a);
    EXPECT_TRUE(s.children().empty()) << "no orphan";
  }
}

TEST(AmbiguousCreate, NodeOfAnOlderSessionIsNotAdopted) {
  // S6: only a node whose ephemeral owner is the current session is adopted; after the session
  // expired and the handle was reopened, the client queues a fresh node.
  Scenario s;
  Party& a = s.join("fair-mutex");
  s.acquire_and_settle(a);
  ASSERT_TRUE(a.holds());
  s.inject(FaultKind::kExpireSession, 1);
  s.run_for(zk::seconds(2));
  EXPECT_EQ(a.lock->state(), LockState::kLost);
  s.release_and_settle(a);
  a.client->reopen();
  s.acquire_and_settle(a);
  ASSERT_TRUE(a.acquired.done);
  EXPECT_EQ(a.acquired.error, Error::kOk);
  EXPECT_EQ(a.stats().adopted, 0u);
  EXPECT_EQ(s.children().size(), 1u);
}

TEST(AmbiguousCreate, LostCreateReplyReCheckedOnALaggingServerIsAdoptedNotOrphaned) {
  // S6 on an ensemble (exclusive seeds 9212, 52494, 182560): a waits with a deadline while b
  // holds; server 2 starts applying writes 50 ms late and a's next create loses its reply. b
  // releases, a's create wins the lock on the leader and a reconnects to server 2, which has
  // applied neither b's delete nor a's create: a plain exists() there shows b's node, so a would
  // take its own node for b's and leave it behind at its deadline. The synced re-check finds it
  // and adopts it.
  sim::WorldOptions o;
  o.servers = 3;
  Scenario s(o, reconnect_to_second(o.seed, 2));
  Party& a = s.join("exclusive");
  Party& b = s.join("exclusive");
  s.acquire_and_settle(b);
  s.acquire(a, milliseconds(40));
  s.run_for(milliseconds(10));
  s.world.inject(lagging(2, s.now(), zk::seconds(1), milliseconds(50)));
  s.inject(FaultKind::kLoseNextReply, 1);
  s.release_and_settle(b);
  EXPECT_EQ(a.client->server(), 2u) << "the script must send a's reconnect to the lagging server";
  ASSERT_TRUE(a.acquired.done);
  EXPECT_EQ(a.acquired.error, Error::kOk);
  EXPECT_TRUE(a.holds());
  EXPECT_EQ(a.stats().adopted, 1u);
  std::optional<sim::NodeView> n = s.world.node("/locks/test/lock");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->stat.ephemeral_owner, a.client->id());
  EXPECT_EQ(s.max_holders, 1);
}

TEST(TimedAcquire, TimeoutDeletesOwnNodeAndTheQueueMovesOn) {
  // S5: a waiter whose deadline passes returns kOperationTimeout and removes its node, so the
  // waiter behind it is granted when the holder releases.
  for (const char* name :
       {"fair-mutex", "naive-mutex", "semaphore", "semaphore-gated", "election", "read-write"}) {
    SCOPED_TRACE(name);
    Scenario s;
    const RecipeInfo* r = find_recipe(name);
    Party& a = s.join(name, mutex_like(*r));
    Party& b = s.join(name, mutex_like(*r));
    Party& c = s.join(name, mutex_like(*r));
    s.holder_and_two_waiters(a, b, c, milliseconds(100));
    ASSERT_TRUE(b.acquired.done);
    EXPECT_EQ(b.acquired.error, Error::kOperationTimeout);
    EXPECT_EQ(b.lock->state(), LockState::kIdle);
    EXPECT_EQ(b.stats().cleanups, 1u);
    EXPECT_EQ(s.children().size(), 1 + waiter_nodes(name)) << "b's node is gone";
    s.release_and_settle(a);
    EXPECT_TRUE(c.holds());
    EXPECT_EQ(s.max_holders, 1);
  }
}

TEST(TimedAcquire, CleanupDeleteRetriesThroughALostReply) {
  // S5: the timeout's delete is applied but its reply is lost; the recipe retries, sees the
  // node gone, and reports the timeout with nothing left behind.
  Scenario s;
  Party& a = s.join("fair-mutex");
  Party& b = s.join("fair-mutex");
  s.acquire_and_settle(a);
  s.acquire(b, milliseconds(100));
  s.run_for(milliseconds(50));
  s.inject(FaultKind::kLoseNextReply, 2);  // b's next mutation is the cleanup delete
  s.run_for(kSettle);
  ASSERT_TRUE(b.acquired.done);
  EXPECT_EQ(b.acquired.error, Error::kOperationTimeout);
  EXPECT_GE(b.stats().remove_retries, 1u);
  EXPECT_EQ(s.children().size(), 1u);
}

// b queues behind a holder and is interrupted `after` its acquire began: by its deadline
// (timeout) or by a cancellation. Its acquire must end with that error and leave no node.
void interrupt_early(bool cancel, zk::Duration after) {
  SCOPED_TRACE(after.us);
  Scenario s;
  Party& a = s.join("fair-mutex");
  Party& b = s.join("fair-mutex");
  s.acquire_and_settle(a);
  s.acquire(b, cancel ? zk::Duration{-1} : after);
  if (cancel) {
    s.run_for(after);
    s.inject(FaultKind::kCancel, 2, {}, "acquire");
  }
  s.run_for(kSettle);
  ASSERT_TRUE(b.acquired.done);
  EXPECT_EQ(b.acquired.error, cancel ? Error::kCancelled : Error::kOperationTimeout);
  EXPECT_EQ(s.children().size(), 1u);
}

TEST(TimedAcquire, DeadlineWhileCreateIsInFlightLeavesNoNode) {
  // S5/S6: deadlines that fall while the contender create is in flight (swept over 0-1.2 ms)
  // end in kOperationTimeout with the possibly created node found and removed.
  for (int us = 0; us <= 1200; us += 100) interrupt_early(false, zk::microseconds(us));
}

TEST(Cancellation, CancelledWaiterDeletesItsNode) {
  // S5: a waiting acquire cancelled by the caller (FaultKind::kCancel) returns kCancelled and
  // removes its node; the waiter behind it is granted next.
  for (const char* name :
       {"fair-mutex", "exclusive", "naive-mutex", "semaphore", "semaphore-gated"}) {
    SCOPED_TRACE(name);
    Scenario s;
    Party& a = s.join(name);
    Party& b = s.join(name);
    Party& c = s.join(name);
    s.holder_and_two_waiters(a, b, c);
    s.inject(FaultKind::kCancel, 2, {}, "acquire");
    s.run_for(kSettle);
    ASSERT_TRUE(b.acquired.done);
    EXPECT_EQ(b.acquired.error, Error::kCancelled);
    EXPECT_EQ(b.lock->state(), LockState::kIdle);
    EXPECT_EQ(s.children().size(), 1 + waiter_nodes(name)) << "b's node is gone";
    s.release_and_settle(a);
    EXPECT_TRUE(c.holds());
  }
}

TEST(Cancellation, CleanupDeleteRetriesThroughALostReply) {
  // S5: a cancelled waiter's cleanup delete is applied but its reply is lost; the recipe
  // retries, sees the node gone and returns kCancelled with nothing left behind.
  Scenario s;
  Party& a = s.join("fair-mutex");
  Party& b = s.join("fair-mutex");
  s.one_after_another(a, b);
  s.inject(FaultKind::kLoseNextReply, 2);  // b's next mutation is the cleanup delete
  s.inject(FaultKind::kCancel, 2, {}, "acquire");
  s.run_for(kSettle);
  ASSERT_TRUE(b.acquired.done);
  EXPECT_EQ(b.acquired.error, Error::kCancelled);
  EXPECT_GE(b.stats().remove_retries, 1u);
  EXPECT_EQ(s.children().size(), 1u);
}

TEST(Cancellation, CancelAtAnyEarlyAwaitLeavesNoNode) {
  // S5/S6: cancellations landing anywhere in the first 1.5 ms of an acquire (create in flight,
  // list, watch) all end with kCancelled and no node of the cancelled client.
  for (int us = 0; us <= 1500; us += 100) interrupt_early(true, zk::microseconds(us));
}

TEST(Expiry, HolderLearnsItLostTheLockAndTheNextWaiterHolds) {
  // S7: the server expires the holder's session; the holder's state turns kLost and lost()
  // completes, while the waiter is granted.
  for (const char* name :
       {"fair-mutex", "exclusive", "naive-mutex", "semaphore", "semaphore-gated", "election"}) {
    SCOPED_TRACE(name);
    Scenario s;
    Party& a = s.join(name);
    Party& b = s.join(name);
    s.one_after_another(a, b);
    s.watch_lost(a);
    s.run_for(milliseconds(5));
    EXPECT_FALSE(a.lost.done);
    s.inject(FaultKind::kExpireSession, 1);
    s.run_for(zk::seconds(2));
    EXPECT_EQ(a.lock->state(), LockState::kLost);
    EXPECT_TRUE(a.lost.done);
    EXPECT_TRUE(b.holds());
    // The lost holder's release is accepted (there is nothing left to delete).
    s.release_and_settle(a);
    EXPECT_EQ(a.released.error, Error::kOk);
    EXPECT_EQ(a.lock->state(), LockState::kIdle);
  }
}

TEST(Expiry, AbandonedSessionIsLostAtOnceWhileTheServerStillHoldsIt) {
  // S7: the client library gives up the session on its own (kAbandonSession): the holder is
  // kLost at once, although the server keeps the node until the session times out; the
  // waiter is granted only then.
  Scenario s;
  Party& a = s.join("fair-mutex");
  Party& b = s.join("fair-mutex");
  s.one_after_another(a, b);
  s.watch_lost(a);
  s.inject(FaultKind::kAbandonSession, 1);
  s.run_for(milliseconds(5));
  EXPECT_EQ(a.lock->state(), LockState::kLost);
  EXPECT_TRUE(a.lost.done);
  EXPECT_FALSE(b.holds()) << "the server still holds a's session and node";
  s.run_for(zk::seconds(2));
  EXPECT_TRUE(b.holds());
}

// Steps `s`'s world one event at a time until client `client` logs an event of `kind` whose
// text starts with `prefix` (at most 10,000 steps); false if it never does.
bool step_until_logged(Scenario& s, uint32_t client, std::string_view kind,
                       std::string_view prefix) {
  for (int i = 0; i < 10000; ++i) {
    const size_t seen = s.world.log().events().size();
    if (!s.world.step()) return false;
    const std::vector<sim::LoggedEvent>& ev = s.world.log().events();
    for (size_t j = seen; j < ev.size(); ++j) {
      if (ev[j].client == client && ev[j].kind == kind &&
          std::string_view(ev[j].text).substr(0, prefix.size()) == prefix) {
        return true;
      }
    }
  }
  return false;
}

TEST(Expiry, GatedSemaphoreLeaseLostWhileTheGateIsReleasedIsNotGranted) {
  // S7/S10 (semaphore-gated seed 10578): a wins a lease and is cut off from every server just as
  // it sends the gate's delete; the gate's release waits through the partition until the
  // session has expired, taking the lease with it. acquire fails with kSessionExpired instead of
  // granting the dead lease, and the Lock works again on a new session.
  Scenario s;
  LockOptions opts;
  opts.max_leases = 2;
  Party& a = s.join("semaphore-gated", opts);
  s.run_for(milliseconds(50));
  s.acquire(a);
  ASSERT_TRUE(step_until_logged(s, 1, "send", "delete /locks/test/locks/"));
  s.inject(FaultKind::kPartition, 1, zk::seconds(3));
  s.run_for(zk::seconds(4));
  ASSERT_TRUE(a.acquired.done);
  EXPECT_EQ(a.acquired.error, Error::kSessionExpired);
  EXPECT_FALSE(a.holds());
  EXPECT_EQ(a.lock->state(), LockState::kIdle);
  a.client->reopen();
  s.acquire_and_settle(a);
  EXPECT_EQ(a.acquired.error, Error::kOk);
  EXPECT_TRUE(a.holds());
}

TEST(Expiry, AGrantReadAfterTheClientLearnedItsSessionDiedIsNotGranted) {
  // S7/S8 (election seed 258703): the listing that makes a lone contender the holder arrives,
  // and the client pauses before the code that reads it runs; while it is paused its library
  // gives the session up. When it runs again the acquire must fail with kSessionExpired, not
  // grant a node that goes with the session (for the election: not announce that leader). The
  // pause is injected as the reply is logged; whether the code that reads it runs first is the
  // scheduler's choice, so world seeds are tried until the pause comes between (most do).
  for (const char* name : {"fair-mutex", "election", "naive-mutex"}) {
    int between = 0;
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      SCOPED_TRACE(std::string(name) + " world seed " + std::to_string(seed));
      sim::WorldOptions wo;
      wo.seed = seed;
      Scenario s(wo);
      Party& a = s.join(name);
      s.run_for(milliseconds(50));
      s.acquire(a);
      ASSERT_TRUE(step_until_logged(s, 1, "reply", "get_children"));
      s.inject(FaultKind::kPause, 1, milliseconds(700));
      s.run_for(milliseconds(10));
      if (a.acquired.done) continue;  // the grant ran before the pause: a real grant
      ++between;
      s.inject(FaultKind::kAbandonSession, 1);
      s.run_for(zk::seconds(2));
      ASSERT_TRUE(a.acquired.done);
      EXPECT_EQ(a.acquired.error, Error::kSessionExpired);
      EXPECT_FALSE(a.holds());
    }
    EXPECT_GT(between, 0) << name;
  }
}

TEST(Expiry, WaiterFailsWithSessionExpired) {
  // S7: a waiter whose session expires wakes from its watch and fails with kSessionExpired.
  Scenario s;
  Party& a = s.join("fair-mutex");
  Party& b = s.join("fair-mutex");
  s.one_after_another(a, b);
  s.inject(FaultKind::kExpireSession, 2);
  s.run_for(zk::seconds(2));
  ASSERT_TRUE(b.acquired.done);
  EXPECT_EQ(b.acquired.error, Error::kSessionExpired);
  EXPECT_EQ(s.children().size(), 1u);
}

TEST(Close, WaiterWhoseSessionIsClosedFailsAtAnyMoment) {
  // The waiter's session is closed at each moment of its create/list/watch (swept 0-3 ms),
  // including while a watch-arming read is in flight (its reply may still arrive after the
  // close): the acquire always ends with kSessionExpired instead of waiting forever.
  for (const char* name : {"fair-mutex", "naive-mutex", "exclusive", "semaphore-gated"}) {
    for (int us = 0; us <= 3000; us += 100) {
      SCOPED_TRACE(std::string(name) + " +" + std::to_string(us) + "us");
      Scenario s;
      Party& a = s.join(name);
      Party& b = s.join(name);
      s.acquire_and_settle(a);
      s.acquire(b);
      s.run_for(zk::microseconds(us));
      s.inject(FaultKind::kCloseSession, 2);
      s.run_for(kSettle);
      ASSERT_TRUE(b.acquired.done);
      EXPECT_EQ(b.acquired.error, Error::kSessionExpired);
      EXPECT_EQ(s.children().size(), 1u);
    }
  }
}

TEST(Disconnect, HolderIsSuspendedThenHeldAgainAfterReconnect) {
  // S7: a connection loss makes the holder kSuspended (lost() completes); after the reconnect
  // within the session timeout its node is still there and it is kHeld again.
  for (const char* name :
       {"fair-mutex", "exclusive", "naive-mutex", "semaphore", "semaphore-gated", "election"}) {
    SCOPED_TRACE(name);
    Scenario s;
    Party& a = s.join(name);
    s.acquire_and_settle(a);
    ASSERT_TRUE(a.holds());
    s.watch_lost(a);
    s.run_for(milliseconds(1));
    s.inject(FaultKind::kConnectionLoss, 1);
    // Less than a round trip: the C client's first reconnect starts at once (sim/timeout_test.cc).
    s.run_for(zk::microseconds(100));
    EXPECT_EQ(a.lock->state(), LockState::kSuspended);
    EXPECT_TRUE(a.lost.done);
    s.run_for(kSettle);
    EXPECT_EQ(a.lock->state(), LockState::kHeld);
    EXPECT_GE(a.stats().monitor_transitions, 2u);
  }
}

TEST(Disconnect, WaiterSurvivesConnectionLossAndIsGrantedAfterwards) {
  // A waiter's connection drops while the holder releases; after reconnecting it re-lists and
  // is granted, with one node in the directory.
  Scenario s;
  Party& a = s.join("fair-mutex");
  Party& b = s.join("fair-mutex");
  s.one_after_another(a, b);
  s.inject(FaultKind::kConnectionLoss, 2);
  s.release_and_settle(a);
  ASSERT_TRUE(b.acquired.done);
  EXPECT_EQ(b.acquired.error, Error::kOk);
  EXPECT_TRUE(b.holds());
  EXPECT_EQ(s.children().size(), 1u);
}

TEST(PredecessorGone, WaiterReListsWhenItsPredecessorVanishesBeforeTheWatch) {
  // The holder releases at every moment of the waiter's create/list/get_data (swept over 0-3 ms):
  // the waiter is always granted; in some runs get_data met kNoNode and the waiter re-listed.
  uint64_t gone = 0;
  for (int us = 0; us <= 3000; us += 100) {
    SCOPED_TRACE(us);
    Scenario s;
    Party& a = s.join("fair-mutex");
    Party& b = s.join("fair-mutex");
    s.acquire_and_settle(a);
    s.acquire(b);
    s.run_for(zk::microseconds(us));
    s.release_and_settle(a);
    ASSERT_TRUE(b.acquired.done);
    EXPECT_EQ(b.acquired.error, Error::kOk);
    EXPECT_EQ(s.max_holders, 1);
    gone += b.stats().predecessor_gone;
  }
  EXPECT_GT(gone, 0u);
}

TEST(Reentrancy, SameHolderCountsHoldsAndOnlyTheLastReleaseDeletes) {
  // S5: a second acquire by the holder returns at once with hold_count 2 and the same token;
  // the first release keeps the lock, the second deletes the node, a third is kNothing.
  Scenario s;
  Party& a = s.join("fair-mutex");
  s.acquire_and_settle(a);
  const Grant first = a.acquired.grant;
  s.acquire(a);
  s.run_for(milliseconds(1));
  ASSERT_TRUE(a.acquired.done);
  EXPECT_EQ(a.acquired.grant.hold_count, 2u);
  EXPECT_EQ(a.acquired.grant.fencing_token, first.fencing_token);
  EXPECT_EQ(a.acquired.grant.node, first.node);
  s.release_and_settle(a);
  EXPECT_EQ(a.released.error, Error::kOk);
  EXPECT_TRUE(a.holds());
  EXPECT_EQ(s.children().size(), 1u);
  s.release_and_settle(a);
  EXPECT_FALSE(a.holds());
  EXPECT_TRUE(s.children().empty());
  s.release_and_settle(a);
  EXPECT_EQ(a.released.error, Error::kNothing);
}

TEST(Ownership, ReleaseByANonOwnerIsAnErrorAndChangesNothing) {
  // S5: a client that does not hold the lock gets kNothing from release; the holder keeps it.
  for (const RecipeInfo* r : correct_recipes()) {
    SCOPED_TRACE(r->name);
    Scenario s;
    Party& a = s.join(r->name, mutex_like(*r));
    Party& b = s.join(r->name, mutex_like(*r));
    s.acquire_and_settle(a);
    s.release_and_settle(b);
    EXPECT_EQ(b.released.error, Error::kNothing);
    EXPECT_TRUE(a.holds());
    EXPECT_EQ(s.children().size(), 1u);
  }
}

TEST(Release, DeleteWithALostReplyIsRetriedNeverForgotten) {
  // S5: the release's delete is applied but the reply is lost; the release retries, sees the
  // node gone, and returns kOk; the waiter is granted.
  for (const char* name : {"fair-mutex", "exclusive"}) {
    SCOPED_TRACE(name);
    Scenario s;
    Party& a = s.join(name);
    Party& b = s.join(name);
    s.one_after_another(a, b);
    s.inject(FaultKind::kLoseNextReply, 1);
    s.release_and_settle(a);
    EXPECT_EQ(a.released.error, Error::kOk);
    EXPECT_GE(a.stats().remove_retries, 1u);
    EXPECT_TRUE(b.holds());
    EXPECT_EQ(s.children().size(), 1u);
  }
}

TEST(Release, DeleteLostInFlightIsRetried) {
  // S5: the connection drops while the release's delete is in flight and the delete never
  // reaches the server; the release retries after reconnecting, so the node is gone.
  sim::WorldOptions o;
  Scenario s(o, std::make_unique<LoseInFlight>(o.seed));
  Party& a = s.join("fair-mutex");
  Party& b = s.join("fair-mutex");
  s.one_after_another(a, b);
  s.release(a);
  s.run_for(zk::microseconds(50));
  s.inject(FaultKind::kConnectionLoss, 1);
  s.run_for(kSettle);
  EXPECT_EQ(a.released.error, Error::kOk);
  EXPECT_GE(a.stats().remove_retries, 1u);
  EXPECT_TRUE(b.holds());
  EXPECT_EQ(s.children().size(), 1u);
}

TEST(ReadWrite, ReadersShareWritersExclude) {
  // S4: two readers hold together; a writer queued behind them waits for both; a reader queued
  // behind the writer waits for the writer.
  Scenario s;
  const LockOptions rd = with_role(Role::kRead), wr = with_role(Role::kWrite);
  Party& r1 = s.join("read-write", rd);
  Party& r2 = s.join("read-write", rd);
  Party& w = s.join("read-write", wr);
  Party& r3 = s.join("read-write", rd);
  s.queue_up({&r1, &r2, &w, &r3});
  EXPECT_TRUE(r1.holds());
  EXPECT_TRUE(r2.holds());
  EXPECT_FALSE(w.holds());
  EXPECT_FALSE(r3.holds());
  s.release_and_settle(r1);
  EXPECT_FALSE(w.holds());
  s.release_and_settle(r2);
  EXPECT_TRUE(w.holds());
  EXPECT_FALSE(r3.holds());
  s.release_and_settle(w);
  EXPECT_TRUE(r3.holds());
  EXPECT_FALSE(s.rw_violation);
}

TEST(ReadWrite, ReaderWaitsOnlyForTheNearestEarlierWriter) {
  // S4: with W1 R1 W2 R2 queued, R2 watches W2 (not R1), and readers never block readers.
  Scenario s;
  const LockOptions rd = with_role(Role::kRead), wr = with_role(Role::kWrite);
  Party& w1 = s.join("read-write", wr);
  Party& r1 = s.join("read-write", rd);
  Party& w2 = s.join("read-write", wr);
  Party& r2 = s.join("read-write", rd);
  s.queue_up({&w1, &r1, &w2, &r2});
  EXPECT_TRUE(w1.holds());
  s.release_and_settle(w1);
  EXPECT_TRUE(r1.holds());
  EXPECT_FALSE(w2.holds());
  EXPECT_FALSE(r2.holds());
  s.release_and_settle(r1);
  EXPECT_TRUE(w2.holds());
  s.release_and_settle(w2);
  EXPECT_TRUE(r2.holds());
  EXPECT_FALSE(s.rw_violation);
  // Each waiter was woken once: by the node it watched.
  EXPECT_EQ(r2.stats().wakeups, 1u);
}

TEST(Semaphore, AtMostNHoldersAndOutOfOrderReleasesHandLeasesOn) {
  // S10: with 2 leases and 4 clients, two hold; when the second holder leaves first, the
  // third client gets its lease at once; never more than 2 hold.
  for (const char* name : {"semaphore", "semaphore-gated"}) {
    SCOPED_TRACE(name);
    Scenario s;
    LockOptions o;
    o.max_leases = 2;
    const std::vector<Party*> ps = s.join_many(4, name, o);
    s.queue_up(ps);
    EXPECT_TRUE(ps[0]->holds());
    EXPECT_TRUE(ps[1]->holds());
    EXPECT_FALSE(ps[2]->holds());
    s.release_and_settle(*ps[1]);
    EXPECT_TRUE(ps[2]->holds());
    EXPECT_FALSE(ps[3]->holds());
    s.release_and_settle(*ps[0]);
    EXPECT_TRUE(ps[3]->holds());
    EXPECT_EQ(s.max_holders, 2);
  }
}

TEST(Semaphore, NeverMoreThanNUnderRacesAndFaults) {
  // S10: eight clients cycle on a 3-lease semaphore while connections drop and replies are
  // lost; at no slice do more than 3 hold, and every client is granted.
  for (const char* name : {"semaphore", "semaphore-gated"}) {
    SCOPED_TRACE(name);
    Scenario s;
    LockOptions o;
    o.max_leases = 3;
    const std::vector<Party*> ps = s.join_many(8, name, o);
    s.run_for(milliseconds(50));
    for (Party* p : ps) s.cycle(*p, milliseconds(20));
    for (uint32_t c = 1; c <= 8; ++c) {
      s.run_for(milliseconds(7));
      s.inject(c % 2 == 0 ? FaultKind::kConnectionLoss : FaultKind::kLoseNextReply, c);
    }
    s.run_for(zk::seconds(2));
    EXPECT_LE(s.max_holders, 3);
    EXPECT_EQ(s.grant_order.size(), 8u);
    EXPECT_TRUE(s.children().empty());
  }
}

zk::Task<void> ask_leader(ElectionCandidate* c, std::string* out) {
  zk::Result<std::string> r = co_await c->leader();
  *out = r.ok() ? r.value : std::string("error:") + zk::error_name(r.error);
}

TEST(Election, LeaderIsObservableStepsDownOnExpiryAndANewLeaderIsElected) {
  // S8: three candidates; c1 leads and everyone sees it; c1's session expires, c1 learns it
  // must step down (kLost), and c2 is elected and seen as leader.
  Scenario s;
  const std::vector<Party*> ps = s.join_many(3, "election");
  s.queue_up(ps);
  EXPECT_TRUE(ps[0]->holds());
  std::string seen;
  ps[2]->client->spawn(ask_leader(dynamic_cast<ElectionCandidate*>(ps[2]->lock.get()), &seen),
                       "ask");
  s.run_for(kSettle);
  EXPECT_EQ(seen, "c1");
  s.watch_lost(*ps[0]);
  s.inject(FaultKind::kExpireSession, 1);
  s.run_for(zk::seconds(2));
  EXPECT_TRUE(ps[0]->lost.done);
  EXPECT_EQ(ps[0]->lock->state(), LockState::kLost);
  EXPECT_TRUE(ps[1]->holds());
  EXPECT_FALSE(ps[2]->holds());
  ps[2]->client->spawn(ask_leader(dynamic_cast<ElectionCandidate*>(ps[2]->lock.get()), &seen),
                       "ask");
  s.run_for(kSettle);
  EXPECT_EQ(seen, "c2");
  s.release_and_settle(*ps[1]);  // c2 resigns: c3 leads
  EXPECT_TRUE(ps[2]->holds());
}

TEST(SequenceWrap, FairMutexKeepsQueueOrderAcrossInt32Max) {
  // The parent's counter is set to 2147483646: nodes get 2147483646, 2147483647, -2147483648;
  // the queue stays in creation order and exclusive.
  for (const char* name : {"fair-mutex", "naive-mutex", "read-write"}) {
    SCOPED_TRACE(name);
    Scenario s;
    const RecipeInfo* r = find_recipe(name);
    Party& setup = s.join(name, mutex_like(*r));
    s.acquire_and_settle(setup);  // creates the directory
    s.release_and_settle(setup);
    s.world.set_sequence_counter("/locks/test", INT32_MAX - 1);
    expect_granted_in_queue_order(s, s.join_many(3, name, mutex_like(*r)));
  }
}

TEST(ForeignChildren, AreIgnoredByTheQueue) {
  // A foreign persistent child in the lock directory does not block or confuse the fair mutex.
  Scenario s;
  Party& a = s.join("fair-mutex");
  Party& b = s.join("fair-mutex");
  s.acquire_and_settle(a);
  s.inject(FaultKind::kForeignChild, 0, {}, "/locks/test/zz-foreign");
  s.acquire_and_settle(b);
  s.release_and_settle(a);
  EXPECT_TRUE(b.holds());
  s.release_and_settle(b);
  EXPECT_TRUE(s.children().empty());
  EXPECT_EQ(s.world.node("/locks/test")->children, (std::vector<std::string>{"zz-foreign"}));
}

}  // namespace
}  // namespace lockstep::recipes::testing
