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

#include "sim/data_tree.h"

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

const char* role_name(recipes::Role r) { return recipes::to_string(r); }

const char* fault_kind_name(sim::FaultKind k) { return zk::fault_name(k); }
const char* target_name(zk::FaultTarget t) { return zk::fault_target_name(t); }
const char* requests_name(zk::FaultRequests r) { return zk::fault_requests_name(r); }
const char* property_name(properties::Property p) { return properties::to_string(p); }
const char* choice_name(sim::ChoiceKind k) { return sim::to_string(k); }
const char* kind_name(recipes::Kind k) { return recipes::to_string(k); }
const char* type_name(properties::Type t) { return properties::to_string(t); }
const char* op_name(properties::Op o) { return properties::to_string(o); }
const char* state_name(recipes::LockState s) { return recipes::to_string(s); }

// ---- scenario ----
Json fault_to_json(const sim::Fault& f) {
  Json j;
  j["kind"] = fault_kind_name(f.kind);
  j["at_us"] = f.at.us;
  j["client"] = f.client;
  j["server"] = f.server;
  j["duration_us"] = f.duration.us;
  j["extra_us"] = f.extra.us;
  j["target"] = target_name(f.target);
  j["requests"] = requests_name(f.requests);
  j["task"] = f.task;
  j["path"] = f.path;
  if (zk::takes(f.kind, zk::kParamCount)) j["count"] = f.count;  // only the kinds that read it
  return j;
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
  if (w.try_percent != 0) j["try_percent"] = w.try_percent;  // absent in older traces: 0
  j["acquire_timeout_us"] = w.acquire_timeout.us;
  j["reentrant_percent"] = w.reentrant_percent;
  j["stray_release_percent"] = w.stray_release_percent;
  j["long_hold_percent"] = w.long_hold_percent;
  j["long_hold_us"] = w.long_hold.us;
  j["give_up_percent"] = w.give_up_percent;
  j["max_reopens"] = w.max_reopens;
  if (w.callers > 1) j["callers"] = w.callers;                         // absent: 1
  if (!w.capacity_path.empty()) j["capacity_path"] = w.capacity_path;  // absent: none
  // The shrinker's per-client knobs: absent (every generated scenario) means the default.
  if (!w.client_streams.empty()) j["client_streams"] = w.client_streams;
  if (!w.client_rounds.empty()) j["client_rounds"] = w.client_rounds;
  if (!w.client_holds.empty()) {
    Json holds = Json::array();
    for (const zk::Duration& d : w.client_holds) holds.push_back(d.us);
    j["client_holds_us"] = holds;
  }
  return j;
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

// ---- verdicts ----
Json verdict_to_json(const Verdict& v) {
  Json j;
  j["property"] = property_name(v.property);
  j["ok"] = v.ok;
  j["message"] = v.message;
  j["events"] = v.history_indexes;
  if (!v.demonstration.empty()) j["demonstration"] = v.demonstration;  // only when there is one
  return j;
}

// ---- history ----
Json history_event_to_json(const Event& e) {
  Json j;
  j["at_us"] = e.at.us;
  j["client"] = e.client;
  if (e.task != 0) j["task"] = e.task;  // only with shared callers
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

// ---- reader: every field checked for type and range, every message naming the field ----

// One value of the document and where it is ("scenario.faults[2].client"), so that a message
// names the field it is about. `json` lives as long as the document.
struct Node {
  const Json& json;
  std::string path;

  // The member `key` of this object; a missing one is an error naming it.
  Node operator[](const char* key) const {
    if (!json.is_object()) throw SchemaError{path + " must be an object"};
    const std::string where = path.empty() ? std::string(key) : path + "." + key;
    auto it = json.find(key);
    if (it == json.end()) throw SchemaError{"missing field \"" + where + "\""};
    return Node{*it, where};
  }
  // The elements of this array, each with its index in the path.
  std::vector<Node> elements() const {
    if (!json.is_array()) throw SchemaError{path + " must be an array"};
    std::vector<Node> out;
    out.reserve(json.size());
    for (size_t i = 0; i < json.size(); ++i) {
      out.push_back(Node{json[i], path + "[" + std::to_string(i) + "]"});
    }
    return out;
  }
};

[[noreturn]] void out_of_range(const Node& n, const std::string& rule) {
  throw SchemaError{n.path + " is " + n.json.dump() + ", but " + rule};
}

// An integer in [lo, hi], read without wrapping: -1 is not 2^64-1 and 2^63 is not negative.
// `rule` says what the range is (default "it must be in lo..hi").
int64_t integer(const Node& n, int64_t lo, int64_t hi, const std::string& rule = {}) {
  const std::string why =
      rule.empty() ? "it must be in " + std::to_string(lo) + ".." + std::to_string(hi) : rule;
  if (n.json.is_number_unsigned()) {
    const uint64_t u = n.json.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) out_of_range(n, why);
    const auto v = static_cast<int64_t>(u);
    if (v < lo) out_of_range(n, why);
    return v;
  }
  if (!n.json.is_number_integer()) throw SchemaError{n.path + " must be an integer, not " + n.json.dump()};
  const int64_t v = n.json.get<int64_t>();
  if (v < lo || v > hi) out_of_range(n, why);
  return v;
}

uint64_t unsigned64(const Node& n) {
  if (n.json.is_number_unsigned()) return n.json.get<uint64_t>();
  if (n.json.is_number_integer()) out_of_range(n, "it must be an unsigned 64-bit integer");
  throw SchemaError{n.path + " must be an unsigned integer, not " + n.json.dump()};
}

uint32_t count32(const Node& n, uint32_t lo, uint32_t hi, const std::string& rule = {}) {
  return static_cast<uint32_t>(integer(n, lo, hi, rule));
}

// A duration or a time in microseconds, 0..kMaxDurationUs (FORMAT.md, "Limits").
int64_t micros(const Node& n) {
  return integer(n, 0, kMaxDurationUs,
                 "times and durations must be in 0.." + std::to_string(kMaxDurationUs) +
                     " us (one hour of virtual time)");
}
zk::Duration duration(const Node& n) { return zk::microseconds(micros(n)); }
zk::Time time_at(const Node& n) { return zk::Time{micros(n)}; }

uint32_t percent(const Node& n) { return count32(n, 0, 100, "a percentage must be in 0..100"); }

std::string text(const Node& n) {
  if (!n.json.is_string()) throw SchemaError{n.path + " must be a string, not " + n.json.dump()};
  return n.json.get<std::string>();
}

bool boolean(const Node& n) {
  if (!n.json.is_boolean()) throw SchemaError{n.path + " must be true or false, not " + n.json.dump()};
  return n.json.get<bool>();
}

uint64_t parse_hex64(const Node& n) {
  const std::string s = text(n);
  if (s.size() < 3 || s.size() > 18 || s[0] != '0' || s[1] != 'x') {
    throw SchemaError{n.path + " must look like 0x0123abcd, not \"" + s + "\""};
  }
  uint64_t v = 0;
  for (size_t i = 2; i < s.size(); ++i) {
    const char c = s[i];
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) throw SchemaError{n.path + ": bad hex digit in \"" + s + "\""};
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  return v;
}

// Enum <-> name through the enum's own to_string, so the names in files are the ones printed
// everywhere else.
template <class E, class ToString>
E parse_enum(const Node& n, int count, ToString to_string, const char* what) {
  const std::string s = text(n);
  for (int i = 0; i < count; ++i) {
    if (s == to_string(static_cast<E>(i))) return static_cast<E>(i);
  }
  throw SchemaError{n.path + ": unknown " + what + " \"" + s + "\""};
}

// The 1-based client or server index of a fault: 1..count when the kind acts on one, else 0..count
// (0 = none).
uint32_t fault_index(const Node& n, bool needed, uint32_t count, const char* noun,
                     const std::string& kind) {
  const std::string has = "the scenario has " + std::to_string(count) + " " + noun +
                          (count == 1 ? "" : "s");
  if (needed) {
    return count32(n, 1, count, has + " (a " + kind + " fault needs one of 1.." +
                                    std::to_string(count) + ")");
  }
  return count32(n, 0, count, has + " (0 = none)");
}

sim::Fault fault_from_json(const Node& j, uint32_t clients, uint32_t servers) {
  sim::Fault f;
  const std::string kind = text(j["kind"]);
  if (!zk::parse_fault_kind(kind, &f.kind)) {
    throw SchemaError{j.path + ".kind: unknown fault kind \"" + kind + "\""};
  }
  const bool on_server = zk::takes(f.kind, zk::kParamServer);
  const bool on_client = zk::takes(f.kind, zk::kParamClient);
  f.at = time_at(j["at_us"]);
  f.client = fault_index(j["client"], on_client, clients, "client", kind);
  f.server = fault_index(j["server"], on_server, servers, "server", kind);
  f.duration = duration(j["duration_us"]);
  f.extra = duration(j["extra_us"]);
  f.target =
      parse_enum<zk::FaultTarget>(j["target"], zk::kFaultTargetCount, target_name, "fault target");
  f.requests = parse_enum<zk::FaultRequests>(j["requests"], zk::kFaultRequestsCount, requests_name,
                                             "fault request filter");
  f.task = text(j["task"]);
  f.path = text(j["path"]);
  if (zk::takes(f.kind, zk::kParamPath) && !sim::valid_path(f.path)) {
    throw SchemaError{j.path + ".path must be the full ZooKeeper path of the node " + kind +
                      " acts on, not \"" + f.path + "\""};
  }
  if (zk::takes(f.kind, zk::kParamCount)) {
    if (!sim::valid_path(f.path) || f.path == "/") {
      throw SchemaError{j.path + ".path must be the full ZooKeeper path of the capacity node " +
                        "to set, not \"" + f.path + "\""};
    }
    f.count = count32(j["count"], 1, INT32_MAX, "a lease count is 1..2147483647");
  }
  return f;
}

properties::WorkloadOptions workload_from_json(const Node& j) {
  properties::WorkloadOptions w;
  w.clients = count32(j["clients"], 1, kMaxClients,
                      "it must be in 1.." + std::to_string(kMaxClients) +
                          " (the most clients a trace may simulate)");
  w.rounds = count32(j["rounds"], 0, kMaxRounds);
  w.lock_path = text(j["lock_path"]);
  if (!sim::valid_path(w.lock_path) || w.lock_path == "/") {
    throw SchemaError{j.path + ".lock_path must be a ZooKeeper path below the root, not \"" +
                      w.lock_path + "\""};
  }
  w.kind = parse_enum<recipes::Kind>(j["kind"], 4, kind_name, "recipe kind");
  w.max_leases = count32(j["max_leases"], 1, kMaxClients);
  for (const Node& r : j["roles"].elements()) {
    w.roles.push_back(parse_enum<recipes::Role>(r, 3, role_name, "role"));
  }
  w.think_max = duration(j["think_max_us"]);
  w.hold_min = duration(j["hold_min_us"]);
  w.hold_max = duration(j["hold_max_us"]);
  w.timed_percent = percent(j["timed_percent"]);
  if (j.json.contains("try_percent")) w.try_percent = percent(j["try_percent"]);
  w.acquire_timeout = duration(j["acquire_timeout_us"]);
  w.reentrant_percent = percent(j["reentrant_percent"]);
  w.stray_release_percent = percent(j["stray_release_percent"]);
  w.long_hold_percent = percent(j["long_hold_percent"]);
  w.long_hold = duration(j["long_hold_us"]);
  w.give_up_percent = percent(j["give_up_percent"]);
  w.max_reopens = count32(j["max_reopens"], 0, kMaxReopens);
  if (j.json.contains("callers")) w.callers = count32(j["callers"], 1, kMaxCallers);
  if (j.json.contains("capacity_path")) {
    w.capacity_path = text(j["capacity_path"]);
    if (!sim::valid_path(w.capacity_path) || w.capacity_path == "/") {
      throw SchemaError{j.path + ".capacity_path must be a ZooKeeper path below the root, not \"" +
                        w.capacity_path + "\""};
    }
  }
  // A per-client knob, when present: one entry per client, each read by `one`.
  auto per_client = [&j, &w](const char* key, auto one) {
    using T = decltype(one(std::declval<const Node&>()));
    std::vector<T> out;
    if (!j.json.contains(key)) return out;
    const Node list = j[key];
    const std::vector<Node> entries = list.elements();
    if (entries.size() != w.clients) {
      throw SchemaError{list.path + " has " + std::to_string(entries.size()) +
                        " entries, but the scenario has " + std::to_string(w.clients) +
                        " clients (one entry per client, or no field)"};
    }
    for (const Node& e : entries) out.push_back(one(e));
    return out;
  };
  w.client_streams = per_client("client_streams", [](const Node& e) {
    return count32(
        e, 1, kMaxClients,
        "a client's stream is that of a client number, 1.." + std::to_string(kMaxClients));
  });
  const uint32_t rounds = w.rounds;
  w.client_rounds = per_client("client_rounds", [rounds](const Node& e) {
    return count32(e, 0, rounds,
                   "a client does at most the scenario's rounds, 0.." + std::to_string(rounds));
  });
  w.client_holds = per_client("client_holds_us", [](const Node& e) { return duration(e); });
  return w;
}

properties::Scenario scenario_from_json(const Node& j) {
  properties::Scenario s;
  s.seed = unsigned64(j["seed"]);
  s.workload = workload_from_json(j["workload"]);
  const std::string servers_rule = "it must be 1 (standalone) or 3 (an ensemble)";
  s.servers = count32(j["servers"], 1, 3, servers_rule);
  if (s.servers == 2) out_of_range(j["servers"], servers_rule);
  s.session_timeout = duration(j["session_timeout_us"]);
  s.local_session_expiry = boolean(j["local_session_expiry"]);
  const Node seq = j["sequence_start"];
  if (!seq.json.is_null()) {
    s.sequence_start = static_cast<int32_t>(integer(seq, INT32_MIN, INT32_MAX));
  }
  for (const Node& f : j["faults"].elements()) {
    s.faults.push_back(fault_from_json(f, s.workload.clients, s.servers));
  }
  s.heal_at = time_at(j["heal_at_us"]);
  s.liveness_bound = duration(j["liveness_bound_us"]);
  s.run_limit = duration(j["run_limit_us"]);
  return s;
}

Verdict verdict_from_json(const Node& j, uint64_t history_size) {
  Verdict v;
  v.property = parse_enum<properties::Property>(j["property"], properties::kPropertyCount,
                                                property_name, "property");
  v.ok = boolean(j["ok"]);
  v.message = text(j["message"]);
  if (j.json.contains("demonstration")) v.demonstration = text(j["demonstration"]);
  for (const Node& e : j["events"].elements()) {
    const uint64_t i = unsigned64(e);
    if (i >= history_size) {
      out_of_range(e, std::string("verdict ") + property_name(v.property) + " names event #" +
                          std::to_string(i) + " and the history has " +
                          std::to_string(history_size));
    }
    v.history_indexes.push_back(i);
  }
  return v;
}

// A client index of a recorded event: 0 (the world) or 1..clients.
uint32_t event_client(const Node& n, uint32_t clients) {
  return count32(n, 0, clients,
                 "the scenario has " + std::to_string(clients) + " clients (0 = the world)");
}

Event history_event_from_json(const Node& j, uint32_t clients) {
  Event e;
  e.at = zk::Time{integer(j["at_us"], 0, INT64_MAX)};
  e.client = event_client(j["client"], clients);
  e.session = zk::SessionId{parse_hex64(j["session"])};
  e.type = parse_enum<properties::Type>(j["type"], 4, type_name, "history type");
  if (j.json.contains("task")) e.task = count32(j["task"], 1, kMaxCallers);
  e.op = parse_enum<properties::Op>(j["op"], static_cast<int>(properties::Op::kCapacity) + 1,
                                    op_name, "history op");
  e.error = static_cast<zk::Error>(integer(j["error"], INT32_MIN, INT32_MAX));
  e.token = integer(j["token"], INT64_MIN, INT64_MAX);
  e.hold_count = count32(j["hold_count"], 0, UINT32_MAX);
  e.role = parse_enum<recipes::Role>(j["role"], 3, role_name, "role");
  e.state = parse_enum<recipes::LockState>(
      j["state"], static_cast<int>(recipes::LockState::kLost) + 1, state_name, "lock state");
  e.session_state = parse_enum<zk::SessionState>(
      j["session_state"], static_cast<int>(zk::SessionState::kClosed) + 1,
      [](zk::SessionState st) { return zk::to_string(st); }, "session state");
  e.text = text(j["text"]);
  return e;
}

sim::Decision decision_from_json(const Node& d) {
  const std::vector<Node> parts = d.elements();
  if (parts.size() != 3) throw SchemaError{d.path + ": a decision is [kind, n, chosen]"};
  sim::Decision dec;
  dec.kind = parse_enum<sim::ChoiceKind>(parts[0], static_cast<int>(sim::ChoiceKind::kCount),
                                         choice_name, "choice kind");
  dec.n = count32(parts[1], 2, UINT32_MAX, "n (the options) must be in 2..4294967295");
  dec.chosen = count32(parts[2], 0, dec.n - 1,
                       "chosen must be below n = " + std::to_string(dec.n));
  return dec;
}

sim::LoggedEvent logged_event_from_json(const Node& e, uint64_t index, uint32_t clients) {
  const std::vector<Node> parts = e.elements();
  if (parts.size() != 4) throw SchemaError{e.path + ": an event is [at_us, client, kind, text]"};
  return sim::LoggedEvent{index, zk::Time{integer(parts[0], 0, INT64_MAX)},
                          event_client(parts[1], clients), text(parts[2]), text(parts[3])};
}

// The path of the first place where `a` differs from `b` (under `path`), or "" when equal.
std::string first_difference(const Json& a, const Json& b, const std::string& path) {
  if (a == b) return {};
  if (a.is_object() && b.is_object()) {
    for (auto it = b.begin(); it != b.end(); ++it) {
      const std::string where = path + "." + it.key();
      if (!a.contains(it.key())) return where;
      if (std::string d = first_difference(a[it.key()], it.value(), where); !d.empty()) return d;
    }
    return path;  // `a` has a key `b` lacks
  }
  if (a.is_array() && b.is_array()) {
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
      const std::string where = path + "[" + std::to_string(i) + "]";
      if (std::string d = first_difference(a[i], b[i], where); !d.empty()) return d;
    }
  }
  return path;
}

