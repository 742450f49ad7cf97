// Tests of the lockstep binary as a user meets it: exit codes, usage errors, machine output.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace {

struct Outcome {
  int exit_code = -1;
  std::string output;
};

// Runs the built binary with `args` through the shell; `redirect` picks what is captured.
Outcome run(const std::string& args, const std::string& redirect = "2>&1") {
  const std::string cmd = std::string("'") + LOCKSTEP_BIN + "' " + args + " " + redirect;
  Outcome r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int status = pclose(p);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

// An unknown subcommand is a usage error (exit 2) that names it and lists the real ones.
TEST(Cli, UnknownCommandExits2AndListsCommands) {
  Outcome r = run("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("unknown command 'frobnicate'"), std::string::npos) << r.output;
  for (const char* c : {" check", " selfcheck", " list", " version", " help"}) {
    EXPECT_NE(r.output.find(c), std::string::npos) << c << " in " << r.output;
  }
  EXPECT_NE(r.output.find("lockstep help"), std::string::npos) << r.output;
}

// Running with no command at all is a usage error that shows how to call the tool.
TEST(Cli, NoCommandExits2WithUsage) {
  Outcome r = run("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("no command given"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("usage: lockstep COMMAND"), std::string::npos) << r.output;
}

// A flag the command does not have is a usage error naming the flag and the valid ones.
TEST(Cli, UnknownFlagExits2AndNamesValidFlags) {
  Outcome r = run("selfcheck --bogus");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("unknown flag '--bogus'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--seed --rounds"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("lockstep help selfcheck"), std::string::npos) << r.output;
}

// `check` hands its arguments to the property runner, whose usage errors also exit 2 and
// point at its help.
TEST(Cli, CheckUnknownFlagExits2) {
  Outcome r = run("check --bogus");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("'--bogus'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("lockstep check --help"), std::string::npos) << r.output;
}

// A single-dash option is rejected with the spelling lockstep wants.
TEST(Cli, SingleDashOptionExits2) {
  Outcome r = run("list -j");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("unknown option '-j'"), std::string::npos) << r.output;
}

// A value flag given without its value says which value is missing.
TEST(Cli, MissingFlagValueExits2) {
  Outcome r = run("selfcheck --seed");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("'--seed' needs a value: --seed N"), std::string::npos) << r.output;
}

// A non-numeric seed is rejected before anything runs, naming the range.
TEST(Cli, NonNumericSeedExits2) {
  Outcome r = run("selfcheck --seed=abc");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("'--seed' wants a whole number"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not 'abc'"), std::string::npos) << r.output;
}

// A boolean flag given a value is a usage error rather than silently accepted.
TEST(Cli, BooleanFlagWithValueExits2) {
  Outcome r = run("list --json=yes");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("'--json' takes no value"), std::string::npos) << r.output;
}

// A stray positional argument to a command that takes none is a usage error.
TEST(Cli, StrayArgumentExits2) {
  Outcome r = run("version extra");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("unexpected argument 'extra'"), std::string::npos) << r.output;
}

// `help` lists every command; `help X` and `X --help` print X's flags and exit 0.
TEST(Cli, HelpListsCommandsAndFlags) {
  Outcome all = run("help");
  EXPECT_EQ(all.exit_code, 0);
  for (const char* c : {"check", "selfcheck", "list", "version", "help"}) {
    EXPECT_NE(all.output.find(std::string("  ") + c), std::string::npos) << c << all.output;
  }
  Outcome one = run("help list");
  EXPECT_EQ(one.exit_code, 0);
  EXPECT_NE(one.output.find("--json"), std::string::npos) << one.output;
  Outcome flag = run("selfcheck --help");
  EXPECT_EQ(flag.exit_code, 0);
  EXPECT_NE(flag.output.find("--seed N"), std::string::npos) << flag.output;
  Outcome runner = run("help check");
  EXPECT_EQ(runner.exit_code, 0);
  EXPECT_NE(runner.output.find("--recipe NAME"), std::string::npos) << runner.output;
  Outcome bad = run("help nosuch");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("no command named 'nosuch'"), std::string::npos) << bad.output;
}

// `version` prints the project version.
TEST(Cli, VersionPrintsProjectVersion) {
  Outcome r = run("version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output.rfind("lockstep 0.", 0), 0u) << r.output;
}

// `list --json` prints, on stdout alone, a JSON array describing every registry entry with the
// keys the documentation promises, and both correct recipes and broken variants appear.
TEST(Cli, ListJsonIsValidAndComplete) {
  Outcome r = run("list --json", "2>/dev/null");
  ASSERT_EQ(r.exit_code, 0);
  nlohmann::json doc = nlohmann::json::parse(r.output, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(doc.is_discarded()) << r.output;
  ASSERT_TRUE(doc.is_array());
  ASSERT_FALSE(doc.empty());
  std::set<std::string> expected_seen;
  for (const auto& e : doc) {
    for (const char* key : {"name", "kind", "expected", "description", "seed"}) {
      ASSERT_TRUE(e.contains(key) && e[key].is_string()) << key << " in " << e.dump();
    }
    EXPECT_FALSE(e["name"].get<std::string>().empty()) << e.dump();
    expected_seen.insert(e["expected"].get<std::string>());
  }
  EXPECT_EQ(expected_seen, (std::set<std::string>{"broken", "correct"}));
  Outcome table = run("list");
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_NE(table.output.find(doc[0]["name"].get<std::string>()), std::string::npos);
}

// `check` passes its flags through to the property runner: asked for one recipe in JSON, it
// prints (on stdout alone) one JSON object whose results hold exactly that recipe.
TEST(Cli, CheckPassesFlagsToThePropertyRunner) {
  Outcome r = run("check --recipe fair-mutex --seeds 2 --json", "2>/dev/null");
  nlohmann::json doc = nlohmann::json::parse(r.output, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(doc.is_discarded()) << r.output;
  ASSERT_TRUE(doc.contains("results") && doc["results"].is_array()) << r.output;
  ASSERT_EQ(doc["results"].size(), 1u) << r.output;
  EXPECT_NE(doc["results"][0].dump().find("fair-mutex"), std::string::npos) << r.output;
}

// `selfcheck` says it is only a simulator self-check and passes on the default seed.
TEST(Cli, SelfCheckIsLabelledAndPasses) {
  Outcome r = run("selfcheck");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("SIMULATOR SELF-CHECK"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("self-check passed"), std::string::npos) << r.output;
}
}  // namespace
