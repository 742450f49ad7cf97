// The property suites over the registry, in the simulator: every correct recipe passes every
// property that applies to it under each fault kind it claims (RapidCheck, shrinking on
// failure), every broken variant is caught by its expected property within a fixed seed
// budget, pauses break belief-level exclusion but not fencing, runs are deterministic, and a
// failure shrinks to a small scenario.
//
// Seeds are fixed (derived from each test's name); LOCKSTEP_SEEDS=N multiplies the number of
// scenarios per property. A RapidCheck failure prints RapidCheck's reproduction string and the
// shrunk scenario with its report, and saves the shrunk scenario's run as a trace under
// $LOCKSTEP_TRACE_DIR (default <build dir>/traces/failures) with the command that replays it.
// (This test links lockstep_traces, see traces/CMakeLists.txt; the properties library does not.)
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "properties/rc_gen.h"
#include "properties/suite.h"
#include "traces/record.h"
#include "traces/trace.h"
#include "zk/random.h"

namespace lockstep::properties {
namespace {

using recipes::Expected;
using recipes::RecipeInfo;
using sim::FaultKind;

// `base` scenarios, times LOCKSTEP_SEEDS when set (a positive integer).
int scaled(int base) {
  const char* env = std::getenv("LOCKSTEP_SEEDS");
  const int k = env != nullptr ? std::atoi(env) : 1;
  return base * (k > 0 ? k : 1);
}

// Runs a RapidCheck property with a seed fixed by `id`; returns "" or the failure message
// (with RapidCheck's reproduction string).
template <class Testable>
std::string rc_check(const std::string& id, int count, Testable&& testable) {
  rc::detail::TestParams params;
  params.seed = zk::fnv1a(id);
  params.maxSuccess = count;
  params.maxSize = 100;
  rc::detail::TestMetadata metadata;
  metadata.id = id;
  metadata.description = id;
  const auto result = rc::detail::checkTestable(std::forward<Testable>(testable), metadata, params);
  if (result.template is<rc::detail::SuccessResult>()) return {};
  std::ostringstream out;
  rc::detail::printResultMessage(result, out);
  // The seed is fixed by the test's name, so re-running the test replays the same search.
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  out << "\nreproduce: ./properties_test --gtest_filter='" << t->test_suite_name() << "."
      << t->name() << "'";
  const char* env = std::getenv("LOCKSTEP_SEEDS");
  if (env != nullptr) out << " with LOCKSTEP_SEEDS=" << env;
  return out.str();
}

// A hand-written scenario: `clients` clients x `rounds` rounds with `faults`, holds of `hold`
// and thinks of at most `think_max` (the defaults when zero), finished as a generated one is.
Scenario hand_written(uint64_t seed, uint32_t clients, uint32_t rounds,
                      std::vector<sim::Fault> faults, zk::Duration hold = {},
                      zk::Duration think_max = {}) {
  Scenario s;
  s.seed = seed;
  s.workload.clients = clients;
  s.workload.rounds = rounds;
  if (think_max > zk::Duration{}) s.workload.think_max = think_max;
  if (hold > zk::Duration{}) s.workload.hold_min = s.workload.hold_max = hold;
  s.faults = std::move(faults);
  finish_scenario(&s);
  return s;
}

// One fault of `kind` on client `client` (and `server`), `at` after the start.
sim::Fault fault_at(FaultKind kind, zk::Duration at, uint32_t client, zk::Duration duration = {},
                    uint32_t server = 0) {
  sim::Fault f;
  f.kind = kind;
  f.at = zk::Time{} + at;
  f.client = client;
  f.server = server;
  f.duration = duration;
  return f;
}

// A semaphore of `leases` leases whose count lives in a capacity node (so a set-capacity fault
// can change it): `clients` clients x `rounds` rounds, holds of hold_min..hold_max. Not finished
// (the caller adds its faults and seed).
Scenario counted_semaphore(uint32_t clients, uint32_t rounds, uint32_t leases,
                           zk::Duration hold_min, zk::Duration hold_max) {
  Scenario s;
  s.workload.kind = recipes::Kind::kSemaphore;
  s.workload.clients = clients;
  s.workload.rounds = rounds;
  s.workload.max_leases = leases;
  s.workload.hold_min = hold_min;
  s.workload.hold_max = hold_max;
  s.workload.capacity_path = s.workload.lock_path + "-capacity";
  return s;
}

// A set-capacity fault on `s`'s capacity node, `at` after the start: the count becomes `count`.
sim::Fault set_capacity_at(const Scenario& s, zk::Duration at, uint32_t count) {
  sim::Fault f = fault_at(FaultKind::kSetCapacity, at, 1);
  f.path = s.workload.capacity_path;
  f.count = count;
  return f;
}

// Where a failing property's shrunk counterexample goes: $LOCKSTEP_TRACE_DIR, else
// <build dir>/traces/failures.
std::string trace_dir() {
  return traces::failure_trace_dir(std::string(LOCKSTEP_BUILD_DIR) + "/traces/failures");
}

struct Search {
  std::string failure;               // "": every scenario passed; else what to print
  std::optional<Scenario> smallest;  // the shrunk counterexample
  std::string trace;                 // its saved trace ("" when not saved)
};

// Runs RapidCheck over scenarios of `recipe` generated with `o` (seed fixed by `id`): a scenario
// fails when `property` is violated (any property when nullopt). On failure the shrunk
// counterexample (the last failing scenario: RapidCheck keeps each failing shrink) is recorded
// and saved as a trace under `dir`; `failure` then holds RapidCheck's message, the scenario's
// report, the trace's path and the replay and show commands.
Search search(const std::string& id, int count, const RecipeInfo& recipe, const GenerateOptions& o,
              std::optional<Property> property, const std::string& dir) {
  const Claims claims = claims_for(recipe);
  Search out;
  std::string last_report;
  out.failure = rc_check(id, count, [&] {
    const Scenario s = *rcgen::scenario(o);
    const SeedOutcome so = run_scenario(recipe, claims, s);
    const Verdict* v = property ? so.verdict(*property) : so.first_violation();
    if (v != nullptr && !v->ok) {
      out.smallest = s;
      last_report = report(recipe, so);
      RC_FAIL(std::string(to_string(v->property)) + " violated");
    }
  });
  if (out.failure.empty() || !out.smallest) return out;
  std::string error;
  out.trace = traces::save_scenario_failure(recipe, *out.smallest, dir, &error);
  std::ostringstream note;
  note << out.failure << "\nshrunk scenario:\n" << last_report;
  if (out.trace.empty()) {
    note << "the trace could not be saved: " << error << "\n";
  } else {
    traces::print_replay_command(note, out.trace);
  }
  out.failure = note.str();
  return out;
}

std::vector<const RecipeInfo*> recipes_of(Expected e) {
  std::vector<const RecipeInfo*> out;
  for (const RecipeInfo& r : recipes::registry()) {
    if (r.expected == e) out.push_back(&r);
  }
  return out;
}

std::string test_name(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

// ---- correct recipes, one fault kind at a time -----------------------------------------------

struct RecipeFault {
  const RecipeInfo* recipe;
  std::optional<FaultKind> fault;  // nullopt: no faults
};

void PrintTo(const RecipeFault& rf, std::ostream* os) {
  *os << rf.recipe->name << " under " << (rf.fault ? fault_name(*rf.fault) : "no faults");
}

std::vector<RecipeFault> correct_cases() {
  std::vector<RecipeFault> out;
  for (const RecipeInfo* r : recipes_of(Expected::kCorrect)) {
    out.push_back({r, std::nullopt});
    for (FaultKind k : claims_for(*r).survives) out.push_back({r, k});
  }
  return out;
}

class CorrectRecipe : public ::testing::TestWithParam<RecipeFault> {};

// A correct recipe, driven through generated scenarios whose fault plans use one fault kind
// (or none), passes every property that applies to it; a failure shrinks and is reported.
TEST_P(CorrectRecipe, PassesEveryPropertyUnderItsClaimedFault) {
  const RecipeInfo& recipe = *GetParam().recipe;
  const Claims claims = claims_for(recipe);
  std::set<FaultKind> only;
  if (GetParam().fault) only.insert(*GetParam().fault);
  GenerateOptions o = generate_options(recipe, claims, only);
  if (!GetParam().fault) o.faults.clear();
  o.focus = o.faults;
  o.wrap_percent = 0;  // the wrap has its own test
  o.max_rounds = 5;
  const Search r = search(::testing::UnitTest::GetInstance()->current_test_info()->name(),
                          scaled(6), recipe, o, std::nullopt, trace_dir());
  EXPECT_TRUE(r.failure.empty()) << r.failure;
}

INSTANTIATE_TEST_SUITE_P(Registry, CorrectRecipe, ::testing::ValuesIn(correct_cases()),
                         [](const ::testing::TestParamInfo<RecipeFault>& info) {
                           return test_name(
                               info.param.recipe->name + "_" +
                               (info.param.fault ? fault_name(*info.param.fault) : "no_faults"));
                         });

class CorrectRecipeWrap : public ::testing::TestWithParam<const RecipeInfo*> {};

// A correct recipe keeps every property when its lock directory's sequence counter crosses the
// signed 32-bit wrap (2147483647 is followed by -2147483648) during the run.
TEST_P(CorrectRecipeWrap, PassesAcrossTheSequenceWrap) {
  const RecipeInfo& recipe = *GetParam();
  const Claims claims = claims_for(recipe);
  GenerateOptions o = generate_options(recipe, claims, {});
  o.faults.clear();
  o.focus.clear();
  o.wrap_percent = 100;
  const Search r = search("wrap/" + recipe.name, scaled(10), recipe, o, std::nullopt, trace_dir());
  EXPECT_TRUE(r.failure.empty()) << r.failure;
}

INSTANTIATE_TEST_SUITE_P(Registry, CorrectRecipeWrap,
                         ::testing::ValuesIn(recipes_of(Expected::kCorrect)),
                         [](const ::testing::TestParamInfo<const RecipeInfo*>& info) {
                           return test_name(info.param->name);
                         });

// ---- broken variants -------------------------------------------------------------------------

class BrokenVariant : public ::testing::TestWithParam<const RecipeInfo*> {};

// Each deliberately broken variant is caught by the property its claims name, within the
// first 200 seeds of `lockstep check` (the canary that proves the suite bites).
TEST_P(BrokenVariant, IsCaughtByItsExpectedProperty) {
  const RecipeInfo& recipe = *GetParam();
  const Claims claims = claims_for(recipe);
  ASSERT_TRUE(claims.must_violate.has_value())
      << recipe.name << " has no expected property in properties/claims.cc";
  const uint64_t budget = 200;
  for (uint64_t seed = 1; seed <= budget; ++seed) {
    const SeedOutcome so = run_seed(recipe, claims, seed);
    const Verdict* v = so.verdict(*claims.must_violate);
    if (v != nullptr && !v->ok) {
      SUCCEED() << recipe.name << " caught at seed " << seed << ": " << v->message;
      return;
    }
  }
  ADD_FAILURE() << recipe.name << ": " << to_string(*claims.must_violate)
                << " was never violated in " << budget << " seeds";
}

// The three variants of the server-side properties are caught by nothing else: in every one of
// their first 300 seeds, every property that is violated is the one they name (bounded-load,
// progress, server-exclusion), and it is violated in several of them. Their bugs are invisible
// to beliefs: a polling waiter still acquires, a restarting one still acquires in order, and an
// impatient one steals only under a pause, which excuses belief-level exclusion.
TEST(ServerSideVariants, AreCaughtOnlyByTheirOwnProperty) {
  for (const char* name :
       {"broken/predecessor-by-arithmetic", "broken/restart-when-predecessor-gone",
        "broken/steals-after-patience"}) {
    SCOPED_TRACE(name);
    const RecipeInfo* recipe = recipes::find_recipe(name);
    ASSERT_NE(recipe, nullptr);
    const Claims claims = claims_for(*recipe);
    ASSERT_TRUE(claims.must_violate.has_value());
    uint64_t caught = 0;
    for (uint64_t seed = 1; seed <= 300; ++seed) {
      const SeedOutcome so = run_seed(*recipe, claims, seed);
      for (const Verdict& v : so.verdicts) {
        if (v.ok) continue;
        EXPECT_EQ(v.property, *claims.must_violate)
            << "seed " << seed << ": " << to_string(v.property) << ": " << v.message;
        caught += v.property == *claims.must_violate ? 1 : 0;
      }
    }
    std::printf("[server-side] %s caught by %s in %llu of 300 seeds\n", name,
                to_string(*claims.must_violate), static_cast<unsigned long long>(caught));
    EXPECT_GE(caught, 10u);
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, BrokenVariant,
                         ::testing::ValuesIn(recipes_of(Expected::kBroken)),
                         [](const ::testing::TestParamInfo<const RecipeInfo*>& info) {
                           return test_name(info.param->name);
                         });

// A fresh directory for one test's traces (unique, so concurrent test processes never share
// one), removed afterwards.
class TraceDir {
 public:
  explicit TraceDir(const std::string& name)
      : path_(::testing::TempDir() + "lockstep-properties-" + name + "-XXXXXX") {
    if (::mkdtemp(path_.data()) == nullptr) std::abort();
  }
  ~TraceDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A broken variant's RapidCheck failure shrinks to a small scenario: two or three clients, a
// round or two, no faults (broken/sort-by-name needs nothing but two contenders).
TEST(Shrinking, BrokenVariantShrinksToASmallScenario) {
  const RecipeInfo* recipe = recipes::find_recipe("broken/sort-by-name");
  ASSERT_NE(recipe, nullptr);
  GenerateOptions o = generate_options(*recipe, claims_for(*recipe), {});
  o.faults = {FaultKind::kConnectionLoss, FaultKind::kDelay};  // noise the shrinker must drop
  o.focus.clear();
  const TraceDir dir("shrink");
  const Search r =
      search("shrink/sort-by-name", 100, *recipe, o, Property::kMutualExclusion, dir.path());
  ASSERT_FALSE(r.failure.empty()) << "the broken variant was not caught in 100 scenarios";
  ASSERT_TRUE(r.smallest.has_value());
  EXPECT_LE(r.smallest->workload.clients, 3u) << describe(*r.smallest);
  EXPECT_LE(r.smallest->workload.rounds, 2u) << describe(*r.smallest);
  EXPECT_LE(r.smallest->faults.size(), 1u) << describe(*r.smallest);
}

// A failing property saves its shrunk counterexample as a trace and prints how to replay it:
// forced here with a broken variant through the same search the correct recipes use; the file
// appears under the trace directory, loads, holds the shrunk scenario and the violation, and
// replays exactly.
TEST(FailureTraces, AFailingPropertySavesTheShrunkCounterexample) {
  const RecipeInfo* recipe = recipes::find_recipe("broken/sort-by-name");
  ASSERT_NE(recipe, nullptr);
  GenerateOptions o = generate_options(*recipe, claims_for(*recipe), {});
  o.faults.clear();
  o.focus.clear();
  const TraceDir dir("failure");
  const Search r = search("trace/sort-by-name", 50, *recipe, o, std::nullopt, dir.path());
  ASSERT_FALSE(r.failure.empty()) << "the broken variant was not caught in 50 scenarios";
  ASSERT_FALSE(r.trace.empty()) << r.failure;
  EXPECT_EQ(std::filesystem::path(r.trace).parent_path(), std::filesystem::path(dir.path()));
  EXPECT_TRUE(std::filesystem::exists(r.trace));
  EXPECT_NE(r.failure.find("trace saved: " + r.trace), std::string::npos) << r.failure;
  EXPECT_NE(r.failure.find("./lockstep replay " + r.trace), std::string::npos) << r.failure;
  EXPECT_NE(r.failure.find("./lockstep show " + r.trace), std::string::npos) << r.failure;
  traces::LoadError error;
  const std::optional<traces::Trace> t = traces::load_trace(r.trace, &error);
  ASSERT_TRUE(t.has_value()) << error.message;
  EXPECT_EQ(describe(t->scenario), describe(*r.smallest));
  ASSERT_NE(t->violation(), nullptr);
  const traces::ReplayResult replay = traces::replay_trace(*t, *recipe);
  EXPECT_FALSE(replay.divergence.has_value())
      << replay.divergence->where << " #" << replay.divergence->index;
  EXPECT_EQ(replay.replayed.log_hash, t->log_hash);
}

// Without LOCKSTEP_TRACE_DIR the suites save under the build directory, not the source tree.
TEST(FailureTraces, DefaultDirectoryIsInTheBuildTree) {
  if (std::getenv("LOCKSTEP_TRACE_DIR") == nullptr) {
    EXPECT_EQ(trace_dir(), std::string(LOCKSTEP_BUILD_DIR) + "/traces/failures");
  } else {
    EXPECT_EQ(trace_dir(), std::getenv("LOCKSTEP_TRACE_DIR"));
  }
}

// ---- pauses: belief breaks, fencing holds ------------------------------------------------------

// A holder paused past its session timeout still believes it holds when the next client is
// granted: strict belief-level exclusion breaks (as it must), while fenced safety and the
// informed form of exclusion hold, and the resource rejects the paused holder's stale token.
TEST(Pause, BreaksBeliefLevelExclusionButNotFencedSafety) {
  const RecipeInfo* recipe = recipes::find_recipe("fair-mutex");
  ASSERT_NE(recipe, nullptr);
  int broken_beliefs = 0;
  int rejected_stale = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const sim::Fault pause =
        fault_at(FaultKind::kPause, zk::milliseconds(8), 1 + static_cast<uint32_t>(seed % 2),
                 Scenario{}.session_timeout * 2);
    const Scenario s = hand_written(seed, 2, 2, {pause}, zk::milliseconds(20), zk::milliseconds(2));
    const RunResult run = run_in_sim(recipe->make, s);
    const Verdict strict = check_mutual_exclusion(run.history, recipe->kind, 1, false);
    const Verdict informed = check_mutual_exclusion(run.history, recipe->kind, 1, true);
    const Verdict fenced = check_fenced_safety(run.history);
    EXPECT_TRUE(fenced.ok) << "seed " << seed << ": " << fenced.message;
    EXPECT_TRUE(informed.ok) << "seed " << seed << ": " << informed.message;
    if (!strict.ok) ++broken_beliefs;
    for (const Event& e : run.history.events()) {
      if ((e.op == Op::kEnter || e.op == Op::kLeave) && e.type == Type::kFail) {
        ++rejected_stale;
        break;
      }
    }
  }
  EXPECT_GT(broken_beliefs, 0) << "no seed made a paused holder overlap the next one";
  EXPECT_GT(rejected_stale, 0) << "the resource never had to reject a stale token";
}

// A lost reply armed while its client holds the lock is taken at the client's next mutating
// request, the release's delete, long after the plan's heal: the run's heal is when it was taken,
// so nothing after the plan's heal is judged as healed while a fault still acts (semaphore-gated
// seed 777261: armed at 0.072 s, taken at 2.154 s; the reconnect it caused held a waiter up while
// the room was free, and the lost wake-up clause, judging from the plan's heal, took it for one).
TEST(ArmedFaults, ALostReplyTakenAfterThePlansHealMovesTheRunsHeal) {
  const RecipeInfo* recipe = recipes::find_recipe("fair-mutex");
  ASSERT_NE(recipe, nullptr);
  // The client holds from about 10 ms to 310 ms; the lost reply is armed at 100 ms.
  const Scenario s =
      hand_written(3, 1, 1, {fault_at(FaultKind::kLoseNextReply, zk::milliseconds(100), 1)},
                   zk::milliseconds(300), zk::microseconds(1));
  ASSERT_EQ(s.heal_at, zk::Time{} + zk::milliseconds(101));
  const RunResult run = run_in_sim(recipe->make, s);
  const zk::Time plan_heal = run.start + (s.heal_at - zk::Time{});
  // The release: its delete is sent when the hold ends, and its reply is the one lost.
  zk::Time released{};
  for (const Event& e : run.history.events()) {
    if (e.op == Op::kRelease && e.type == Type::kInvoke) released = e.at;
  }
  ASSERT_GT(released, plan_heal + zk::milliseconds(150));
  EXPECT_GE(run.heal_at, released + zk::milliseconds(1));
  EXPECT_LT(run.heal_at, released + zk::milliseconds(20));  // the delete goes out at once
  // Without an armed fault the run's heal is the plan's.
  Scenario calm = s;
  calm.faults.clear();
  finish_scenario(&calm);
  const RunResult quiet = run_in_sim(recipe->make, calm);
  EXPECT_EQ(quiet.heal_at, quiet.start + (calm.heal_at - zk::Time{}));
}

// A client whose session is closed may see the state itself and reopen before its session
// watcher runs; the watcher then learns of the old session's close after the reopen, and must not
// record it as the end of the new one (election seed 904414: c1's session closed and c1 reopened
// at one instant; the close, recorded after the reopen, made c1 "told" its session had ended, and
// its later announcement on a read of a lagging follower was judged a stale one it had been told
// of). Every session end in the history concerns the session the client has then.
TEST(SessionWatch, TheEndOfAReplacedSessionIsNotRecordedAsTheNewOnes) {
  const RecipeInfo* recipe = recipes::find_recipe("election");
  ASSERT_NE(recipe, nullptr);
  const Claims claims = claims_for(*recipe);
  const Scenario s = generate_scenario(904414, generate_options(*recipe, claims, {}));
  const RunResult run = run_in_sim(recipe->make, s);
  bool reopened = false;
  std::map<uint32_t, bool> fresh;  // client -> reopened, its new session not yet connected
  for (const Event& e : run.history.events()) {
    if (e.op == Op::kReopen) {
      fresh[e.client] = true;
      reopened = true;
    }
    if (e.op != Op::kSession) continue;
    if (e.session_state == zk::SessionState::kConnected) fresh[e.client] = false;
    const bool ended = e.session_state == zk::SessionState::kExpired ||
                       e.session_state == zk::SessionState::kClosed;
    EXPECT_FALSE(ended && fresh[e.client])
        << "c" << e.client << "'s session end recorded at #" << e.index
        << " after it reopened and before its new session connected";
  }
  EXPECT_TRUE(reopened) << "the scenario no longer reopens a session: pick another";
  for (const Verdict& v : judge(*recipe, claims, s, run)) {
    EXPECT_TRUE(v.ok) << to_string(v.property) << ": " << v.message;
  }
}

// Rounds that try once without waiting (Lock::try_acquire): with the lock held elsewhere they
// fail after their own requests, without waiting for the holder, and the recipe must leave no
// node; the probe after each proves it. fair-mutex passes every property;
// broken/timeout-leaves-node, which keeps its node on a timeout, is caught by timeout-cleanup in
// the same scenarios.
TEST(TryOnce, FailsAtOnceAndLeavesNoNode) {
  const RecipeInfo* good = recipes::find_recipe("fair-mutex");
  const RecipeInfo* bad = recipes::find_recipe("broken/timeout-leaves-node");
  ASSERT_NE(good, nullptr);
  ASSERT_NE(bad, nullptr);
  int tried = 0, failed = 0, caught = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Scenario s;
    s.seed = seed;
    s.workload.clients = 3;
    s.workload.rounds = 4;
    s.workload.try_percent = 50;
    s.workload.hold_min = zk::milliseconds(50);
    s.workload.hold_max = zk::milliseconds(60);
    finish_scenario(&s);
    const SeedOutcome o = run_scenario(*good, claims_for(*good), s);
    EXPECT_EQ(o.first_violation(), nullptr)
        << "seed " << seed << ": " << o.first_violation()->message;
    for (size_t i = 0; i + 1 < o.run.history.size(); ++i) {
      const Event& e = o.run.history[i];
      if (e.op != Op::kAcquire || e.type != Type::kInvoke || e.text != "try") continue;
      ++tried;
      for (size_t j = i + 1; j < o.run.history.size(); ++j) {
        const Event& done = o.run.history[j];
        if (done.client != e.client || done.op != Op::kAcquire) continue;
        if (done.type == Type::kFail) {
          ++failed;
          EXPECT_EQ(done.error, zk::Error::kOperationTimeout);
          // Its requests (create, list, delete), not a 50 ms hold.
          EXPECT_LT(done.at - e.at, zk::milliseconds(20)) << "a try does not wait";
        }
        break;
      }
    }
    const SeedOutcome b = run_scenario(*bad, claims_for(*bad), s);
    const Verdict* v = b.verdict(Property::kTimeoutCleanup);
    caught += v != nullptr && !v->ok ? 1 : 0;
  }
  EXPECT_GT(tried, 20);
  EXPECT_GT(failed, 5);
  EXPECT_GT(caught, 0);
}

// A leader outage longer than the session timeout: every client's connection drops and its
// reconnects fail until the leader is back, then its session carries on (timers restart when
// the leader returns, as on a real server): no client is told its session expired, and every
// property holds. The seeded sweep draws such outages (GenerateOptions::draw_era 1).
TEST(LongOutage, SessionsSurviveALeaderRestartLongerThanTheirTimeout) {
  const RecipeInfo* recipe = recipes::find_recipe("fair-mutex");
  ASSERT_NE(recipe, nullptr);
  const Scenario s = hand_written(7, 3, 3,
                                  {fault_at(FaultKind::kServerRestart, zk::milliseconds(10), 1,
                                            Scenario{}.session_timeout * 3 / 2, 1)});
  const SeedOutcome o = run_scenario(*recipe, claims_for(*recipe), s);
  EXPECT_EQ(o.first_violation(), nullptr) << o.first_violation()->message;
  int disconnected = 0;
  for (const Event& e : o.run.history.events()) {
    if (e.op != Op::kSession) continue;
    EXPECT_NE(e.session_state, zk::SessionState::kExpired) << describe(e);
    disconnected += e.session_state == zk::SessionState::kConnecting ? 1 : 0;
  }
  EXPECT_GE(disconnected, 3) << "every client lost its connection";
  // The sweep draws them: among the first 200 seeds of fair-mutex, some scenarios have a leader
  // outage longer than the session timeout, and some try once.
  const GenerateOptions go = generate_options(*recipe, claims_for(*recipe), {});
  int long_outages = 0, trying = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const Scenario g = generate_scenario(seed, go);
    trying += g.workload.try_percent > 0 ? 1 : 0;
    for (const sim::Fault& f : g.faults) {
      long_outages +=
          f.kind == FaultKind::kServerRestart && f.server == 1 && f.duration >= g.session_timeout
              ? 1
              : 0;
    }
  }
  EXPECT_GT(long_outages, 10);
  EXPECT_GT(trying, 20);
}

// Shared callers: with WorkloadOptions::callers = 3 each client runs one to three caller tasks
// per round on its one Lock; every operation names its caller, several callers of one client
// are granted in turn (never two at once on a mutex), and every correct recipe that promises
// shared callers passes every property it claims. The sweep draws them for those recipes only.
TEST(SharedCallers, SeveralTasksShareOneLockAndEachIsItsOwnHolder) {
  for (const RecipeInfo& r : recipes::registry()) {
    if (r.expected != Expected::kCorrect) continue;
    const GenerateOptions go = generate_options(r, claims_for(r), {});
    int shared = 0;
    for (uint64_t seed = 1; seed <= 60; ++seed) {
      shared += generate_scenario(seed, go).workload.callers > 1 ? 1 : 0;
    }
    if (!r.promises.shared_callers) {
      EXPECT_EQ(shared, 0) << r.name;
      continue;
    }
    EXPECT_GT(shared, 5) << r.name;
    std::set<uint32_t> callers_granted;
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      Scenario s;
      s.seed = seed;
      s.workload.kind = r.kind;
      s.workload.clients = 2;
      s.workload.rounds = 4;
      s.workload.callers = 3;
      s.workload.max_leases = 2;
      s.workload.reentrant_percent = 30;
      s.workload.timed_percent = 20;
      finish_scenario(&s);
      const SeedOutcome o = run_scenario(r, claims_for(r), s);
      EXPECT_EQ(o.first_violation(), nullptr)
          << r.name << " seed " << seed << ": " << o.first_violation()->message;
      for (const Event& e : o.run.history.events()) {
        if (e.op == Op::kAcquire && e.type == Type::kOk && e.hold_count == 1) {
          callers_granted.insert(e.task);
        }
      }
    }
    EXPECT_EQ(callers_granted, (std::set<uint32_t>{1, 2, 3})) << r.name;
  }
}

// A semaphore's capacity node lowered during the run (a set-capacity fault from 3 to 1): the
// history records the change, the semaphores that read the count pass every property, and
// broken/semaphore-cached-capacity, which read it once, is caught by mutual exclusion.
TEST(Capacity, ALoweredCountHoldsBackLaterGrants) {
  Scenario s = counted_semaphore(4, 6, 3, zk::milliseconds(5), zk::milliseconds(15));
  s.faults.push_back(set_capacity_at(s, zk::milliseconds(20), 1));
  int caught = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    s.seed = seed;
    finish_scenario(&s);
    for (const char* name : {"semaphore", "semaphore-gated"}) {
      const RecipeInfo* r = recipes::find_recipe(name);
      const SeedOutcome o = run_scenario(*r, claims_for(*r), s);
      EXPECT_EQ(o.first_violation(), nullptr)
          << name << " seed " << seed << ": " << o.first_violation()->message;
      int changes = 0;
      for (const Event& e : o.run.history.events()) {
        if (e.op == Op::kCapacity) {
          ++changes;
          EXPECT_EQ(e.token, 1);
        }
      }
      EXPECT_EQ(changes, 1) << name;
    }
    const RecipeInfo* bad = recipes::find_recipe("broken/semaphore-cached-capacity");
    const SeedOutcome b = run_scenario(*bad, claims_for(*bad), s);
    const Verdict* v = b.verdict(Property::kMutualExclusion);
    caught += v != nullptr && !v->ok ? 1 : 0;
  }
  EXPECT_GT(caught, 0);
}