Trace trace_from_json(const Json& json) {
  const Node doc{json, ""};
  Trace t;
  const Node recipe = doc["recipe"];
  t.recipe = text(recipe["name"]);
  t.recipe_kind = text(recipe["kind"]);
  t.recipe_expected = text(recipe["expected"]);
  t.recipe_fingerprint = text(recipe["fingerprint"]);
  t.scenario = scenario_from_json(doc["scenario"]);
  const uint32_t clients = t.scenario.workload.clients;
  if (const uint64_t seed = unsigned64(doc["seed"]); seed != t.scenario.seed) {
    out_of_range(doc["seed"], "scenario.seed is " + std::to_string(t.scenario.seed) +
                                  " (the two must be equal)");
  }
  t.strategy = text(doc["strategy"]);
  const Node run = doc["run"];
  t.run.start = zk::Time{integer(run["start_us"], 0, INT64_MAX)};
  t.run.heal_at = zk::Time{integer(run["heal_at_us"], 0, INT64_MAX)};
  t.run.end = zk::Time{integer(run["end_us"], 0, INT64_MAX)};
  t.run.finished = boolean(run["finished"]);
  t.run.sim_events = unsigned64(run["sim_events"]);
  t.run.requests = unsigned64(run["requests"]);
  for (const Node& d : doc["decisions"].elements()) t.decisions.push_back(decision_from_json(d));
  const Node log = doc["event_log"];
  t.event_count = unsigned64(log["count"]);
  t.log_hash = parse_hex64(log["hash"]);
  const std::vector<Node> events = log["events"].elements();
  if (events.size() != t.event_count) {
    out_of_range(log["count"], "event_log.events holds " + std::to_string(events.size()) +
                                   " events (\"count\" must say how many)");
  }
  for (const Node& e : events) {
    t.events.push_back(logged_event_from_json(e, t.events.size(), clients));
  }
  for (const Node& e : doc["history"].elements()) {
    t.history.add(history_event_from_json(e, clients));
  }
  for (const Node& v : doc["verdicts"].elements()) {
    t.verdicts.push_back(verdict_from_json(v, t.history.size()));
  }
  if (doc.json.contains("reported")) {
    const Node reported = doc["reported"];
    t.reported = parse_enum<properties::Property>(reported, properties::kPropertyCount,
                                                  property_name, "property");
    if (t.violation() == nullptr) {
      out_of_range(reported, std::string("verdicts hold no violation of ") +
                                 property_name(*t.reported) +
                                 " (\"reported\" must name a violated property)");
    }
  }
  // "verdict" is derived from "verdicts" (the reported property's violation, else their first);
  // an edit of one alone is an inconsistent document, not a new verdict.
  const Verdict* first = t.violation();
  const Json expected = first != nullptr ? verdict_to_json(*first) : Json{{"ok", true}};
  const Node reported = doc["verdict"];
  if (reported.json != expected) {
    const std::string where = first_difference(reported.json, expected, "verdict");
    const std::string source =
        first != nullptr
            ? "verdicts[" + std::to_string(first - t.verdicts.data()) + "]" + where.substr(7)
            : std::string("verdicts, which hold no violation");
    throw SchemaError{where + " differs from " + source +
                      ": \"verdict\" must repeat the reported (else the first) violation in "
                      "\"verdicts\""};
  }
  return t;
}

}  // namespace

