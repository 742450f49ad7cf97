#include "fidelity/cases.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "traces/trace.h"

namespace lockstep::fidelity {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

}  // namespace

bool case_name_ok(const std::string& name) {
  if (name.empty() || name.size() > 100 || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

std::string to_json(const Case& c) {
  // Field order fixed and one line per operation and per outcome, so that a case reads (and
  // diffs) line by line.
  std::string out = "{\n";
  out += " \"format\": " + json(kCaseFormat).dump() + ",\n";
  out += " \"name\": " + json(c.name).dump() + ",\n";
  out += " \"servers\": " + std::to_string(c.servers) + ",\n";
  out += " \"found\": " + json(c.found).dump() + ",\n";
  out += " \"note\": " + json(c.note).dump() + ",\n";
  out += " \"operations\": [\n";
  for (size_t i = 0; i < c.operations.size(); ++i) {
    out += "  " + json(to_string(c.operations[i])).dump() +
           (i + 1 < c.operations.size() ? ",\n" : "\n");
  }
  out += " ],\n \"real\": [\n";
  for (size_t i = 0; i < c.real.size(); ++i) {
    nlohmann::ordered_json o;
    const Normalized& n = c.real[i];
    o["error"] = n.error;
    o["path"] = n.path;
    o["data"] = n.data;
    o["stat"] = n.stat;
    o["children"] = n.children;
    o["state"] = n.state;
    o["events"] = n.events;
    o["event_ms"] = n.event_ms;
    out += "  " + o.dump() + (i + 1 < c.real.size() ? ",\n" : "\n");
  }
  out += " ]\n}\n";
  return out;
}

bool parse_case(const std::string& text, Case* out, std::string* error) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    *error = "not a JSON object (a conformance case is one JSON object; see fidelity/cases.h)";
    return false;
  }
  auto str = [&](const char* key, std::string* v) {
    if (!j.contains(key) || !j[key].is_string()) {
      *error = std::string("field \"") + key + "\" is missing or not a string";
      return false;
    }
    *v = j[key].get<std::string>();
    return true;
  };
  std::string format;
  if (!str("format", &format)) return false;
  if (format != kCaseFormat) {
    *error = "field \"format\" is \"" + format + "\"; this lockstep reads \"" + kCaseFormat + "\"";
    return false;
  }
  Case c;
  if (!str("name", &c.name) || !str("found", &c.found) || !str("note", &c.note)) return false;
  if (!case_name_ok(c.name)) {
    *error = "field \"name\" must be 1-100 letters, digits, '-', '_' or '.'";
    return false;
  }
  if (!j.contains("servers") || !j["servers"].is_number_integer() ||
      (j["servers"].get<int>() != 1 && j["servers"].get<int>() != 3)) {
    *error = "field \"servers\" must be 1 (standalone) or 3 (an ensemble)";
    return false;
  }
  c.servers = j["servers"].get<int>();
  if (!j.contains("operations") || !j["operations"].is_array() || j["operations"].empty()) {
    *error = "field \"operations\" must be a non-empty array of operation lines";
    return false;
  }
  for (size_t i = 0; i < j["operations"].size(); ++i) {
    const json& o = j["operations"][i];
    Op op;
    std::string why;
    if (!o.is_string() || !parse_op(o.get<std::string>(), &op, &why)) {
      *error = "operations[" + std::to_string(i) +
               "]: " + (o.is_string() ? why : std::string("not a string"));
      return false;
    }
    c.operations.push_back(op);
  }
  std::string why;
  if (!valid(c.operations, c.servers, GenerateOptions{}.session_timeout, &why)) {
    *error = "field \"operations\": " + why;
    return false;
  }
  if (!j.contains("real") || !j["real"].is_array() || j["real"].size() != c.operations.size()) {
    *error = "field \"real\" must hold one recorded outcome per operation (" +
             std::to_string(c.operations.size()) + ")";
    return false;
  }
  for (size_t i = 0; i < j["real"].size(); ++i) {
    const json& o = j["real"][i];
    Normalized n;
    const std::string at = "real[" + std::to_string(i) + "]";
    if (!o.is_object()) {
      *error = at + ": not an object";
      return false;
    }
    for (auto [key, field] :
         {std::pair{"error", &n.error}, std::pair{"path", &n.path}, std::pair{"data", &n.data},
          std::pair{"stat", &n.stat}, std::pair{"children", &n.children},
          std::pair{"state", &n.state}, std::pair{"events", &n.events}}) {
      if (!o.contains(key) || !o[key].is_string()) {
        *error = at + ": field \"" + key + "\" is missing or not a string";
        return false;
      }
      *field = o[key].get<std::string>();
    }
    if (!o.contains("event_ms") || !o["event_ms"].is_array()) {
      *error = at + ": field \"event_ms\" is missing or not an array";
      return false;
    }
    for (const json& ms : o["event_ms"]) {
      if (!ms.is_number_integer()) {
        *error = at + ": \"event_ms\" holds a value that is not an integer";
        return false;
      }
      n.event_ms.push_back(ms.get<int64_t>());
    }
    c.real.push_back(std::move(n));
  }
  *out = std::move(c);
  return true;
}

std::string save_case(const std::string& dir, const Case& c, std::string* error) {
  if (!case_name_ok(c.name)) {
    *error = "a case name must be 1-100 letters, digits, '-', '_' or '.'";
    return "";
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    *error = "cannot create " + dir + ": " + ec.message();
    return "";
  }
  const std::string path = (fs::path(dir) / (c.name + ".json")).string();
  if (fs::exists(path, ec)) {
    *error = path +
             " exists: a saved case is not overwritten (choose another name, or delete "
             "the file if it is no longer wanted)";
    return "";
  }
  if (!traces::write_file_atomically(path, to_json(c), error)) return "";
  return path;
}

std::string free_case_name(const std::string& dir, const std::string& stem) {
  std::error_code ec;
  std::string name = stem;
  for (int n = 2; fs::exists(fs::path(dir) / (name + ".json"), ec); ++n) {
    name = stem + "-" + std::to_string(n);
  }
  return name;
}

bool load_cases(const std::string& dir, std::vector<Case>* out, std::string* error) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return true;
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  if (ec) {
    *error = "cannot read " + dir + ": " + ec.message();
    return false;
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::ifstream in(f);
    std::stringstream text;
    text << in.rdbuf();
    Case c;
    std::string why;
    if (!in || !parse_case(text.str(), &c, &why)) {
      *error = f.string() + ": " + (in ? why : std::string("cannot be read"));
      return false;
    }
    out->push_back(std::move(c));
  }
  return true;
}

std::vector<std::string> check_case(const Case& c, const RunResult& run, const std::string& root) {
  std::vector<std::string> out;
  const size_t n = std::min(run.outcomes.size(), c.real.size());
  for (size_t i = 0; i < n; ++i) {
    const Normalized got = normalize(run.outcomes[i], root, timed(c.operations[i]));
    const std::vector<std::string> kinds = differences(got, c.real[i]);
    if (kinds.empty()) continue;
    std::string k;
    for (const std::string& s : kinds) k += (k.empty() ? "" : ",") + s;
    out.push_back("op #" + std::to_string(i) + " " + to_string(c.operations[i]) + " [" + k +
                  "]: got " + to_string(got) + "; recorded " + to_string(c.real[i]));
  }
  if (!run.completed) {
    out.push_back("the run did not complete (" + std::to_string(run.outcomes.size()) + " of " +
                  std::to_string(c.operations.size()) +
                  " operations): " + (run.stopped.empty() ? "it stopped early" : run.stopped));
  }
  return out;
}

}  // namespace lockstep::fidelity
