// lockstep_scale end to end: a run's --json line reads back into the same table row, --render
// prints the table of saved runs and writes the plot (three log-log panels, a line per recipe,
// an open circle for a run stopped at its budget), and bad input is a usage error (exit 2).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "tools/shell_run.h"

namespace {

using Outcome = lockstep::tools::ShellRun;

Outcome run(const std::string& args) {
  return lockstep::tools::shell_run(std::string(LOCKSTEP_SCALE_BIN) + " " + args + " 2>&1");
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Scale, RenderPrintsTheTableOfSavedRunsAndPlotsThem) {
  const std::string dir = ::testing::TempDir();
  const std::string rows = dir + "scale-rows.jsonl", svg = dir + "scale.svg";
  std::remove(svg.c_str());
  const Outcome fair = run("--recipe fair-mutex --clients 20 --rounds 2 --json");
  const Outcome fair_row = run("--recipe fair-mutex --clients 20 --rounds 2 --row");
  const Outcome naive = run("--recipe naive-mutex --clients 30 --rounds 2 --max-grants 5 --json");
  ASSERT_EQ(fair.exit_code, 0) << fair.output;
  ASSERT_EQ(naive.exit_code, 0) << naive.output;
  EXPECT_NE(fair.output.find("\"clients\":20"), std::string::npos) << fair.output;
  EXPECT_NE(naive.output.find("\"complete\":false"), std::string::npos) << naive.output;
  std::ofstream(rows) << fair.output << naive.output;

  const Outcome table = run("--render " + rows + " --svg " + svg);
  ASSERT_EQ(table.exit_code, 0) << table.output;
  // The fair run's row, read back from its JSON, is the row the run printed (but for the
  // timings, which differ between two runs): same recipe, clients, grants and requests.
  std::istringstream lines(table.output);
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(header.rfind("recipe", 0), 0u) << table.output;
  EXPECT_EQ(first.substr(0, 35), fair_row.output.substr(0, 35)) << table.output;
  EXPECT_NE(second.find("(stopped early)"), std::string::npos) << table.output;

  std::ifstream in(svg);
  ASSERT_TRUE(in.good()) << "no plot at " << svg;
  const std::string plot((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(plot.rfind("<svg", 0), 0u);
  for (const char* id : {"scale-cpu", "scale-rss", "scale-grant"}) {
    EXPECT_NE(plot.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  }
  EXPECT_EQ(count(plot, "<polyline class=\"series\" data-recipe=\"fair-mutex\""), 3u);
  EXPECT_EQ(count(plot, "<polyline class=\"series\" data-recipe=\"naive-mutex\""), 3u);
  EXPECT_EQ(count(plot, "fill=\"white\" stroke="), 3u);  // the stopped run, once per panel
}

// The number after `"key":` in a --json line (0 when it is not there).
double field(const std::string& json, const std::string& key) {
  const std::string at = "\"" + key + "\":";
  const size_t i = json.find(at);
  return i == std::string::npos ? 0.0 : std::stod(json.substr(i + at.size()));
}

TEST(Scale, WarmupRoundsMeasureTheGrantsAfterThemAlone) {
  // 20 clients x 5 rounds with 2 warm-up rounds: the steady state is the last 60 of the 100
  // grants, and its CPU time is part of the whole run's. Without the flag the keys are absent.
  const Outcome warm = run("--recipe fair-mutex --clients 20 --rounds 5 --warmup-rounds 2 --json");
  ASSERT_EQ(warm.exit_code, 0) << warm.output;
  EXPECT_EQ(field(warm.output, "grants"), 100) << warm.output;
  EXPECT_EQ(field(warm.output, "warmup_rounds"), 2) << warm.output;
  EXPECT_EQ(field(warm.output, "steady_grants"), 60) << warm.output;
  EXPECT_LE(field(warm.output, "steady_cpu_s"), field(warm.output, "cpu_s")) << warm.output;
  EXPECT_NE(warm.output.find("\"steady_cpu_us_per_grant\":"), std::string::npos) << warm.output;
  const Outcome plain = run("--recipe fair-mutex --clients 20 --rounds 5 --json");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(plain.output.find("steady"), std::string::npos) << plain.output;
  // The text form says it too, and a saved line with the keys renders like any other.
  const Outcome text = run("--recipe fair-mutex --clients 20 --rounds 5 --warmup-rounds 2");
  EXPECT_NE(text.output.find("steady state, after 2 warm-up rounds: 60 grants"), std::string::npos)
      << text.output;
  const std::string rows = ::testing::TempDir() + "scale-warm.jsonl";
  std::ofstream(rows) << warm.output;
  const Outcome table = run("--render " + rows);
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("fair-mutex"), std::string::npos) << table.output;
  // No round left to measure is a usage error.
  const Outcome none = run("--clients 20 --rounds 3 --warmup-rounds 3");
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_NE(none.output.find("leaves no round to measure"), std::string::npos) << none.output;
}

TEST(Scale, BadInputIsAUsageError) {
  const std::string bad = ::testing::TempDir() + "scale-bad.jsonl";
  std::ofstream(bad) << "{\"clients\": 3}\n";
  const Outcome missing = run("--render " + ::testing::TempDir() + "no-such-file.jsonl");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("cannot read"), std::string::npos) << missing.output;
  const Outcome wrong = run("--render " + bad);
  EXPECT_EQ(wrong.exit_code, 2) << wrong.output;
  EXPECT_NE(wrong.output.find(":1: a key is missing"), std::string::npos) << wrong.output;
  const Outcome recipe = run("--recipe no-such-lock");
  EXPECT_EQ(recipe.exit_code, 2) << recipe.output;
}

}  // namespace