const properties::Verdict* Trace::violation() const {
  for (const Verdict& v : verdicts) {
    if (!v.ok && (!reported || v.property == *reported)) return &v;
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
  if (t.reported) doc["reported"] = property_name(*t.reported);  // only when set
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
    *error = {LoadProblem::kBadInput, where + ": not valid JSON (" + e.what() + ")"};
    return std::nullopt;
  }
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != kFormatName) {
    *error = {LoadProblem::kBadInput, where + ": not a lockstep trace (no \"format\": \"" +
                                 std::string(kFormatName) + "\")"};
    return std::nullopt;
  }
  if (!doc.contains("format_version") || !doc["format_version"].is_number_integer()) {
    *error = {LoadProblem::kBadInput, where + ": no integer \"format_version\""};
    return std::nullopt;
  }
  if (const Json& version = doc["format_version"]; version != kFormatVersion) {
    const bool older = version.get<int64_t>() < kFormatVersion;
    *error = {LoadProblem::kBadInput,
              where + ": trace format version " + version.dump() + " (format_version) is " +
                  (older ? "older" : "newer") + " than the version " +
                  std::to_string(kFormatVersion) + " this lockstep reads, and only that one; " +
                  (older ? "re-record it: `lockstep corpus` for traces/corpus/, or re-run the "
                           "`lockstep check` that saved it (see traces/FORMAT.md, Versioning)"
                         : "read it with the lockstep that wrote it")};
    return std::nullopt;
  }
  try {
    return trace_from_json(doc);
  } catch (const SchemaError& e) {
    *error = {LoadProblem::kBadInput, where + ": malformed trace: " + e.message};
  } catch (const nlohmann::json::exception& e) {
    *error = {LoadProblem::kBadInput, where + ": malformed trace: " + e.what()};
  }
  return std::nullopt;
}

