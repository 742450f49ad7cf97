// The trace file format (traces/FORMAT.md): serialization, parsing, atomic writes.
#include "traces/trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

namespace lockstep::traces {
namespace {

using Json = nlohmann::ordered_json;
using properties::Event;
using properties::History;
using properties::Verdict;

std::string hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
  return buf;
}

// Thrown only inside this file, for a document that does not follow the schema; parse_trace
// turns it into a LoadError.
struct SchemaError {
  std::string message;
};

uint64_t parse_hex64(const Json& j, const char* what) {
  if (!j.is_string()) throw SchemaError{std::string(what) + " must be a hex string"};
  const std::string s = j.get<std::string>();
  if (s.size() < 3 || s.size() > 18 || s[0] != '0' || s[1] != 'x') {
    throw SchemaError{std::string(what) + " must look like 0x0123abcd, not \"" + s + "\""};
  }
  uint64_t v = 0;
  for (size_t i = 2; i < s.size(); ++i) {
    const char c = s[i];
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) throw SchemaError{std::string(what) + ": bad hex digit in \"" + s + "\""};
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  return v;
}

// Enum <-> name through the enum's own to_string, so the names in files are the ones printed
// everywhere else.
template <class E, class ToString>
E parse_enum(const Json& j, int count, ToString to_string, const char* what) {
  if (!j.is_string()) throw SchemaError{std::string(what) + " must be a string"};
  const std::string s = j.get<std::string>();
  for (int i = 0; i < count; ++i) {
    if (s == to_string(static_cast<E>(i))) return static_cast<E>(i);
  }
  throw SchemaError{std::string("unknown ") + what + " \"" + s + "\""};
}

const char* role_name(recipes::Role r) {
  switch (r) {
    case recipes::Role::kExclusive: return "exclusive";
    case recipes::Role::kRead: return "read";
    case recipes::Role::kWrite: return "write";
  }
  return "?";
}

const char* fault_kind_name(sim::FaultKind k) { return properties::fault_name(k); }
const char* property_name(properties::Property p) { return properties::to_string(p); }
const char* choice_name(sim::ChoiceKind k) { return sim::to_string(k); }
const char* kind_name(recipes::Kind k) { return recipes::to_string(k); }
const char* type_name(properties::Type t) { return properties::to_string(t); }
const char* op_name(properties::Op o) { return properties::to_string(o); }
const char* state_name(recipes::LockState s) { return recipes::to_string(s); }

// Field access that names what is missing.
const Json& field(const Json& j, const char* key) {
  if (!j.is_object()) throw SchemaError{std::string("expected an object holding \"") + key + "\""};
  auto it = j.find(key);
  if (it == j.end()) throw SchemaError{std::string("missing field \"") + key + "\""};
  return *it;
}

template <class T>
T get(const Json& j, const char* key) {
  const Json& v = field(j, key);
  try {
    return v.get<T>();
  } catch (const nlohmann::json::exception&) {
    throw SchemaError{std::string("field \"") + key + "\" has the wrong type"};
  }
}

zk::Duration get_us(const Json& j, const char* key) {
  return zk::microseconds(get<int64_t>(j, key));
}
zk::Time get_time(const Json& j, const char* key) { return zk::Time{get<int64_t>(j, key)}; }

// ---- scenario ----
Json fault_to_json(const sim::Fault& f) {
  Json j;
  j["kind"] = fault_kind_name(f.kind);
  j["at_us"] = f.at.us;
  j["client"] = f.client;
  j["server"] = f.server;
  j["duration_us"] = f.duration.us;
  j["extra_us"] = f.extra.us;
  j["name"] = f.name;
  return j;
}

sim::Fault fault_from_json(const Json& j) {
  sim::Fault f;
  const std::string kind = get<std::string>(j, "kind");
  if (!properties::parse_fault_name(kind, &f.kind)) {
    throw SchemaError{"unknown fault kind \"" + kind + "\""};
  }
  f.at = get_time(j, "at_us");
  f.client = get<uint32_t>(j, "client");
  f.server = get<uint32_t>(j, "server");
  f.duration = get_us(j, "duration_us");
  f.extra = get_us(j, "extra_us");
  f.name = get<std::string>(j, "name");
  return f;
}

Json workload_to_json(const properties::WorkloadOptions& w) {
  Json j;
  j["clients"] = w.clients;
  j["rounds"] = w.rounds;
  j["lock_path"] = w.lock_path;
  j["kind"] = kind_name(w.kind);
  j["max_leases"] = w.max_leases;
  Json roles = Json::array();
  for (recipes::Role r : w.roles) roles.push_back(role_name(r));
  j["roles"] = roles;
  j["think_max_us"] = w.think_max.us;
  j["hold_min_us"] = w.hold_min.us;
  j["hold_max_us"] = w.hold_max.us;
  j["timed_percent"] = w.timed_percent;
  j["acquire_timeout_us"] = w.acquire_timeout.us;
  j["reentrant_percent"] = w.reentrant_percent;
  j["stray_release_percent"] = w.stray_release_percent;
  j["long_hold_percent"] = w.long_hold_percent;
  j["long_hold_us"] = w.long_hold.us;
  j["give_up_percent"] = w.give_up_percent;
  j["max_reopens"] = w.max_reopens;
  return j;
}

properties::WorkloadOptions workload_from_json(const Json& j) {
  properties::WorkloadOptions w;
  w.clients = get<uint32_t>(j, "clients");
  w.rounds = get<uint32_t>(j, "rounds");
  w.lock_path = get<std::string>(j, "lock_path");
  w.kind = parse_enum<recipes::Kind>(field(j, "kind"), 4, kind_name, "recipe kind");
  w.max_leases = get<uint32_t>(j, "max_leases");
  const Json& roles = field(j, "roles");
  if (!roles.is_array()) throw SchemaError{"\"roles\" must be an array"};
  for (const Json& r : roles) w.roles.push_back(parse_enum<recipes::Role>(r, 3, role_name, "role"));
  w.think_max = get_us(j, "think_max_us");
  w.hold_min = get_us(j, "hold_min_us");
  w.hold_max = get_us(j, "hold_max_us");
  w.timed_percent = get<uint32_t>(j, "timed_percent");
  w.acquire_timeout = get_us(j, "acquire_timeout_us");
  w.reentrant_percent = get<uint32_t>(j, "reentrant_percent");
  w.stray_release_percent = get<uint32_t>(j, "stray_release_percent");
  w.long_hold_percent = get<uint32_t>(j, "long_hold_percent");
  w.long_hold = get_us(j, "long_hold_us");
  w.give_up_percent = get<uint32_t>(j, "give_up_percent");
  w.max_reopens = get<uint32_t>(j, "max_reopens");
  return w;
}

Json scenario_to_json(const properties::Scenario& s) {
  Json j;
  j["seed"] = s.seed;
  j["workload"] = workload_to_json(s.workload);
  j["servers"] = s.servers;
  j["session_timeout_us"] = s.session_timeout.us;
  j["local_session_expiry"] = s.local_session_expiry;
  j["sequence_start"] = s.sequence_start ? Json(*s.sequence_start) : Json(nullptr);
  Json faults = Json::array();
  for (const sim::Fault& f : s.faults) faults.push_back(fault_to_json(f));
  j["faults"] = faults;
  j["heal_at_us"] = s.heal_at.us;
  j["liveness_bound_us"] = s.liveness_bound.us;
  j["run_limit_us"] = s.run_limit.us;
  return j;
}

properties::Scenario scenario_from_json(const Json& j) {
  properties::Scenario s;
  s.seed = get<uint64_t>(j, "seed");
  s.workload = workload_from_json(field(j, "workload"));
  s.servers = get<uint32_t>(j, "servers");
  s.session_timeout = get_us(j, "session_timeout_us");
  s.local_session_expiry = get<bool>(j, "local_session_expiry");
  const Json& seq = field(j, "sequence_start");
  if (!seq.is_null()) s.sequence_start = get<int32_t>(j, "sequence_start");
  const Json& faults = field(j, "faults");
  if (!faults.is_array()) throw SchemaError{"\"faults\" must be an array"};
  for (const Json& f : faults) s.faults.push_back(fault_from_json(f));
  s.heal_at = get_time(j, "heal_at_us");
  s.liveness_bound = get_us(j, "liveness_bound_us");
  s.run_limit = get_us(j, "run_limit_us");
  return s;
}

// ---- verdicts ----
Json verdict_to_json(const Verdict& v) {
  Json j;
  j["property"] = property_name(v.property);
  j["ok"] = v.ok;
  j["message"] = v.message;
  j["events"] = v.events;
  return j;
}

Verdict verdict_from_json(const Json& j) {
  Verdict v;
  v.property = parse_enum<properties::Property>(field(j, "property"), properties::kPropertyCount,
                                                property_name, "property");
  v.ok = get<bool>(j, "ok");
  v.message = get<std::string>(j, "message");
  v.events = get<std::vector<uint64_t>>(j, "events");
  return v;
}

// ---- history ----
Json history_event_to_json(const Event& e) {
  Json j;
  j["at_us"] = e.at.us;
  j["client"] = e.client;
  j["session"] = hex64(e.session.value);
  j["type"] = type_name(e.type);
  j["op"] = op_name(e.op);
  j["error"] = static_cast<int>(e.error);
  j["token"] = e.token;
  j["hold_count"] = e.hold_count;
  j["role"] = role_name(e.role);
  j["state"] = state_name(e.state);
  j["session_state"] = zk::to_string(e.session_state);
  j["text"] = e.text;
  return j;
}

Event history_event_from_json(const Json& j) {
  Event e;
  e.at = get_time(j, "at_us");
  e.client = get<uint32_t>(j, "client");
  e.session = zk::SessionId{parse_hex64(field(j, "session"), "session")};
  e.type = parse_enum<properties::Type>(field(j, "type"), 4, type_name, "history type");
  e.op = parse_enum<properties::Op>(field(j, "op"), static_cast<int>(properties::Op::kSession) + 1,
                                    op_name, "history op");
  e.error = static_cast<zk::Error>(get<int>(j, "error"));
  e.token = get<int64_t>(j, "token");
  e.hold_count = get<uint32_t>(j, "hold_count");
  e.role = parse_enum<recipes::Role>(field(j, "role"), 3, role_name, "role");
  e.state = parse_enum<recipes::LockState>(
      field(j, "state"), static_cast<int>(recipes::LockState::kLost) + 1, state_name, "lock state");
  e.session_state = parse_enum<zk::SessionState>(
      field(j, "session_state"), static_cast<int>(zk::SessionState::kClosed) + 1,
      [](zk::SessionState st) { return zk::to_string(st); }, "session state");
  e.text = get<std::string>(j, "text");
  return e;
}

// ---- writer: pretty at the top, one array element per line (readable and diffable) ----
void write_value(std::string* out, const Json& j, int indent);

void write_newline(std::string* out, int indent) {
  out->push_back('\n');
  out->append(static_cast<size_t>(indent), ' ');
}

void write_value(std::string* out, const Json& j, int indent) {
  if (j.is_object() && !j.empty()) {
    out->push_back('{');
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!first) out->push_back(',');
      first = false;
      write_newline(out, indent + 2);
      out->append(Json(it.key()).dump());
      out->append(": ");
      write_value(out, it.value(), indent + 2);
    }
    write_newline(out, indent);
    out->push_back('}');
  } else if (j.is_array() && !j.empty() && !j.front().is_number()) {
    out->push_back('[');
    bool first = true;
    for (const Json& e : j) {
      if (!first) out->push_back(',');
      first = false;
      write_newline(out, indent + 2);
      out->append(e.dump(-1, ' ', false, Json::error_handler_t::replace));
    }
    write_newline(out, indent);
    out->push_back(']');
  } else {
    out->append(j.dump(-1, ' ', false, Json::error_handler_t::replace));
  }
}

