// Tests of the trace file format: round trips, every scenario field, bad input, atomic writes.
#include "traces/trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "traces/record.h"
#include "traces/test_util.h"

namespace lockstep::traces {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

properties::Scenario every_field_scenario() {
  properties::Scenario s;
  s.seed = 0xfedcba9876543210ull;  // beyond 2^53: must survive JSON exactly
  s.workload.clients = 4;
  s.workload.rounds = 7;
  s.workload.lock_path = "/a/b \"quoted\" </script>";
  s.workload.kind = recipes::Kind::kReadWrite;
  s.workload.max_leases = 3;
  s.workload.roles = {recipes::Role::kRead, recipes::Role::kWrite, recipes::Role::kExclusive};
  s.workload.think_max = zk::microseconds(1234);
  s.workload.hold_min = zk::microseconds(55);
  s.workload.hold_max = zk::microseconds(999);
  s.workload.timed_percent = 17;
  s.workload.acquire_timeout = zk::microseconds(4321);
  s.workload.reentrant_percent = 29;
  s.workload.stray_release_percent = 11;
  s.workload.long_hold_percent = 13;
  s.workload.long_hold = zk::microseconds(654321);
  s.workload.give_up_percent = 31;
  s.workload.max_reopens = 5;
  s.workload.callers = 3;
  s.workload.capacity_path = "/a/b-capacity";
  s.workload.client_streams = {1, 3, 4, 6};
  s.workload.client_rounds = {7, 1, 0, 2};
  s.workload.client_holds = {zk::Duration{}, zk::microseconds(42), zk::Duration{},
                             zk::microseconds(600000)};
  s.servers = 3;
  s.session_timeout = zk::microseconds(777000);
  s.local_session_expiry = true;
  s.sequence_start = -2147483647 - 1;
  for (const zk::FaultDescriptor& d : zk::kFaultDescriptors) {
    const sim::FaultKind k = d.kind;
    sim::Fault f;
    f.kind = k;
    f.at = zk::Time{1000 + static_cast<int64_t>(k)};
    f.client = 1 + static_cast<uint32_t>(k) % 4;
    f.server = 2;
    f.duration = zk::microseconds(300 + static_cast<int64_t>(k));
    f.extra = zk::microseconds(7);
    f.target = static_cast<zk::FaultTarget>(static_cast<int>(k) % zk::kFaultTargetCount);
    f.requests = static_cast<zk::FaultRequests>(static_cast<int>(k) % zk::kFaultRequestsCount);
    f.task = std::string("task-") + zk::fault_name(k);
    f.path = std::string("/path-") + zk::fault_name(k);
    if (zk::takes(k, zk::kParamCount)) f.count = 5;  // written only for the kinds that read it
    s.faults.push_back(f);
  }
  s.heal_at = zk::Time{88888};
  s.liveness_bound = zk::microseconds(123456);
  s.run_limit = zk::microseconds(9999999);
  return s;
}

void expect_same_scenario(const properties::Scenario& a, const properties::Scenario& b) {
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.workload.clients, b.workload.clients);
  EXPECT_EQ(a.workload.rounds, b.workload.rounds);
  EXPECT_EQ(a.workload.lock_path, b.workload.lock_path);
  EXPECT_EQ(a.workload.kind, b.workload.kind);
  EXPECT_EQ(a.workload.max_leases, b.workload.max_leases);
  EXPECT_EQ(a.workload.roles, b.workload.roles);
  EXPECT_EQ(a.workload.think_max, b.workload.think_max);
  EXPECT_EQ(a.workload.hold_min, b.workload.hold_min);
  EXPECT_EQ(a.workload.hold_max, b.workload.hold_max);
  EXPECT_EQ(a.workload.timed_percent, b.workload.timed_percent);
  EXPECT_EQ(a.workload.acquire_timeout, b.workload.acquire_timeout);
  EXPECT_EQ(a.workload.reentrant_percent, b.workload.reentrant_percent);
  EXPECT_EQ(a.workload.stray_release_percent, b.workload.stray_release_percent);
  EXPECT_EQ(a.workload.long_hold_percent, b.workload.long_hold_percent);
  EXPECT_EQ(a.workload.long_hold, b.workload.long_hold);
  EXPECT_EQ(a.workload.give_up_percent, b.workload.give_up_percent);
  EXPECT_EQ(a.workload.max_reopens, b.workload.max_reopens);
  EXPECT_EQ(a.workload.callers, b.workload.callers);
  EXPECT_EQ(a.workload.capacity_path, b.workload.capacity_path);
  EXPECT_EQ(a.workload.client_streams, b.workload.client_streams);
  EXPECT_EQ(a.workload.client_rounds, b.workload.client_rounds);
  EXPECT_EQ(a.workload.client_holds, b.workload.client_holds);
  EXPECT_EQ(a.servers, b.servers);
  EXPECT_EQ(a.session_timeout, b.session_timeout);
  EXPECT_EQ(a.local_session_expiry, b.local_session_expiry);
  EXPECT_EQ(a.sequence_start, b.sequence_start);
  ASSERT_EQ(a.faults.size(), b.faults.size());
  for (size_t i = 0; i < a.faults.size(); ++i) {
    EXPECT_EQ(a.faults[i].kind, b.faults[i].kind) << i;
    EXPECT_EQ(a.faults[i].at, b.faults[i].at) << i;
    EXPECT_EQ(a.faults[i].client, b.faults[i].client) << i;
    EXPECT_EQ(a.faults[i].server, b.faults[i].server) << i;
    EXPECT_EQ(a.faults[i].duration, b.faults[i].duration) << i;
    EXPECT_EQ(a.faults[i].extra, b.faults[i].extra) << i;
    EXPECT_EQ(a.faults[i].target, b.faults[i].target) << i;
    EXPECT_EQ(a.faults[i].requests, b.faults[i].requests) << i;
    EXPECT_EQ(a.faults[i].task, b.faults[i].task) << i;
    EXPECT_EQ(a.faults[i].path, b.faults[i].path) << i;
    EXPECT_EQ(a.faults[i].count, b.faults[i].count) << i;
  }
  EXPECT_EQ(a.heal_at, b.heal_at);
  EXPECT_EQ(a.liveness_bound, b.liveness_bound);
  EXPECT_EQ(a.run_limit, b.run_limit);
}