// Faults due at one instant start in the order the scheduler chose, and the history records
// them in that order (semaphore seed 1301429 and semaphore-gated seed 1141092: two set-capacity
// faults at one instant, 4 then 1 in the plan, were applied 1 then 4 and recorded 4 then 1, so
// server-exclusion judged the grants after them by a capacity of 1 where the count said 4). Over
// the seeds both orders occur; in each the history's capacities follow the server's sets, and
// the semaphore passes every property.
TEST(SameInstantFaults, AreRecordedInTheOrderTheyStarted) {
  const RecipeInfo* recipe = recipes::find_recipe("semaphore");
  ASSERT_NE(recipe, nullptr);
  const Claims claims = claims_for(*recipe);
  int reversed = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Scenario s = counted_semaphore(3, 4, 2, zk::milliseconds(5), zk::milliseconds(5));
    s.seed = seed;
    for (const uint32_t count : {4u, 1u}) {
      s.faults.push_back(set_capacity_at(s, zk::milliseconds(12), count));
    }
    finish_scenario(&s);
    const SeedOutcome o = run_scenario(*recipe, claims, s, Keep::kEventLog);
    std::vector<int64_t> applied;  // the server's sets, in its order (the event log's)
    for (const sim::LoggedEvent& e : o.run.events) {
      if (e.kind != "foreign-set") continue;
      applied.push_back(std::stoll(e.text.substr(e.text.find(" = ") + 3)));
    }
    std::vector<int64_t> recorded;  // the history's capacity timeline
    for (const Event& e : o.run.history.events()) {
      if (e.op == Op::kCapacity) recorded.push_back(static_cast<int64_t>(e.token));
    }
    ASSERT_EQ(applied.size(), 2u) << "seed " << seed;
    EXPECT_EQ(recorded, applied) << "seed " << seed;
    reversed += applied.front() == 1 ? 1 : 0;
    EXPECT_EQ(o.first_violation(), nullptr)
        << "seed " << seed << ": " << o.first_violation()->message;
  }
  EXPECT_GT(reversed, 0) << "the scheduler never started the plan's second fault first";
  EXPECT_LT(reversed, 20) << "the scheduler never kept the plan's order";
}