Trace trace_from_json(const Json& doc) {
  Trace t;
  const Json& recipe = field(doc, "recipe");
  t.recipe = get<std::string>(recipe, "name");
  t.recipe_kind = get<std::string>(recipe, "kind");
  t.recipe_expected = get<std::string>(recipe, "expected");
  t.recipe_fingerprint = get<std::string>(recipe, "fingerprint");
  t.scenario = scenario_from_json(field(doc, "scenario"));
  if (get<uint64_t>(doc, "seed") != t.scenario.seed) {
    throw SchemaError{"\"seed\" differs from \"scenario\".\"seed\""};
  }
  t.strategy = get<std::string>(doc, "strategy");
  for (const Json& v : field(doc, "verdicts")) t.verdicts.push_back(verdict_from_json(v));
  const Json& run = field(doc, "run");
  t.run.start = get_time(run, "start_us");
  t.run.heal_at = get_time(run, "heal_at_us");
  t.run.end = get_time(run, "end_us");
  t.run.finished = get<bool>(run, "finished");
  t.run.sim_events = get<uint64_t>(run, "sim_events");
  t.run.requests = get<uint64_t>(run, "requests");
  const Json& decisions = field(doc, "decisions");
  if (!decisions.is_array()) throw SchemaError{"\"decisions\" must be an array"};
  for (const Json& d : decisions) {
    if (!d.is_array() || d.size() != 3) throw SchemaError{"a decision is [kind, n, chosen]"};
    sim::Decision dec;
    dec.kind = parse_enum<sim::ChoiceKind>(d[0], static_cast<int>(sim::ChoiceKind::kCount),
                                           choice_name, "choice kind");
    if (!d[1].is_number_unsigned() || !d[2].is_number_unsigned()) {
      throw SchemaError{"a decision's n and chosen must be unsigned numbers"};
    }
    dec.n = d[1].get<uint32_t>();
    dec.chosen = d[2].get<uint32_t>();
    if (dec.n < 2 || dec.chosen >= dec.n) {
      throw SchemaError{"decision " + d.dump() + " is not a choice among n >= 2 options"};
    }
    t.decisions.push_back(dec);
  }
  const Json& log = field(doc, "event_log");
  t.event_count = get<uint64_t>(log, "count");
  t.log_hash = parse_hex64(field(log, "hash"), "event_log.hash");
  const Json& events = field(log, "events");
  if (!events.is_array()) throw SchemaError{"\"event_log\".\"events\" must be an array"};
  for (const Json& e : events) {
    if (!e.is_array() || e.size() != 4 || !e[0].is_number_integer() || !e[1].is_number_unsigned() ||
        !e[2].is_string() || !e[3].is_string()) {
      throw SchemaError{"an event is [at_us, client, kind, text], not " + e.dump()};
    }
    t.events.push_back(sim::LoggedEvent{t.events.size(), zk::Time{e[0].get<int64_t>()},
                                        e[1].get<uint32_t>(), e[2].get<std::string>(),
                                        e[3].get<std::string>()});
  }
  if (t.events.size() != t.event_count) {
    throw SchemaError{"\"event_log\" holds " + std::to_string(t.events.size()) +
                      " events but says \"count\": " + std::to_string(t.event_count)};
  }
  for (const Json& e : field(doc, "history")) t.history.add(history_event_from_json(e));
  // "verdict" is derived from "verdicts" (their first violation); an edit of one alone is an
  // inconsistent document, not a new verdict.
  const Verdict* first = t.violation();
  const Json expected = first != nullptr ? verdict_to_json(*first) : Json{{"ok", true}};
  if (field(doc, "verdict") != expected) {
    throw SchemaError{"\"verdict\" is not the first violation in \"verdicts\""};
  }
  for (const Verdict& v : t.verdicts) {
    for (uint64_t i : v.events) {
      if (i >= t.history.size()) {
        throw SchemaError{std::string("verdict ") + property_name(v.property) + " names event #" +
                          std::to_string(i) + " but the history has " +
                          std::to_string(t.history.size())};
      }
    }
  }
  return t;
}

}  // namespace

