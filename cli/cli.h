// lockstep CLI: the command table and the flag parser every subcommand shares.
//
// The binary (target `lockstep`, built at build/cli/lockstep and run through the top-level
// ./lockstep script) is a thin dispatcher: cli/main.cc hands its arguments to run_command_line,
// which looks the first one up in commands(), parses the rest against that command's flags with
// the one parser below and calls its run(). Each subcommand lives in its own cli/cmd_*.cc and
// exports one `const Command`; it owns its flags, its printing and its exit codes, and calls an
// engine that takes values (properties/check.h, explore/search.h, traces/record.h, ...). No
// library below cli/ sees argv.
//
// Exit codes: kExitCodes below, one table for every command. A usage error always says what was
// wrong and how to fix it. Single-threaded; no global state beyond the constant command table.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep::cli {

// The one exit-code table of every command (README "Exit codes", `lockstep help`). A command
// returns one of these and nothing else; the meaning of a number never depends on the command.
constexpr int kExitOk = 0;             // everything behaved as expected
constexpr int kExitFailure = 1;        // the command ran and found a failure
constexpr int kExitUsage = 2;          // bad flag, value or input file: nothing was judged
constexpr int kExitNoServer = 3;       // a real ZooKeeper server is needed and cannot be started
constexpr int kExitIncomplete = 4;     // no failure in what ran, but the search was cut short
constexpr int kExitDiverged = 5;       // replay: the run left its recording
constexpr int kExitRecipeChanged = 6;  // replay: the recipe changed since the trace was recorded
constexpr int kExitInterrupted = 130;  // SIGINT, SIGTERM or SIGHUP stopped the run

struct ExitCode {
  int code;
  const char* name;     // one word, for tables and JSON
  const char* meaning;  // one line, as README's table and `lockstep help` print it
};

inline constexpr ExitCode kExitCodes[] = {
    {kExitOk, "ok", "everything behaved as expected"},
    {kExitFailure, "failure",
     "a correct recipe failed, a broken variant was not caught, a trace still fails, a "
     "counterexample was found, or the simulator and the server disagree"},
    {kExitUsage, "usage",
     "a bad flag, value or input file: the message says what and how to fix it"},
    {kExitNoServer, "no-server",
     "a real ZooKeeper server is needed and cannot be started (java or the server's jar "
     "missing: the message says how to install them)"},
    {kExitIncomplete, "incomplete",
     "explore found nothing in what it ran but stopped before its scope was exhausted; merge: "
     "a shard was interrupted and nothing failed in what ran"},
    {kExitDiverged, "diverged",
     "replay: the run left its recording (the first divergent event is named)"},
    {kExitRecipeChanged, "recipe-changed",
     "replay: the recipe changed since the trace was recorded (--allow-changed replays anyway)"},
    {kExitInterrupted, "interrupted",
     "SIGINT, SIGTERM or SIGHUP stopped the run; what was fully run is reported"},
};

struct FlagSpec {
  std::string name;        // without the dashes: "json" for --json
  std::string value_name;  // empty for a boolean flag; "N" for --seed N
  std::string help;        // one line
};

// The flags and positional arguments a command was given, already checked against its specs.
struct Args {
  std::map<std::string, std::string> flags;  // boolean flags map to ""; the last value given
  std::map<std::string, std::vector<std::string>> values;  // every value of a flag, in order
  std::vector<std::string> positional;

  bool has(std::string_view name) const { return flags.count(std::string(name)) != 0; }
  // The flag's value, or `fallback` when absent.
  std::string get(std::string_view name, std::string fallback) const;
  // Every value a repeatable flag was given (--recipe A --recipe B), in order.
  std::vector<std::string> all(std::string_view name) const;
};

// Where a command writes: its report to `out`, diagnostics and usage errors to `err`.
struct Io {
  std::ostream& out;
  std::ostream& err;
  bool interactive = false;  // `err` is a terminal: a progress line may be redrawn on it
  // How the printed commands (reproduce, replay, show) call the tool: "./lockstep" from a source
  // tree; a user's own binary (cli/user_main.h) its own name.
  const char* program = "./lockstep";
};

struct Command {
  std::string name;
  std::string summary;     // one line, for `lockstep help`
  std::string positional;  // e.g. "[COMMAND]"; empty when the command takes none
  std::vector<FlagSpec> flags;
  // Returns an exit code of kExitCodes. Usage errors found after parsing (a value out of range)
  // go through usage_error() so they read like the parser's own.
  int (*run)(const Command& self, const Args& args, const Io& io) = nullptr;
  // More of the usage text, printed after the flags: what the output holds, the exit codes the
  // command returns (one line each: "N  meaning"). Empty for none.
  std::string details;
};

// Every subcommand, in the order `lockstep help` lists them.
const std::vector<const Command*>& commands();
const Command* find_command(std::string_view name);

// Runs one command line: argv[0] names the command ("help" for -h/--help, "version" for
// --version), the rest are its flags and arguments. Returns the exit code.
int run_command_line(const std::vector<std::string>& argv, const Io& io);

// Runs a program of its own (a benchmark) whose flags are `command`'s, with the standard streams:
// parses argv[1..argc) with the one parser, answers --help, and calls command.run.
int run_program(const Command& command, int argc, char** argv);

// Parses argv after the subcommand name. Accepts "--flag", "--flag VALUE", "--flag=VALUE" and
// "-h"/"--help" (reported as the flag "help"). On an error, prints it (with the fix) to `err`
// and returns nullopt.
std::optional<Args> parse_args(const Command& command, const std::vector<std::string>& argv,
                               std::ostream& err);

// Prints "lockstep <command>: <message>" and how to get help to `err`; returns kExitUsage.
int usage_error(const Command& command, std::string_view message, std::ostream& err);

// Parses a non-negative decimal integer flag value in [min, max]; on failure reports a usage
// error naming the flag to `err` and returns nullopt.
std::optional<uint64_t> parse_uint_flag(const Command& command, const Args& args,
                                        std::string_view name, uint64_t fallback, uint64_t min,
                                        uint64_t max, std::ostream& err);

// Prints `rows` (the first one a header) as columns padded to their widest cell, two spaces
// apart (widths count bytes: a cell with non-ASCII text may look one column short).
void print_columns(const std::vector<std::vector<std::string>>& rows, std::ostream& out);

// Splits "a,b,c" on commas; empty items are dropped.
std::vector<std::string> split_list(std::string_view text);

// The full usage text of one command.
void print_command_usage(const Command& command, std::ostream& out);

// The exit-code table as README's "Exit codes" section and `lockstep help` print it.
void print_exit_codes(std::ostream& out);

// The subcommands, each defined in its own cli/cmd_*.cc.
extern const Command kCheckCommand;
extern const Command kMergeCommand;
extern const Command kSelfCheckCommand;
extern const Command kListCommand;
extern const Command kExploreCommand;
extern const Command kHerdCommand;
extern const Command kReplayCommand;
extern const Command kRecheckCommand;
extern const Command kShowCommand;
extern const Command kCorpusCommand;
extern const Command kConformanceCommand;
extern const Command kVersionCommand;
extern const Command kHelpCommand;

}  // namespace lockstep::cli