// A stall holds one of a client's tasks as a pause holds them all: FIFO is not judged under one
// (a stalled waiter acts on an old read), as under a pause; under a connection loss it is.
TEST(Stall, FifoIsNotJudgedUnderAStall) {
  const RecipeInfo* fair = recipes::find_recipe("fair-mutex");
  ASSERT_NE(fair, nullptr);
  const Claims claims = claims_for(*fair);
  Scenario s;
  sim::Fault f = fault_at(FaultKind::kConnectionLoss, {}, 1);
  s.faults.push_back(f);
  EXPECT_TRUE(judged(recipes::Property::kFifo, claims, s));
  f.kind = FaultKind::kStall;
  f.task = "client";
  s.faults.push_back(f);
  EXPECT_FALSE(judged(recipes::Property::kFifo, claims, s));
  EXPECT_TRUE(judged(recipes::Property::kMutualExclusion, claims, s));
}

// ---- determinism -------------------------------------------------------------------------------

// Running the same recipe and scenario twice gives the same history and the same event-log
// hash, for every recipe in the registry.
TEST(Determinism, SameScenarioSameHistory) {
  for (const RecipeInfo& r : recipes::registry()) {
    const Claims claims = claims_for(r);
    const Scenario s = generate_scenario(7, generate_options(r, claims, {}));
    const RunResult a = run_in_sim(r.make, s);
    const RunResult b = run_in_sim(r.make, s);
    EXPECT_EQ(a.log_hash, b.log_hash) << r.name;
    EXPECT_EQ(a.history.to_text(), b.history.to_text()) << r.name;
    EXPECT_GT(a.history.size(), 0u) << r.name;
  }
}