const properties::Verdict* Trace::violation() const {
  for (const Verdict& v : verdicts) {
    if (!v.ok) return &v;
  }
  return nullptr;
}

std::string recipe_fingerprint(const recipes::RecipeInfo& recipe) {
  std::string identity = recipe.name;
  identity += '\n';
  identity += recipes::to_string(recipe.kind);
  identity += '\n';
  identity += recipes::to_string(recipe.expected);
  identity += '\n';
  identity += recipe.description;
  char buf[32];
  std::snprintf(buf, sizeof buf, "fnv1a64:%016" PRIx64, zk::fnv1a(identity));
  return buf;
}

std::string to_json_text(const Trace& t) {
  Json doc;
  doc["format"] = kFormatName;
  doc["format_version"] = t.format_version;
  Json recipe;
  recipe["name"] = t.recipe;
  recipe["kind"] = t.recipe_kind;
  recipe["expected"] = t.recipe_expected;
  recipe["fingerprint"] = t.recipe_fingerprint;
  doc["recipe"] = recipe;
  doc["seed"] = t.scenario.seed;
  doc["strategy"] = t.strategy;
  const properties::Verdict* bad = t.violation();
  doc["verdict"] = bad != nullptr ? verdict_to_json(*bad) : Json{{"ok", true}};
  Json verdicts = Json::array();
  for (const Verdict& v : t.verdicts) verdicts.push_back(verdict_to_json(v));
  doc["verdicts"] = verdicts;
  doc["scenario"] = scenario_to_json(t.scenario);
  Json run;
  run["start_us"] = t.run.start.us;
  run["heal_at_us"] = t.run.heal_at.us;
  run["end_us"] = t.run.end.us;
  run["finished"] = t.run.finished;
  run["sim_events"] = t.run.sim_events;
  run["requests"] = t.run.requests;
  doc["run"] = run;
  Json history = Json::array();
  for (const Event& e : t.history.events()) history.push_back(history_event_to_json(e));
  doc["history"] = history;
  Json decisions = Json::array();
  for (const sim::Decision& d : t.decisions) {
    decisions.push_back(Json::array({choice_name(d.kind), d.n, d.chosen}));
  }
  doc["decisions"] = decisions;
  Json log;
  log["count"] = t.event_count;
  log["hash"] = hex64(t.log_hash);
  Json events = Json::array();
  for (const sim::LoggedEvent& e : t.events) {
    events.push_back(Json::array({e.at.us, e.client, e.kind, e.text}));
  }
  log["events"] = events;
  doc["event_log"] = log;
  std::string out;
  write_value(&out, doc, 0);
  out.push_back('\n');
  return out;
}

