#include "explore/flags.h"

#include <string_view>

namespace lockstep::explore {

bool Flags::parse(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      values_["help"] = "";
      continue;
    }
    if (arg.size() < 3 || arg.substr(0, 2) != "--") {
      error_ = "unexpected argument '" + std::string(arg) + "' (flags start with --)";
      return false;
    }
    std::string name(arg.substr(2));
    std::optional<std::string> value;
    const size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (boolean_.count(name) != 0) {
      if (value) {
        error_ = "--" + name + " takes no value";
        return false;
      }
      values_[name] = "";
      continue;
    }
    if (valued_.count(name) == 0) {
      error_ = "unknown flag --" + name;
      return false;
    }
    if (!value) {
      if (i + 1 >= argc) {
        error_ = "--" + name + " needs a value";
        return false;
      }
      value = argv[++i];
    }
    values_[name] = *value;
  }
  return true;
}

std::string Flags::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

std::optional<uint64_t> Flags::number(const std::string& name, uint64_t fallback, uint64_t min,
                                      uint64_t max) {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  const std::string& v = it->second;
  uint64_t n = 0;
  bool ok = !v.empty() && v.size() <= 19;
  for (char c : v) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!ok || n < min || n > max) {
    error_ = "--" + name + " wants an integer in [" + std::to_string(min) + ", " +
             std::to_string(max) + "], got '" + v + "'";
    return std::nullopt;
  }
  return n;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

}  // namespace lockstep::explore