// Keep::kVerdicts (what `lockstep check` asks) runs the same run as Keep::kAudit and reaches the
// same verdicts; it only leaves out the log's hash and the decision list, which nothing judged
// reads. Over every recipe and variant, on seeds with faults.
TEST(Determinism, KeepingLessRunsTheSameRun) {
  for (const RecipeInfo& r : recipes::registry()) {
    const Claims claims = claims_for(r);
    for (uint64_t seed : {3u, 7u}) {
      const Scenario s = generate_scenario(seed, generate_options(r, claims, {}));
      const RunResult audited = run_in_sim(r.make, s, Keep::kAudit);
      const RunResult lean = run_in_sim(r.make, s, Keep::kVerdicts);
      ASSERT_TRUE(audited.log_hash.has_value()) << r.name;
      EXPECT_FALSE(audited.decisions.empty()) << r.name;
      EXPECT_FALSE(lean.log_hash.has_value()) << r.name;
      EXPECT_TRUE(lean.decisions.empty()) << r.name;
      EXPECT_EQ(audited.history.to_text(), lean.history.to_text()) << r.name << " seed " << seed;
      EXPECT_EQ(audited.sim_events, lean.sim_events) << r.name << " seed " << seed;
      EXPECT_EQ(audited.requests, lean.requests) << r.name << " seed " << seed;
      const std::vector<Verdict> a = judge(r, claims, s, audited);
      const std::vector<Verdict> b = judge(r, claims, s, lean);
      ASSERT_EQ(a.size(), b.size()) << r.name;
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].ok, b[i].ok) << r.name << " seed " << seed;
        EXPECT_EQ(a[i].message, b[i].message) << r.name << " seed " << seed;
      }
    }
  }
}