std::optional<Trace> parse_trace(std::string_view text, std::string_view origin, LoadError* error) {
  const std::string where(origin);
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    *error = {kExitBadInput, where + ": not valid JSON (" + e.what() + ")"};
    return std::nullopt;
  }
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != kFormatName) {
    *error = {kExitBadInput, where + ": not a lockstep trace (no \"format\": \"" +
                                 std::string(kFormatName) + "\")"};
    return std::nullopt;
  }
  if (!doc.contains("format_version") || !doc["format_version"].is_number_integer()) {
    *error = {kExitBadInput, where + ": no integer \"format_version\""};
    return std::nullopt;
  }
  const int64_t version = doc["format_version"].get<int64_t>();
  if (version != kFormatVersion) {
    *error = {kExitBadInput, where + ": unknown trace format version " + std::to_string(version) +
                                 "; this lockstep reads version " + std::to_string(kFormatVersion) +
                                 " only (re-record it with the lockstep that matches)"};
    return std::nullopt;
  }
  try {
    return trace_from_json(doc);
  } catch (const SchemaError& e) {
    *error = {kExitBadInput, where + ": malformed trace: " + e.message};
  } catch (const nlohmann::json::exception& e) {
    *error = {kExitBadInput, where + ": malformed trace: " + e.what()};
  }
  return std::nullopt;
}

