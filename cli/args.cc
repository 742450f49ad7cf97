// Flag parsing, usage errors and dispatch shared by every subcommand (see cli/cli.h).
#include <algorithm>
#include <charconv>
#include <iostream>
#include <ostream>

#include "cli/cli.h"

namespace lockstep::cli {

std::string Args::get(std::string_view name, std::string fallback) const {
  auto it = flags.find(std::string(name));
  return it == flags.end() ? fallback : it->second;
}

std::vector<std::string> Args::all(std::string_view name) const {
  auto it = values.find(std::string(name));
  return it == values.end() ? std::vector<std::string>() : it->second;
}

const std::vector<const Command*>& commands() {
  static const std::vector<const Command*> all = {
      &kCheckCommand,       &kMergeCommand,   &kSelfCheckCommand, &kListCommand, &kExploreCommand,
      &kHerdCommand,        &kReplayCommand,  &kRecheckCommand,   &kShowCommand, &kCorpusCommand,
      &kConformanceCommand, &kVersionCommand, &kHelpCommand};
  return all;
}

const Command* find_command(std::string_view name) {
  for (const Command* c : commands()) {
    if (c->name == name) return c;
  }
  return nullptr;
}

int usage_error(const Command& command, std::string_view message, std::ostream& err) {
  if (find_command(command.name) == &command) {
    err << "lockstep " << command.name << ": " << message << "\n"
        << "Run 'lockstep help " << command.name << "' for its usage.\n";
  } else {  // a program of its own (run_program)
    err << command.name << ": " << message << "\n"
        << "Run '" << command.name << " --help' for its usage.\n";
  }
  return kExitUsage;
}

namespace {

const FlagSpec* find_flag(const Command& command, std::string_view name) {
  for (const FlagSpec& f : command.flags) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string flag_list(const Command& command) {
  if (command.flags.empty()) return "it takes no flags";
  std::string s = "its flags are:";
  for (const FlagSpec& f : command.flags) s += " --" + f.name;
  return s;
}

}  // namespace

std::optional<Args> parse_args(const Command& command, const std::vector<std::string>& argv,
                               std::ostream& err) {
  Args args;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "-h" || a == "--help") {
      args.flags["help"] = "";
      continue;
    }
    if (a.rfind("--", 0) != 0 || a.size() == 2) {
      if (!a.empty() && a[0] == '-') {
        usage_error(command, "unknown option '" + a + "'; flags are spelled --name (" +
                                 flag_list(command) + ")",
                    err);
        return std::nullopt;
      }
      if (command.positional.empty()) {
        usage_error(command, "unexpected argument '" + a + "'; '" + command.name +
                                 "' takes no arguments (" + flag_list(command) + ")",
                    err);
        return std::nullopt;
      }
      args.positional.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::optional<std::string> inline_value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name.resize(eq);
    }
    const FlagSpec* spec = find_flag(command, name);
    if (spec == nullptr) {
      usage_error(command, "unknown flag '--" + name + "' (" + flag_list(command) + ")", err);
      return std::nullopt;
    }
    if (spec->value_name.empty()) {
      if (inline_value) {
        usage_error(command, "flag '--" + name + "' takes no value; write just --" + name, err);
        return std::nullopt;
      }
      args.flags[name] = "";
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argv.size()) {
        usage_error(command,
                    "flag '--" + name + "' needs a value: --" + name + " " + spec->value_name, err);
        return std::nullopt;
      }
      inline_value = argv[++i];
    }
    args.flags[name] = *inline_value;
    args.values[name].push_back(*inline_value);
  }
  return args;
}

std::optional<uint64_t> parse_uint_flag(const Command& command, const Args& args,
                                        std::string_view name, uint64_t fallback, uint64_t min,
                                        uint64_t max, std::ostream& err) {
  if (!args.has(name)) return fallback;
  const std::string text = args.get(name, "");
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) {
    usage_error(command, "flag '--" + std::string(name) + "' wants a whole number from " +
                             std::to_string(min) + " to " + std::to_string(max) + ", not '" + text +
                             "'",
                err);
    return std::nullopt;
  }
  return v;
}

void print_columns(const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    for (size_t c = 0; c + 1 < row.size(); ++c) {
      out << row[c] << std::string(width[c] - row[c].size() + 2, ' ');
    }
    if (!row.empty()) out << row.back();
    out << "\n";
  }
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) items.emplace_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

namespace {

// Parses `flags` against `command`, answers --help, or runs it.
int parse_and_run(const Command& command, const std::vector<std::string>& flags, const Io& io) {
  std::optional<Args> args = parse_args(command, flags, io.err);
  if (!args) return kExitUsage;
  if (args->has("help")) {
    print_command_usage(command, io.out);
    return kExitOk;
  }
  return command.run(command, *args, io);
}

// Prints `problem`, the command list and where to read more; returns kExitUsage.
int top_level_usage_error(const std::string& problem, std::ostream& err) {
  err << "lockstep: " << problem << "\n"
      << "usage: lockstep COMMAND [flags]; commands:";
  for (const Command* c : commands()) err << " " << c->name;
  err << "\nRun 'lockstep help' for what each one does.\n";
  return kExitUsage;
}

}  // namespace

int run_command_line(const std::vector<std::string>& argv, const Io& io) {
  if (argv.empty()) return top_level_usage_error("no command given.", io.err);
  std::string name = argv[0];
  if (name == "-h" || name == "--help") name = "help";
  if (name == "--version") name = "version";
  const Command* command = find_command(name);
  if (command == nullptr) {
    return top_level_usage_error("unknown command '" + argv[0] + "'.", io.err);
  }
  return parse_and_run(*command, {argv.begin() + 1, argv.end()}, io);
}

int run_program(const Command& command, int argc, char** argv) {
  return parse_and_run(command, {argv + 1, argv + argc}, Io{std::cout, std::cerr});
}

void print_exit_codes(std::ostream& out) {
  for (const ExitCode& e : kExitCodes) {
    std::string left = std::to_string(e.code) + "  " + e.name;
    out << "  " << left;
    for (size_t pad = left.size(); pad < 20; ++pad) out << ' ';
    out << e.meaning << "\n";
  }
}

void print_command_usage(const Command& command, std::ostream& out) {
  out << "usage: " << (find_command(command.name) == &command ? "lockstep " : "") << command.name;
  if (!command.flags.empty()) out << " [flags]";
  if (!command.positional.empty()) out << " " << command.positional;
  out << "\n\n" << command.summary << "\n";
  if (!command.flags.empty()) out << "\nflags:\n";
  for (const FlagSpec& f : command.flags) {
    std::string left = "--" + f.name;
    if (!f.value_name.empty()) left += " " + f.value_name;
    out << "  " << left;
    for (size_t pad = left.size(); pad < 18; ++pad) out << ' ';
    out << "  " << f.help << "\n";
  }
  if (!command.details.empty()) out << "\n" << command.details;
}

}  // namespace lockstep::cli