// The per-client knobs the shrinker uses default to today's runs: naming every client's own
// stream (client_streams {1..n}) runs exactly as no knob (this pins the stream derivation in
// sim_run.cc to sim/world.cc's), and a client given another's stream draws that client's think
// and hold times. client_rounds and client_holds change only the client they name.
TEST(PerClientKnobs, DefaultToTheGeneratedRunAndChangeOnlyTheirClient) {
  const RecipeInfo& r = *recipes::find_recipe("fair-mutex");
  Scenario s = generate_scenario(7, generate_options(r, claims_for(r), {}));
  s.workload.clients = 3;
  s.workload.rounds = 3;
  s.workload.roles.clear();
  s.workload.callers = 1;
  s.workload.reentrant_percent = 0;  // one acquire invoke and one hold per round
  s.workload.try_percent = 0;
  s.workload.long_hold_percent = 0;
  s.faults.clear();
  finish_scenario(&s);
  const RunResult plain = run_in_sim(r.make, s);
  Scenario named = s;
  named.workload.client_streams = {1, 2, 3};
  EXPECT_EQ(run_in_sim(r.make, named).log_hash, plain.log_hash);
  named.workload.client_streams = {2, 1, 3};
  EXPECT_NE(run_in_sim(r.make, named).log_hash, plain.log_hash);

  auto acquires_of = [](const RunResult& run, uint32_t client) {
    size_t n = 0;
    for (const Event& e : run.history.events()) {
      n += e.client == client && e.op == Op::kAcquire && e.type == Type::kInvoke ? 1 : 0;
    }
    return n;
  };
  Scenario fewer = s;
  fewer.workload.client_rounds = {3, 1, 3};
  const RunResult short_run = run_in_sim(r.make, fewer);
  EXPECT_EQ(acquires_of(plain, 2), 3u);
  EXPECT_EQ(acquires_of(short_run, 2), 1u);
  EXPECT_EQ(acquires_of(short_run, 1), 3u);

  Scenario held = s;
  held.workload.client_holds = {zk::Duration{}, zk::Duration{}, zk::milliseconds(77)};
  finish_scenario(&held);
  const RunResult long_run = run_in_sim(r.make, held);
  zk::Time entered;
  size_t fixed = 0;
  for (const Event& e : long_run.history.events()) {
    if (e.client != 3 || e.type != Type::kOk) continue;
    if (e.op == Op::kEnter) entered = e.at;
    if (e.op == Op::kLeave) {
      EXPECT_EQ(e.at - entered, zk::milliseconds(77));
      ++fixed;
    }
  }
  EXPECT_EQ(fixed, 3u);
}

}  // namespace
}  // namespace lockstep::properties
