// lockstep explore: the small flag parser shared by `explore` and the time-to-bug table
// (explore/ cannot use cli/, which links explore/).
//
// Accepts "--flag VALUE", "--flag=VALUE" and boolean "--flag"; "-h" / "--help" is reported as
// the flag "help". Every flag must be declared; values are checked by the getters. Errors are
// values: a message saying what was wrong and how to fix it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace lockstep::explore {

class Flags {
 public:
  // `valued`: flags that take a value; `boolean`: flags that do not.
  Flags(std::set<std::string> valued, std::set<std::string> boolean)
      : valued_(std::move(valued)), boolean_(std::move(boolean)) {}

  // Parses argv[1..argc). False (and error()) on an unknown flag or a missing value.
  bool parse(int argc, char** argv);
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::string get(const std::string& name, const std::string& fallback) const;
  // A decimal integer in [min, max], or `fallback` when absent; nullopt (and error()) if bad.
  std::optional<uint64_t> number(const std::string& name, uint64_t fallback, uint64_t min,
                                 uint64_t max);
  const std::string& error() const { return error_; }

 private:
  std::set<std::string> valued_;
  std::set<std::string> boolean_;
  std::map<std::string, std::string> values_;
  std::string error_;
};

// Splits "a,b,c" on commas (empty items dropped).
std::vector<std::string> split_list(const std::string& text);

}  // namespace lockstep::explore