std::optional<Trace> load_trace(const std::string& path, LoadError* error) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    *error = {LoadProblem::kBadInput, path + ": no such file"};
    return std::nullopt;
  }
  if (std::filesystem::is_directory(path, ec)) {
    *error = {LoadProblem::kBadInput, path + ": is a directory, not a trace file"};
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = {LoadProblem::kBadInput, path + ": cannot read (" + std::strerror(errno) + ")"};
    return std::nullopt;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse_trace(buf.str(), path, error);
}

bool is_trace_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  const Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_discarded()) {
    return doc.is_object() && doc.contains("format") && doc["format"] == kFormatName;
  }
  const std::string head = text.substr(0, 4096);
  return head.find("\"format\"") != std::string::npos &&
         head.find(std::string("\"") + kFormatName + "\"") != std::string::npos;
}

std::string page_target_problem(const std::string& input, const std::string& page) {
  const std::string instead = "; name another file for the page, e.g. --html " +
                              std::filesystem::path(page).replace_extension(".html").string();
  std::error_code ec;
  if (page == input || std::filesystem::equivalent(input, page, ec)) {
    return "--html " + page + " is the trace being shown: the page would overwrite it" +
           (std::filesystem::path(page).extension() == ".html"
                ? std::string("; name another file for the page")
                : instead);
  }
  if (is_trace_file(page)) {
    return "--html " + page + " is a lockstep trace: the page would overwrite it" + instead +
           " (or remove the trace first if you mean to replace it)";
  }
  return {};
}

const recipes::RecipeInfo* resolve_recipe(const Trace& trace, LoadError* error,
                                          const recipes::RecipeInfo** current) {
  const recipes::RecipeInfo* r = recipes::find_recipe(trace.recipe);
  if (current != nullptr) *current = r;
  if (r == nullptr) {
    *error = {LoadProblem::kBadInput, "the trace's recipe \"" + trace.recipe +
                                 "\" is not in the registry (run `lockstep list`)"};
    return nullptr;
  }
  const std::string now = recipe_fingerprint(*r);
  if (now != trace.recipe_fingerprint) {
    *error = {LoadProblem::kRecipeChanged,
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

std::string replay_command(const std::string& path, const std::string& program) {
  return program + " replay " + path;
}

void print_replay_command(std::ostream& out, const std::string& path,
                          const std::string& program) {
  out << "trace saved: " << path << "\n"
      << "  replay it:  " << replay_command(path, program) << "\n"
      << "  read it:    " << program << " show " << path << " [--html OUT.html]\n";
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