Trace parse_ok(const std::string& text) {
  LoadError e;
  std::optional<Trace> t = parse_trace(text, "test", &e);
  EXPECT_TRUE(t.has_value()) << e.message;
  return t ? *t : Trace{};
}

// A serialized trace whose text is changed by `edit`, parsed: the error it gives.
LoadError parse_error(const std::string& text) {
  LoadError e;
  EXPECT_FALSE(parse_trace(text, "bad.json", &e).has_value());
  return e;
}

void replace_once(std::string* s, const std::string& from, const std::string& to) {
  const size_t at = s->find(from);
  ASSERT_NE(at, std::string::npos) << from;
  s->replace(at, from.size(), to);
}

// A tripwire: when properties/ adds a field to Scenario, WorkloadOptions, Fault or Event, the
// trace format must learn it (trace.cc and FORMAT.md) or replays silently stop reproducing.
TEST(TraceFormat, KnowsEveryFieldOfTheRecordedStructs) {
  EXPECT_EQ(sizeof(properties::Scenario), 344u)
      << "properties::Scenario changed: serialize the new field in traces/trace.cc + FORMAT.md";
  EXPECT_EQ(sizeof(properties::WorkloadOptions), 256u)
      << "properties::WorkloadOptions changed: update traces/trace.cc + FORMAT.md";
  EXPECT_EQ(sizeof(sim::Fault), 120u) << "sim::Fault changed: update traces/trace.cc + FORMAT.md";
  EXPECT_EQ(sizeof(properties::Event), 88u)
      << "properties::Event changed: update traces/trace.cc + FORMAT.md";
}

// Every Scenario field (faults of every kind included) survives a write and a read; the
// hand-made values differ from the defaults so a dropped field cannot pass.
TEST(TraceFormat, ScenarioRoundTripKeepsEveryField) {
  Trace t;
  t.recipe = "fair-mutex";
  t.scenario = every_field_scenario();
  const Trace back = parse_ok(to_json_text(t));
  expect_same_scenario(t.scenario, back.scenario);
  EXPECT_EQ(to_json_text(back), to_json_text(t));
}