std::optional<Trace> load_trace(const std::string& path, LoadError* error) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    *error = {kExitBadInput, path + ": no such file"};
    return std::nullopt;
  }
  if (std::filesystem::is_directory(path, ec)) {
    *error = {kExitBadInput, path + ": is a directory, not a trace file"};
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = {kExitBadInput, path + ": cannot read (" + std::strerror(errno) + ")"};
    return std::nullopt;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse_trace(buf.str(), path, error);
}

const recipes::RecipeInfo* resolve_recipe(const Trace& trace, LoadError* error,
                                          const recipes::RecipeInfo** current) {
  const recipes::RecipeInfo* r = recipes::find_recipe(trace.recipe);
  if (current != nullptr) *current = r;
  if (r == nullptr) {
    *error = {kExitBadInput, "the trace's recipe \"" + trace.recipe +
                                 "\" is not in the registry (run `lockstep list`)"};
    return nullptr;
  }
  const std::string now = recipe_fingerprint(*r);
  if (now != trace.recipe_fingerprint) {
    *error = {kExitRecipeChanged,
              "the recipe \"" + trace.recipe + "\" changed since the trace was recorded " +
                  "(fingerprint " + trace.recipe_fingerprint + ", now " + now +
                  "): its decisions may not fit any more; `lockstep recheck` judges the "
                  "scenario against the current code, --allow-changed replays anyway"};
    return nullptr;
  }
  return r;
}

