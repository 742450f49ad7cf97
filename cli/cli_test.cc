// Tests of the lockstep binary as a user meets it: exit codes, usage errors, machine output.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
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

// Runs `lockstep <args>` and checks its exit code and that its output (stdout and stderr)
// contains every one of `needles`; returns the run for further checks.
Outcome expect_run(const std::string& args, int exit_code,
                   std::initializer_list<std::string> needles) {
  SCOPED_TRACE("lockstep " + args);
  Outcome r = run(args);
  EXPECT_EQ(r.exit_code, exit_code) << r.output;
  for (const std::string& n : needles) {
    EXPECT_NE(r.output.find(n), std::string::npos) << "'" << n << "' in: " << r.output;
  }
  return r;
}

constexpr int kUsageError = 2;

// An unknown subcommand is a usage error (exit 2) that names it and lists the real ones.
TEST(Cli, UnknownCommandExits2AndListsCommands) {
  expect_run("frobnicate", kUsageError,
             {"unknown command 'frobnicate'", " check", " selfcheck", " list", " version", " help",
              "lockstep help"});
}

// Running with no command at all is a usage error that shows how to call the tool.
TEST(Cli, NoCommandExits2WithUsage) {
  expect_run("", kUsageError, {"no command given", "usage: lockstep COMMAND"});
}

// A flag the command does not have is a usage error naming the flag and the valid ones.
TEST(Cli, UnknownFlagExits2AndNamesValidFlags) {
  expect_run("selfcheck --bogus", kUsageError,
             {"unknown flag '--bogus'", "--seed --rounds", "lockstep help selfcheck"});
}

// `check` hands its arguments to the property runner, whose usage errors also exit 2 and
// point at its help.
TEST(Cli, CheckUnknownFlagExits2) {
  expect_run("check --bogus", kUsageError, {"'--bogus'", "lockstep check --help"});
}

// A single-dash option is rejected with the spelling lockstep wants.
TEST(Cli, SingleDashOptionExits2) { expect_run("list -j", kUsageError, {"unknown option '-j'"}); }

// A value flag given without its value says which value is missing.
TEST(Cli, MissingFlagValueExits2) {
  expect_run("selfcheck --seed", kUsageError, {"'--seed' needs a value: --seed N"});
}

// A non-numeric seed is rejected before anything runs, naming the range.
TEST(Cli, NonNumericSeedExits2) {
  expect_run("selfcheck --seed=abc", kUsageError, {"'--seed' wants a whole number", "not 'abc'"});
}

// A boolean flag given a value is a usage error rather than silently accepted.
TEST(Cli, BooleanFlagWithValueExits2) {
  expect_run("list --json=yes", kUsageError, {"'--json' takes no value"});
}

// A stray positional argument to a command that takes none is a usage error.
TEST(Cli, StrayArgumentExits2) {
  expect_run("version extra", kUsageError, {"unexpected argument 'extra'"});
}

// `help` lists every command; `help X` and `X --help` print X's flags and exit 0.
TEST(Cli, HelpListsCommandsAndFlags) {
  expect_run("help", 0, {"  check", "  selfcheck", "  list", "  version", "  help"});
  expect_run("help list", 0, {"--json"});
  expect_run("selfcheck --help", 0, {"--seed N"});
  expect_run("help check", 0, {"--recipe NAME"});
  expect_run("help nosuch", kUsageError, {"no command named 'nosuch'"});
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

// `check` saves the trace of a caught broken variant (the CLI installs the trace saver), prints
// its path with the replay and show commands, and the file replays exactly and shows the
// violation; a trace directory that cannot be created is a usage error (exit 2) naming it.
TEST(Cli, CheckSavesAFailureTraceThatReplays) {
  std::string dir = (std::filesystem::temp_directory_path() / "lockstep-cli-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const Outcome r = expect_run("check --recipe broken/sort-by-name --seeds 20 --trace-dir " + dir,
                               0, {"  trace:     " + dir + "/broken_sort-by-name-seed"});
  const size_t at = r.output.find("  trace:     ") + 13;
  const std::string path = r.output.substr(at, r.output.find('\n', at) - at);
  EXPECT_NE(r.output.find("  replay:    ./lockstep replay " + path), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(path)) << path;
  expect_run("replay " + path, 0, {"reproduced exactly"});
  expect_run("show " + path, 0, {"verdict: mutual-exclusion VIOLATED", ">> rows proving it"});
  expect_run("check --recipe broken/sort-by-name --trace-dir " + path + "/sub", kUsageError,
             {"cannot save failure traces in '" + path + "/sub'", "--no-traces"});
  std::filesystem::remove_all(dir);
}
}  // namespace