// Every history Event field survives (non-default values everywhere), and so do verdicts,
// decisions and log events.
TEST(TraceFormat, HistoryVerdictDecisionAndLogRoundTrip) {
  Trace t;
  t.recipe = "fair-mutex";
  properties::Event e;
  e.at = zk::Time{42};
  e.client = 3;
  e.task = 2;
  e.session = zk::SessionId{0xffffffffffffffffull};
  e.type = properties::Type::kFail;
  e.op = properties::Op::kSession;
  e.error = zk::Error::kSessionExpired;
  e.token = -77;
  e.hold_count = 9;
  e.role = recipes::Role::kWrite;
  e.state = recipes::LockState::kSuspended;
  e.session_state = zk::SessionState::kExpired;
  e.text = "line\nwith \"quotes\" and \xc3\xa9";
  t.history.add(e);
  t.verdicts.push_back(properties::Verdict{properties::Property::kFifo, false, "msg", {0}, {}});
  t.decisions = {{sim::ChoiceKind::kLatency, 4, 3}, {sim::ChoiceKind::kChildOrder, 4294967295u, 7}};
  t.events = {sim::LoggedEvent{0, zk::Time{5}, 2, "send", "create /x"}};
  t.event_count = 1;
  t.log_hash = 0x8000000000000001ull;
  const Trace back = parse_ok(to_json_text(t));
  ASSERT_EQ(back.history.size(), 1u);
  const properties::Event& b = back.history[0];
  EXPECT_EQ(b.at, e.at);
  EXPECT_EQ(b.client, e.client);
  EXPECT_EQ(b.task, e.task);
  EXPECT_EQ(b.session, e.session);
  EXPECT_EQ(b.type, e.type);
  EXPECT_EQ(b.op, e.op);
  EXPECT_EQ(b.error, e.error);
  EXPECT_EQ(b.token, e.token);
  EXPECT_EQ(b.hold_count, e.hold_count);
  EXPECT_EQ(b.role, e.role);
  EXPECT_EQ(b.state, e.state);
  EXPECT_EQ(b.session_state, e.session_state);
  EXPECT_EQ(b.text, e.text);
  ASSERT_NE(back.violation(), nullptr);
  EXPECT_EQ(back.violation()->property, properties::Property::kFifo);
  EXPECT_EQ(back.violation()->history_indexes, std::vector<uint64_t>{0});
  EXPECT_EQ(back.decisions, t.decisions);
  ASSERT_EQ(back.events.size(), 1u);
  EXPECT_EQ(event_line(back.events[0]), "t=0.000005 c2 send create /x");
  EXPECT_EQ(back.log_hash, t.log_hash);
}

// A real recorded failure writes, reads and writes again to the same bytes, and its decision
// list is exactly the "choose" lines of its event log.
TEST(TraceFormat, RecordedTraceRoundTripsByteForByte) {
  const Trace t = testing::first_trace("broken/ignores-expiry");
  ASSERT_NE(t.violation(), nullptr);
  EXPECT_EQ(t.events.size(), t.event_count);
  EXPECT_GT(t.decisions.size(), 10u);
  EXPECT_EQ(decisions_from_log(t.events), t.decisions);
  const std::string text = to_json_text(t);
  const Trace back = parse_ok(text);
  EXPECT_EQ(to_json_text(back), text);
  EXPECT_EQ(back.recipe_fingerprint, recipe_fingerprint(*recipes::find_recipe(t.recipe)));
}

// Malformed JSON, a JSON document that is not a trace, and a truncated file are bad input (2).
TEST(TraceFormat, MalformedInputIsBadInput) {
  LoadError e = parse_error("{\"format\": \"lockstep-trace\", ");
  EXPECT_EQ(e.problem, LoadProblem::kBadInput);
  EXPECT_NE(e.message.find("not valid JSON"), std::string::npos) << e.message;
  e = parse_error("[1, 2]");
  EXPECT_NE(e.message.find("not a lockstep trace"), std::string::npos) << e.message;
  const std::string good = to_json_text(testing::first_trace("fair-mutex"));
  e = parse_error(good.substr(0, good.size() / 2));
  EXPECT_EQ(e.problem, LoadProblem::kBadInput);
  EXPECT_NE(e.message.find("bad.json"), std::string::npos) << e.message;
}

const std::string kVersionField = "\"format_version\": " + std::to_string(kFormatVersion);