namespace {

std::filesystem::path parent_dir(const std::string& path) {
  const std::filesystem::path target(path);
  return target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
}

// Makes a rename or link in `dir` durable.
void sync_dir(const std::filesystem::path& dir) {
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

// Writes `data` to a new temporary file `.NAME.tmp.XXXXXX` beside `path`, fsynced and closed.
// Returns its name, or "" with *error set (nothing is left behind).
std::string write_temporary(const std::string& path, std::string_view data, std::string* error) {
  const std::filesystem::path dir = parent_dir(path);
  std::string tmpl =
      (dir / ("." + std::filesystem::path(path).filename().string() + ".tmp.XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) {
    if (error)
      *error = "cannot create a temporary file in " + dir.string() + ": " + std::strerror(errno);
    return {};
  }
  auto fail = [&](const std::string& what) {
    const int saved = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    if (error) *error = what + " " + tmpl + ": " + std::strerror(saved);
    return std::string();
  };
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("cannot write");
    }
    done += static_cast<size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0) return fail("cannot chmod");
  if (::fsync(fd) != 0) return fail("cannot fsync");
  if (::close(fd) != 0) {
    const int saved = errno;
    ::unlink(tmpl.c_str());
    if (error) *error = "cannot close " + tmpl + ": " + std::strerror(saved);
    return {};
  }
  return tmpl;
}

enum class Created { kYes, kExists, kFailed };

// Like write_file_atomically, but never replaces: the temporary file is hard-linked to `path`,
// which fails atomically when `path` exists (kExists; nothing changes).
Created create_file_atomically(const std::string& path, std::string_view data, std::string* error) {
  const std::string tmp = write_temporary(path, data, error);
  if (tmp.empty()) return Created::kFailed;
  const int rc = ::link(tmp.c_str(), path.c_str());
  const int saved = errno;
  ::unlink(tmp.c_str());
  if (rc != 0 && saved == EEXIST) return Created::kExists;
  if (rc != 0) {
    if (error) *error = "cannot create " + path + ": " + std::strerror(saved);
    return Created::kFailed;
  }
  sync_dir(parent_dir(path));
  return Created::kYes;
}

bool same_contents(const std::string& path, std::string_view data) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str() == data;
}

}  // namespace

bool write_file_atomically(const std::string& path, std::string_view data, std::string* error) {
  const std::string tmp = write_temporary(path, data, error);
  if (tmp.empty()) return false;
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    if (error) *error = "cannot rename " + tmp + " to " + path + ": " + std::strerror(saved);
    return false;
  }
  sync_dir(parent_dir(path));  // make the rename itself durable
  return true;
}

std::string file_stem(const std::string& recipe_name) {
  std::string name;
  for (char c : recipe_name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '.';
    name.push_back(plain ? c : '_');
  }
  return name;
}

std::string trace_file_name(const Trace& t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "-seed%" PRIu64 "-%08" PRIx64 ".json", t.scenario.seed,
                t.log_hash >> 32);
  return file_stem(t.recipe) + buf;
}

std::string save_failure_trace(const Trace& trace, const std::string& dir, std::string* error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    if (error) *error = "cannot create directory " + dir + ": " + ec.message();
    return {};
  }
  // Never replaces a file: the same bytes already there are the same failure saved before; a
  // different file under the name (another code version, a hash-prefix clash) keeps its name and
  // this one gets the next free "-2", "-3", ... suffix.
  const std::string text = to_json_text(trace);
  std::string name = trace_file_name(trace);
  const std::string stem = name.substr(0, name.size() - 5);  // without ".json"
  for (int k = 2; k <= 1000; ++k) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    if (same_contents(path, text)) return path;
    switch (create_file_atomically(path, text, error)) {
      case Created::kYes: return path;
      case Created::kFailed: return {};
      case Created::kExists: break;
    }
    name = stem + "-" + std::to_string(k) + ".json";
  }
  if (error) *error = "1000 different traces named " + stem + "*.json in " + dir;
  return {};
}

std::string failure_trace_dir(const std::string& fallback) {
  const char* env = std::getenv("LOCKSTEP_TRACE_DIR");
  return env != nullptr && *env != '\0' ? std::string(env) : fallback;
}

std::string save_failure_note(const Trace& trace, const std::string& dir) {
  std::string error;
  const std::string path = save_failure_trace(trace, dir, &error);
  if (path.empty()) return "could not save the failure trace: " + error + "\n";
  std::ostringstream out;
  print_replay_command(out, path);
  return out.str();
}

std::string replay_command(const std::string& path) { return "./lockstep replay " + path; }

void print_replay_command(std::ostream& out, const std::string& path) {
  out << "trace saved: " << path << "\n"
      << "  replay it:  " << replay_command(path) << "\n"
      << "  read it:    ./lockstep show " << path << " [--html OUT.html]\n";
}

std::string event_line(const sim::LoggedEvent& e) {
  char head[64];
  std::snprintf(head, sizeof head, "t=%lld.%06lld c%u ", static_cast<long long>(e.at.us / 1000000),
                static_cast<long long>(e.at.us % 1000000), e.client);
  std::string out = head;
  out += e.kind;
  if (!e.text.empty()) {
    out += ' ';
    out += e.text;
  }
  return out;
}

}  // namespace lockstep::traces
