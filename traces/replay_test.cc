// Tests of replay, recheck and show: strict reproduction, divergence reports, exit codes, the
// text timeline and the HTML page's static content.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "traces/record.h"
#include "traces/test_util.h"
#include "traces/timeline.h"
#include "traces/trace.h"

namespace lockstep::traces {
namespace {

using testing::CommandResult;
using testing::first_trace;
using testing::read_file;
using testing::run_command;
using testing::TempDir;
using testing::write_file;

// One recorded failure shared by the tests (recording is deterministic, so sharing is safe).
const Trace& expiry_trace() {
  static const Trace t = first_trace("broken/ignores-expiry");
  return t;
}

std::string save(const TempDir& dir, const Trace& t, const std::string& name) {
  const std::string path = dir.file(name);
  std::string error;
  EXPECT_TRUE(write_file_atomically(path, to_json_text(t), &error)) << error;
  return path;
}

// Replaying the recorded decisions reproduces the event log, the history and the verdict.
TEST(Replay, ReproducesARecordedFailureExactly) {
  const Trace& t = expiry_trace();
  ASSERT_NE(t.violation(), nullptr);
  const ReplayResult r = replay_trace(t, *recipes::find_recipe(t.recipe));
  EXPECT_FALSE(r.divergence.has_value())
      << r.divergence->where << " #" << r.divergence->index << "\n"
      << r.divergence->expected << "\n"
      << r.divergence->actual;
  EXPECT_EQ(r.replayed.log_hash, t.log_hash);
  EXPECT_EQ(r.replayed.decisions, t.decisions);
}

// `replay FILE` on a saved failure exits 0 and prints the recorded verdict.
TEST(Replay, CommandReportsReproducedAndTheVerdict) {
  TempDir dir;
  const std::string path = save(dir, expiry_trace(), "t.json");
  const CommandResult r = run_command("replay", {path});
  EXPECT_EQ(r.code, cli::kExitOk) << r.out << r.err;
  EXPECT_NE(r.out.find("reproduced exactly"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: " + verdict_summary(expiry_trace())), std::string::npos) << r.out;
}

// An edited event-log line makes replay stop at that event and name it: index, the recorded
// line and the line the run produced.
TEST(Replay, NamesTheFirstDivergentEvent) {
  TempDir dir;
  Trace t = expiry_trace();
  const size_t i = t.events.size() / 2;
  const std::string actual = event_line(t.events[i]);
  t.events[i].text += " (edited)";
  const CommandResult r = run_command("replay", {save(dir, t, "t.json")});
  EXPECT_EQ(r.code, cli::kExitDiverged) << r.out << r.err;
  EXPECT_NE(r.out.find("first divergent event log event #" + std::to_string(i)), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("expected: " + event_line(t.events[i])), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("actual:   " + actual), std::string::npos) << r.out;
}

// Replay is strict: with an event-log line edited in the middle of the recording, the run stops
// at exactly that event (its log ends there, nothing after it runs), and the command names the
// index, time and client and exits 3.
TEST(Replay, StopsAtTheFirstDivergentEvent) {
  TempDir dir;
  Trace t = expiry_trace();
  const size_t i = t.events.size() / 3;
  const sim::LoggedEvent original = t.events[i];
  t.events[i].text += " (edited)";
  const ReplayResult r = replay_trace(t, *recipes::find_recipe(t.recipe));
  ASSERT_TRUE(r.divergence.has_value());
  EXPECT_EQ(r.divergence->where, "event log");
  EXPECT_EQ(r.divergence->index, i);
  EXPECT_EQ(r.divergence->at, original.at);
  EXPECT_EQ(r.divergence->client, original.client);
  EXPECT_TRUE(r.stopped_early);
  ASSERT_EQ(r.replayed.events.size(), i + 1) << "the run went on past the divergent event";
  EXPECT_EQ(event_line(r.replayed.events[i]), event_line(original));
  const CommandResult c = run_command("replay", {save(dir, t, "t.json")});
  EXPECT_EQ(c.code, cli::kExitDiverged) << c.out << c.err;
  char at[32];
  std::snprintf(at, sizeof at, "t=%lld.%06lld, c%u",
                static_cast<long long>(original.at.us / 1000000),
                static_cast<long long>(original.at.us % 1000000), original.client);
  EXPECT_NE(c.out.find("first divergent event log event #" + std::to_string(i) + " (" + at + ")"),
            std::string::npos)
      << c.out;
  EXPECT_NE(c.out.find("stopped at that event: " + std::to_string(i + 1) + " of " +
                       std::to_string(t.event_count) + " recorded events replayed"),
            std::string::npos)
      << c.out;
}

// A recording that ends early (its last lines cut off) makes the replay stop at the first
// event past its end instead of running on.
TEST(Replay, StopsAtTheFirstEventPastARecordingsEnd) {
  Trace t = expiry_trace();
  const size_t keep = t.events.size() / 2;
  t.events.resize(keep);
  t.event_count = keep;
  const ReplayResult r = replay_trace(t, *recipes::find_recipe(t.recipe));
  ASSERT_TRUE(r.divergence.has_value());
  EXPECT_EQ(r.divergence->where, "event log");
  EXPECT_EQ(r.divergence->index, keep);
  EXPECT_EQ(r.divergence->expected, "(end of the log)");
  EXPECT_TRUE(r.stopped_early);
  EXPECT_EQ(r.replayed.events.size(), keep + 1);
}

// The log's strict mode on its own: lines are compared as they are appended, the first
// different one is the last line kept, later ones are dropped and stopped() turns true; a log
// without expectations keeps everything.
TEST(EventLogExpect, KeepsLinesUpToTheFirstDifference) {
  std::vector<sim::LoggedEvent> expected = {
      {0, zk::Time{} + zk::microseconds(1), 1, "send", "a"},
      {1, zk::Time{} + zk::microseconds(2), 1, "send", "b"},
      {2, zk::Time{} + zk::microseconds(3), 2, "reply", "c"},
  };
  sim::EventLog strict;
  strict.expect(&expected);
  strict.add(zk::Time{} + zk::microseconds(1), 1, "send", "a");
  EXPECT_FALSE(strict.stopped());
  strict.add(zk::Time{} + zk::microseconds(2), 2, "send", "b");  // other client
  EXPECT_TRUE(strict.stopped());
  strict.add(zk::Time{} + zk::microseconds(3), 2, "reply", "c");
  ASSERT_EQ(strict.events().size(), 2u);
  EXPECT_EQ(strict.events()[1].client, 2u);
  sim::EventLog plain;
  plain.add(zk::Time{} + zk::microseconds(1), 1, "send", "x");
  plain.add(zk::Time{} + zk::microseconds(2), 2, "send", "y");
  EXPECT_FALSE(plain.stopped());
  EXPECT_EQ(plain.events().size(), 2u);
}

// A changed decision steers the run elsewhere: replay diverges (the replay strategy leaves its
// recording or the log differs) and says where.
TEST(Replay, ChangedDecisionDiverges) {
  TempDir dir;
  Trace t = expiry_trace();
  size_t k = t.decisions.size() / 3;
  while (k < t.decisions.size() && t.decisions[k].kind != sim::ChoiceKind::kLatency) ++k;
  ASSERT_LT(k, t.decisions.size());
  t.decisions[k].chosen = (t.decisions[k].chosen + 1) % t.decisions[k].n;
  const CommandResult r = run_command("replay", {save(dir, t, "t.json")});
  EXPECT_EQ(r.code, cli::kExitDiverged) << r.out << r.err;
  EXPECT_NE(r.out.find("DIVERGED: first divergent event log event #"), std::string::npos) << r.out;
}

// A verdict that no longer matches (the checkers changed) is a divergence too.
TEST(Replay, ChangedVerdictDiverges) {
  TempDir dir;
  Trace t = expiry_trace();
  for (properties::Verdict& v : t.verdicts) {
    if (!v.ok) {
      v.message = "something else";
      break;
    }
  }
  const CommandResult r = run_command("replay", {save(dir, t, "t.json")});
  EXPECT_EQ(r.code, cli::kExitDiverged) << r.out;
  EXPECT_NE(r.out.find("first divergent verdict"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("something else"), std::string::npos) << r.out;
}

// Bad input gets its documented exit code and a message, and no file is written: a missing
// file and malformed JSON (2), an unknown version (2), a changed recipe (4, and 0 with
// --allow-changed when nothing else changed), usage errors (2).
TEST(Replay, BadInputExitCodes) {
  TempDir dir;
  CommandResult r = run_command("replay", {dir.file("missing.json")});
  EXPECT_EQ(r.code, cli::kExitUsage);
  EXPECT_NE(r.err.find("missing.json: no such file"), std::string::npos) << r.err;

  write_file(dir.file("bad.json"), "{ not json");
  r = run_command("replay", {dir.file("bad.json")});
  EXPECT_EQ(r.code, cli::kExitUsage);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(dir.file("bad.json")), "{ not json");

  std::string text = to_json_text(expiry_trace());
  const std::string version = "\"format_version\": " + std::to_string(kFormatVersion);
  text.replace(text.find(version), version.size(), "\"format_version\": 99");
  write_file(dir.file("v99.json"), text);
  r = run_command("replay", {dir.file("v99.json")});
  EXPECT_EQ(r.code, cli::kExitUsage);
  EXPECT_NE(r.err.find("trace format version 99"), std::string::npos) << r.err;

  Trace changed = expiry_trace();
  changed.recipe_fingerprint = "fnv1a64:0123456789abcdef";
  const std::string path = save(dir, changed, "changed.json");
  r = run_command("replay", {path});
  EXPECT_EQ(r.code, cli::kExitRecipeChanged);
  EXPECT_NE(r.err.find("changed since the trace was recorded"), std::string::npos) << r.err;
  r = run_command("replay", {path, "--allow-changed"});
  EXPECT_EQ(r.code, cli::kExitOk) << r.out << r.err;

  EXPECT_EQ(run_command("replay", {}).code, cli::kExitUsage);
  EXPECT_EQ(run_command("replay", {path, "--bogus"}).code, cli::kExitUsage);
  EXPECT_EQ(run_command("replay", {"--help"}).code, cli::kExitOk);
}

// recheck judges the scenario now: a broken variant still fails (1), a correct recipe's trace
// passes (0), and a bad file among good ones makes it 2 while the others are still reported.
TEST(Recheck, ReportsTheVerdictNow) {
  TempDir dir;
  const std::string broken = save(dir, expiry_trace(), "broken.json");
  const std::string correct = save(dir, first_trace("fair-mutex"), "correct.json");
  CommandResult r = run_command("recheck", {broken});
  EXPECT_EQ(r.code, cli::kExitFailure) << r.out << r.err;
  EXPECT_NE(r.out.find("STILL FAILS"), std::string::npos) << r.out;
  r = run_command("recheck", {correct});
  EXPECT_EQ(r.code, cli::kExitOk) << r.out << r.err;
  EXPECT_NE(r.out.find("passes now"), std::string::npos) << r.out;
  r = run_command("recheck", {correct, dir.file("missing.json"), broken});
  EXPECT_EQ(r.code, cli::kExitUsage);
  EXPECT_NE(r.out.find("STILL FAILS"), std::string::npos) << r.out;
  EXPECT_EQ(run_command("recheck", {}).code, cli::kExitUsage);
}

// A recipe whose registry entry changed is still rechecked (that is what recheck is for), with
// a note naming the change.
TEST(Recheck, ChangedRecipeIsRecheckedWithANote) {
  TempDir dir;
  Trace t = expiry_trace();
  t.recipe_fingerprint = "fnv1a64:0123456789abcdef";
  const CommandResult r = run_command("recheck", {save(dir, t, "t.json")});
  EXPECT_EQ(r.code, cli::kExitFailure) << r.out << r.err;
  EXPECT_NE(r.err.find("note: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("changed since the trace was recorded"), std::string::npos) << r.err;
}

// save_seed_failure saves the failing seed `lockstep check` reports (same scenario, so the file
// replays) and saves nothing for a seed that passes.
TEST(SaveSeedFailure, SavesFailingSeedsOnly) {
  TempDir dir;
  const recipes::RecipeInfo& broken = *recipes::find_recipe("broken/sort-by-name");
  const std::optional<uint64_t> seed = first_failing_seed(broken, 200);
  ASSERT_TRUE(seed.has_value());
  std::string error;
  const std::string path = save_seed_failure(broken, *seed, {}, dir.file("failures"), &error);
  ASSERT_FALSE(path.empty()) << error;
  EXPECT_EQ(run_command("replay", {path}).code, cli::kExitOk);
  const recipes::RecipeInfo& correct = *recipes::find_recipe("fair-mutex");
  EXPECT_EQ(save_seed_failure(correct, 1, {}, dir.file("none"), &error), "");
  EXPECT_NE(error.find("violates nothing"), std::string::npos) << error;
  EXPECT_FALSE(std::filesystem::exists(dir.file("none")));
}

// The timeline gives every client a lane, derives waiting/holding from the history, shows the
// holder that still believes after the server expired its session, and marks the verdict's
// events.
TEST(Timeline, LanesStatesAndTheViolation) {
  const Trace& t = expiry_trace();
  const Timeline tl = build_timeline(t);
  ASSERT_EQ(tl.lanes.size(), t.scenario.workload.clients);
  const properties::Verdict* v = t.violation();
  ASSERT_NE(v, nullptr);
  ASSERT_FALSE(v->history_indexes.empty());
  bool expired_belief = false;
  size_t proof_rows = 0;
  for (const TimelineRow& r : tl.rows) {
    ASSERT_EQ(r.lanes.size(), tl.lanes.size());
    for (LaneState s : r.lanes) expired_belief = expired_belief || s == LaneState::kExpiredBelief;
    if (r.violation) ++proof_rows;
    if (r.id[0] != 'h') continue;
    const properties::Event& e = t.history[std::stoull(r.id.substr(1))];
    if (e.op == properties::Op::kAcquire && e.type == properties::Type::kInvoke &&
        r.lanes[e.client - 1] != LaneState::kHolding) {
      EXPECT_EQ(r.lanes[e.client - 1], LaneState::kWaiting) << r.id;
    }
    if (e.op == properties::Op::kAcquire && e.type == properties::Type::kOk) {
      EXPECT_EQ(r.lanes[e.client - 1], LaneState::kHolding) << r.id;
    }
  }
  EXPECT_TRUE(expired_belief) << "the holder whose session expired should show as '!'";
  EXPECT_EQ(proof_rows, v->history_indexes.size());
}

// `show` prints a header per lane, the verdict, '>>' on the proving rows and their ids.
TEST(Show, TextTimeline) {
  TempDir dir;
  const Trace& t = expiry_trace();
  const CommandResult r = run_command("show", {save(dir, t, "t.json")});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  for (uint32_t c = 1; c <= t.scenario.workload.clients; ++c) {
    EXPECT_NE(r.out.find("  c" + std::to_string(c) + " "), std::string::npos) << c;
  }
  EXPECT_NE(r.out.find("verdict: " + verdict_summary(t)), std::string::npos);
  std::string proof = ">> rows proving it:";
  for (uint64_t i : t.violation()->history_indexes) {
    proof += " h" + std::to_string(i);
    EXPECT_NE(r.out.find(">> h" + std::to_string(i) + " "), std::string::npos) << i;
  }
  EXPECT_NE(r.out.find(proof), std::string::npos) << r.out;
  EXPECT_NE(r.out.find('!'), std::string::npos);
}

// A run where every property held renders without violation marks, and replays exactly.
TEST(Show, PassingTraceHasNoViolationMarks) {
  const Trace t = first_trace("fair-mutex");
  ASSERT_EQ(t.violation(), nullptr) << verdict_summary(t);
  const std::string text = render_text(build_timeline(t));
  EXPECT_EQ(text.find("\n>> "), std::string::npos);
  EXPECT_NE(text.find("verdict: every property held"), std::string::npos) << text.substr(0, 400);
  EXPECT_NE(render_html(build_timeline(t)).find("\"violated\":false"), std::string::npos);
  EXPECT_FALSE(replay_trace(t, *recipes::find_recipe("fair-mutex")).divergence.has_value());
}

// `show --context N` keeps the proving rows and their neighbours and elides the rest.
TEST(Show, ContextKeepsOnlyRowsNearTheViolation) {
  TempDir dir;
  const std::string path = save(dir, expiry_trace(), "t.json");
  const CommandResult all = run_command("show", {path});
  const CommandResult near = run_command("show", {path, "--context", "2"});
  ASSERT_EQ(near.code, cli::kExitOk) << near.err;
  EXPECT_LT(near.out.size(), all.out.size() / 2);
  EXPECT_NE(near.out.find("   ...\n"), std::string::npos);
  for (uint64_t i : expiry_trace().violation()->history_indexes) {
    EXPECT_NE(near.out.find(">> h" + std::to_string(i) + " "), std::string::npos) << i;
  }
  EXPECT_EQ(run_command("show", {path, "--context", "x"}).code, cli::kExitUsage);
}

// `show --html OUT` writes a self-contained page whose lanes are drawn by its script (the static
// text has no lane element yet), and on bad input OUT is not created.
TEST(Show, HtmlPageIsSelfContainedAndNotWrittenOnBadInput) {
  TempDir dir;
  const std::string page = dir.file("page.html");
  CommandResult r =
      run_command("show", {save(dir, expiry_trace(), "t.json"), "--html", page});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  const std::string html = read_file(page);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("id=\"trace-data\""), std::string::npos);
  EXPECT_EQ(html.find("class=\"lane\""), std::string::npos);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);

  write_file(dir.file("bad.json"), "[]");
  const std::string other = dir.file("other.html");
  r = run_command("show", {dir.file("bad.json"), "--html", other});
  EXPECT_EQ(r.code, cli::kExitUsage);
  EXPECT_FALSE(std::filesystem::exists(other));
  r = run_command("show", {dir.file("bad.json"), "--html", page});
  EXPECT_EQ(r.code, cli::kExitUsage);
  EXPECT_EQ(read_file(page), html);
  EXPECT_EQ(run_command("show", {"--lane-width", "3", dir.file("t.json")}).code,
            cli::kExitUsage);
}

// `show T --html OUT` refuses (exit 2, naming OUT and another name to use) to write over the trace
// it shows — by the same name, another spelling or a hard link — and over any other trace, whole
// or truncated, leaving every file as it was; over a file that is not a trace it writes the page
// atomically (no temporary file is left beside it).
TEST(Show, HtmlNeverOverwritesATrace) {
  TempDir dir;
  const std::string shown = save(dir, expiry_trace(), "t.json");
  const std::string other = save(dir, first_trace("broken/sort-by-name"), "other.json");
  const std::string text = to_json_text(expiry_trace());
  write_file(dir.file("truncated.json"), text.substr(0, 300));
  std::filesystem::create_hard_link(shown, dir.file("link.json"));
  const std::string dotted = dir.path() + "/./t.json";
  for (const std::string& out : {shown, dotted, dir.file("link.json")}) {
    const CommandResult r = run_command("show", {shown, "--html", out});
    EXPECT_EQ(r.code, cli::kExitUsage) << out << ": " << r.out;
    EXPECT_NE(r.err.find("--html " + out + " is the trace being shown"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(".html"), std::string::npos) << r.err;  // another name to use
    EXPECT_EQ(read_file(shown), text);
  }
  const std::string before = read_file(other);
  for (const std::string& out : {other, dir.file("truncated.json")}) {
    const std::string was = read_file(out);
    const CommandResult r = run_command("show", {shown, "--html", out});
    EXPECT_EQ(r.code, cli::kExitUsage) << out << ": " << r.out;
    EXPECT_NE(r.err.find("--html " + out + " is a lockstep trace"), std::string::npos) << r.err;
    EXPECT_EQ(read_file(out), was);
  }
  EXPECT_EQ(read_file(other), before);

  const std::string page = dir.file("page.json");  // not a trace, whatever its name
  write_file(page, "{\"an\": \"older page or notes\"}");
  const CommandResult r = run_command("show", {shown, "--html", page});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  EXPECT_EQ(read_file(page).rfind("<!DOCTYPE html>", 0), 0u);
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos)
        << entry.path();
  }
}

}  // namespace
}  // namespace lockstep::traces