// A version this code does not read is refused by number, not half-parsed.
TEST(TraceFormat, UnknownFormatVersionIsRefused) {
  std::string text = to_json_text(testing::first_trace("fair-mutex"));
  replace_once(&text, kVersionField, "\"format_version\": 99");
  const LoadError e = parse_error(text);
  EXPECT_EQ(e.problem, LoadProblem::kBadInput);
  EXPECT_NE(e.message.find("trace format version 99 (format_version) is newer"), std::string::npos)
      << e.message;
}

// A trace of the previous format (version 1: the simulator's old fault names in the event log,
// a fault's overloaded `name`) is refused with its version and how to fix it: re-record.
TEST(TraceFormat, OldFormatVersionIsRefusedWithTheFix) {
  std::string text = to_json_text(testing::first_trace("fair-mutex"));
  const std::string old = std::to_string(kFormatVersion - 1);
  replace_once(&text, kVersionField, "\"format_version\": " + old);
  const LoadError e = parse_error(text);
  EXPECT_EQ(e.problem, LoadProblem::kBadInput);
  EXPECT_NE(e.message.find("trace format version " + old +
                           " (format_version) is older than the "
                           "version " +
                           std::to_string(kFormatVersion)),
            std::string::npos)
      << e.message;
  EXPECT_NE(e.message.find("re-record it: `lockstep corpus`"), std::string::npos) << e.message;
}

// Schema violations name what is wrong: a missing field, an event count that does not match,
// a verdict naming an event the history does not have, an unknown fault kind.
TEST(TraceFormat, SchemaViolationsAreNamed) {
  const std::string good = to_json_text(testing::first_trace("fair-mutex"));
  std::string text = good;
  replace_once(&text, "\"strategy\"", "\"strategy_x\"");
  EXPECT_NE(parse_error(text).message.find("missing field \"strategy\""), std::string::npos);
  text = good;
  replace_once(&text, "\"count\": ", "\"count\": 1");
  EXPECT_NE(parse_error(text).message.find("event_log.count is 1"), std::string::npos)
      << parse_error(text).message;
  text = good;
  replace_once(&text, "\"verdict\": {\n    \"ok\": true", "\"verdict\": {\n    \"ok\": false");
  EXPECT_NE(parse_error(text).message.find("verdict.ok differs from verdicts"), std::string::npos);
  Trace t;
  t.recipe = "fair-mutex";
  t.verdicts.push_back(properties::Verdict{properties::Property::kFifo, false, "m", {5}, {}});
  EXPECT_NE(parse_error(to_json_text(t)).message.find("names event #5"), std::string::npos);
  t.verdicts.clear();
  t.scenario.faults.push_back(sim::Fault{});
  text = to_json_text(t);
  replace_once(&text, "\"connection-loss\"", "\"meteor-strike\"");
  EXPECT_NE(parse_error(text).message.find("unknown fault kind \"meteor-strike\""),
            std::string::npos);
}

// The shrinker's per-client knobs are written only when set (a generated scenario's trace has
// none of them), and a list of the wrong length or an entry out of its range is bad input naming
// the field and the rule.
TEST(TraceFormat, PerClientKnobsAreOptionalAndValidated) {
  const std::string good = to_json_text(testing::first_trace("fair-mutex"));
  for (const char* key : {"client_streams", "client_rounds", "client_holds_us"}) {
    EXPECT_EQ(good.find(key), std::string::npos) << key;
  }
  Trace t;
  t.recipe = "fair-mutex";
  t.scenario.workload.clients = 2;
  t.scenario.workload.rounds = 3;
  t.scenario.workload.client_streams = {1, 3};
  t.scenario.workload.client_rounds = {3, 1};
  t.scenario.workload.client_holds = {zk::Duration{}, zk::microseconds(5)};
  const std::string set = to_json_text(t);
  expect_same_scenario(parse_ok(set).scenario, t.scenario);
  std::string text = set;
  replace_once(&text, "\"client_streams\": [1,3]", "\"client_streams\": [1]");
  EXPECT_NE(parse_error(text).message.find(
                "scenario.workload.client_streams has 1 entries, but the scenario has 2 clients"),
            std::string::npos)
      << parse_error(text).message;
  text = set;
  replace_once(&text, "\"client_streams\": [1,3]", "\"client_streams\": [1, 0]");
  EXPECT_NE(parse_error(text).message.find("client_streams[1] is 0, but a client's stream"),
            std::string::npos)
      << parse_error(text).message;
  text = set;
  replace_once(&text, "\"client_rounds\": [3,1]", "\"client_rounds\": [4, 1]");
  EXPECT_NE(parse_error(text).message.find(
                "client_rounds[0] is 4, but a client does at most the scenario's rounds, 0..3"),
            std::string::npos)
      << parse_error(text).message;
  text = set;
  replace_once(&text, "\"client_holds_us\": [0,5]", "\"client_holds_us\": [0, -5]");
  EXPECT_NE(parse_error(text).message.find("client_holds_us[1] is -5"), std::string::npos)
      << parse_error(text).message;
}

// A trace that names the property it reports ("reported") headlines that violation, not the
// first in Property order, and writes and reads back to the same bytes; without the key it is the
// first violation. A "reported" that names a property the verdicts hold, or no property at all,
// is bad input naming the field.
TEST(TraceFormat, ReportedPropertyIsHeadlinedAndValidated) {
  Trace t;
  t.recipe = "fair-mutex";
  t.history.add(properties::Event{});
  t.verdicts.push_back(properties::Verdict{properties::Property::kMutualExclusion, true, "", {}, {}});
  t.verdicts.push_back(properties::Verdict{properties::Property::kNoOrphans, false, "orphan", {0}, {}});
  t.verdicts.push_back(
      properties::Verdict{properties::Property::kTimeoutCleanup, false, "left", {0}, {}});
  ASSERT_NE(t.violation(), nullptr);
  EXPECT_EQ(t.violation()->property, properties::Property::kNoOrphans);
  EXPECT_EQ(to_json_text(t).find("\"reported\""), std::string::npos);  // written only when set
  t.reported = properties::Property::kTimeoutCleanup;
  ASSERT_NE(t.violation(), nullptr);
  EXPECT_EQ(t.violation()->property, properties::Property::kTimeoutCleanup);
  EXPECT_EQ(verdict_summary(t), "timeout-cleanup VIOLATED: left (history events #0)");
  const std::string text = to_json_text(t);
  EXPECT_NE(text.find("\"reported\": \"timeout-cleanup\""), std::string::npos) << text;
  const Trace back = parse_ok(text);
  EXPECT_EQ(back.reported, t.reported);
  EXPECT_EQ(to_json_text(back), text);

  std::string held = text;
  replace_once(&held, "\"reported\": \"timeout-cleanup\"", "\"reported\": \"mutual-exclusion\"");
  const std::string why = parse_error(held).message;
  EXPECT_NE(why.find("reported is \"mutual-exclusion\", but verdicts hold no violation of "
                     "mutual-exclusion"),
            std::string::npos)
      << why;
  std::string unknown = text;
  replace_once(&unknown, "\"reported\": \"timeout-cleanup\"", "\"reported\": \"speed\"");
  EXPECT_NE(parse_error(unknown).message.find("reported: unknown property \"speed\""),
            std::string::npos)
      << parse_error(unknown).message;
  // The verdict must repeat the reported violation, not the first one.
  std::string first = text;
  replace_once(&first, "\"reported\": \"timeout-cleanup\",\n", "");
  EXPECT_NE(parse_error(first).message.find("\"verdict\" must repeat"), std::string::npos)
      << parse_error(first).message;
}

// A missing file and a directory are bad input with the path in the message.
TEST(TraceFormat, MissingFileIsBadInput) {
  TempDir dir;
  LoadError e;
  EXPECT_FALSE(load_trace(dir.file("nope.json"), &e).has_value());
  EXPECT_EQ(e.problem, LoadProblem::kBadInput);
  EXPECT_NE(e.message.find("nope.json: no such file"), std::string::npos) << e.message;
  EXPECT_FALSE(load_trace(dir.path(), &e).has_value());
  EXPECT_NE(e.message.find("is a directory"), std::string::npos) << e.message;
}

// An unknown recipe is bad input; an edited registry entry (other fingerprint) is "recipe
// changed" (4) and still hands out the current entry for --allow-changed.
TEST(TraceFormat, RecipeResolutionDetectsUnknownAndChangedRecipes) {
  Trace t = testing::first_trace("fair-mutex");
  LoadError e;
  EXPECT_NE(resolve_recipe(t, &e), nullptr) << e.message;
  t.recipe_fingerprint = "fnv1a64:0000000000000000";
  const recipes::RecipeInfo* current = nullptr;
  EXPECT_EQ(resolve_recipe(t, &e, &current), nullptr);
  EXPECT_EQ(e.problem, LoadProblem::kRecipeChanged);
  EXPECT_NE(e.message.find("changed since the trace was recorded"), std::string::npos);
  EXPECT_EQ(current, recipes::find_recipe("fair-mutex"));
  t.recipe = "no-such-recipe";
  EXPECT_EQ(resolve_recipe(t, &e), nullptr);
  EXPECT_EQ(e.problem, LoadProblem::kBadInput);
}

// The fingerprint covers the description: a recipe whose documented behaviour changes gets a
// new one.
TEST(TraceFormat, FingerprintFollowsTheRegistryEntry) {
  recipes::RecipeInfo r = *recipes::find_recipe("fair-mutex");
  const std::string before = recipe_fingerprint(r);
  EXPECT_EQ(before.rfind("fnv1a64:", 0), 0u);
  r.description += " (now different)";
  EXPECT_NE(recipe_fingerprint(r), before);
}

// An atomic write creates the file with exactly the data and leaves no temporary file; a second
// write replaces it whole.
TEST(AtomicWrite, WritesAndReplacesLeavingNoTemporaries) {
  TempDir dir;
  const std::string path = dir.file("t.json");
  std::string error;
  ASSERT_TRUE(write_file_atomically(path, "first", &error)) << error;
  ASSERT_TRUE(write_file_atomically(path, "second, longer", &error)) << error;
  EXPECT_EQ(read_file(path), "second, longer");
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1u);
}

// When the final rename cannot happen (the target is a non-empty directory) the write fails,
// the target is untouched and the temporary file is removed.
TEST(AtomicWrite, FailedRenameLeavesTargetAndNoTemporary) {
  TempDir dir;
  const std::string target = dir.file("occupied");
  std::filesystem::create_directory(target);
  write_file(target + "/keep", "kept");
  std::string error;
  EXPECT_FALSE(write_file_atomically(target, "data", &error));
  EXPECT_NE(error.find("cannot rename"), std::string::npos) << error;
  EXPECT_EQ(read_file(target + "/keep"), "kept");
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1u);
  EXPECT_FALSE(write_file_atomically(dir.file("missing-dir/x.json"), "data", &error));
  EXPECT_NE(error.find("temporary file"), std::string::npos) << error;
}

// save_failure_trace makes the directory, names the file after recipe, seed and log hash,
// writes a loadable trace and the replay command names it.
TEST(AtomicWrite, SaveFailureTraceWritesALoadableFile) {
  TempDir dir;
  const Trace t = testing::first_trace("broken/sort-by-name");
  std::string error;
  const std::string path = save_failure_trace(t, dir.file("nested/failures"), &error);
  ASSERT_FALSE(path.empty()) << error;
  EXPECT_EQ(std::filesystem::path(path).filename().string(), trace_file_name(t));
  EXPECT_EQ(trace_file_name(t).rfind("broken_sort-by-name-seed", 0), 0u) << trace_file_name(t);
  LoadError e;
  std::optional<Trace> back = load_trace(path, &e);
  ASSERT_TRUE(back.has_value()) << e.message;
  EXPECT_EQ(to_json_text(*back), to_json_text(t));
  std::ostringstream out;
  print_replay_command(out, path);
  EXPECT_NE(out.str().find("./lockstep replay " + path), std::string::npos) << out.str();
}

// save_failure_note saves under $LOCKSTEP_TRACE_DIR and tells how to replay the file.
TEST(AtomicWrite, SaveFailureNoteUsesTheTraceDirFromTheEnvironment) {
  TempDir dir;
  ASSERT_EQ(::setenv("LOCKSTEP_TRACE_DIR", dir.file("env-dir").c_str(), 1), 0);
  const Trace t = testing::first_trace("broken/sort-by-name");
  const std::string note = save_failure_note(t);
  ::unsetenv("LOCKSTEP_TRACE_DIR");
  const std::string path = dir.file("env-dir/" + trace_file_name(t));
  EXPECT_TRUE(std::filesystem::exists(path)) << note;
  EXPECT_NE(note.find("./lockstep replay " + path), std::string::npos) << note;
  EXPECT_EQ(failure_trace_dir(), kDefaultFailureDir);
}

}  // namespace
}  // namespace lockstep::traces
