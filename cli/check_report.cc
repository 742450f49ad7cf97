// The report of a check run: see cli/check_report.h.
#include "cli/check_report.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <stdexcept>

#include "cli/cli.h"
#include "properties/scenario.h"
#include "traces/trace.h"
#include "zk/invariant.h"

namespace lockstep::cli {
namespace {

using nlohmann::json;
using properties::CheckOptions;
using properties::column_name;
using properties::kPropertyCount;
using properties::Property;
using properties::PropertyResult;
using properties::RecipeResult;
using properties::to_string;

const char* backend_name(Where w) {
  switch (w) {
    case Where::kSimulator: return "simulator";
    case Where::kStandalone: return "standalone";
    case Where::kEnsemble: return "ensemble";
  }
  return "simulator";
}

// " --real", " --ensemble" or "" for the simulator.
std::string backend_flag(Where w) {
  return w == Where::kStandalone ? " --real" : w == Where::kEnsemble ? " --ensemble" : "";
}

// The command that reruns `seed` of `recipe` as this run ran it.
std::string repro(const CheckRequest& rq, const std::string& recipe, uint64_t seed) {
  return rq.o.program + " check" + backend_flag(rq.where) + " --recipe " + recipe + " --seed " +
         std::to_string(seed) + properties::faults_flag(rq.o.fault_restriction());
}

// The command that runs `recipe`'s seeds of this run again (a variant that was not caught).
std::string repro_range(const CheckRequest& rq, const RecipeResult& r) {
  return rq.o.program + " check" + backend_flag(rq.where) + " --recipe " + r.recipe +
         " --first-seed " + std::to_string(rq.o.first()) + " --seeds " +
         std::to_string(rq.o.count(r.expected)) + properties::faults_flag(rq.o.fault_restriction());
}

// Whether the violation of property `i` is the catch a broken variant is expected to have.
bool expected_hit(const RecipeResult& r, int i) {
  return r.expected == recipes::Expected::kBroken &&
         (!r.must_violate || *r.must_violate == static_cast<Property>(i));
}

// The word the table and the JSON give a violation: caught (the broken variant's expected catch),
// also (another property of a broken variant), violated (a correct recipe failed).
const char* violation_kind(const RecipeResult& r, int i) {
  if (expected_hit(r, i)) return "caught";
  return r.expected == recipes::Expected::kBroken ? "also" : "violated";
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// The verdict column: an interrupted recipe is "stopped" unless a correct one already failed.
const char* outcome(const RecipeResult& r, const CheckOptions& o) {
  const bool correct = r.expected == recipes::Expected::kCorrect;
  if (!r.error.empty()) return "ERROR";
  if (!r.unsupported.empty()) return "not provokable";
  if (correct && r.violated()) return "FAILED";
  if (!properties::complete(r, o)) return "stopped";
  if (correct) return "ok";
  return r.as_expected() ? "caught" : "NOT CAUGHT";
}

// "seed S", "pass", "-" (claimed, but no seed judged it: its faults excluded it) or
// "unclaimed" (the recipe's registration does not claim it).
std::string cell(const RecipeResult& r, Property property) {
  const PropertyResult& p = r.properties[static_cast<int>(property)];
  if (p.seed) return "seed " + std::to_string(*p.seed);
  if (r.claimed.count(property) == 0) return "unclaimed";
  return p.judged == 0 ? "-" : "pass";
}

void print_table(const std::vector<RecipeResult>& results, const CheckRequest& rq,
                 std::ostream& out) {
  size_t width = 6;
  for (const RecipeResult& r : results) width = std::max(width, r.recipe.size());
  char buf[64];
  out << "recipe" << std::string(width - 6 + 2, ' ') << "expected ";
  for (int i = 0; i < kPropertyCount; ++i) {
    std::snprintf(buf, sizeof buf, "%-10s", column_name(static_cast<Property>(i)));
    out << buf;
  }
  out << "seeds    result\n";
  for (const RecipeResult& r : results) {
    out << r.recipe << std::string(width - r.recipe.size() + 2, ' ');
    std::snprintf(buf, sizeof buf, "%-9s", recipes::to_string(r.expected));
    out << buf;
    for (int i = 0; i < kPropertyCount; ++i) {
      std::snprintf(buf, sizeof buf, "%-10s", cell(r, static_cast<Property>(i)).c_str());
      out << buf;
    }
    std::snprintf(buf, sizeof buf, "%-8llu ", static_cast<unsigned long long>(r.seeds_run));
    out << buf << outcome(r, rq.o) << "\n";
  }
  out << "columns: ";
  for (int i = 0; i < kPropertyCount; ++i) {
    const auto p = static_cast<Property>(i);
    out << (i ? ", " : "") << column_name(p) << "=" << to_string(p);
  }
  out << "; pass = held in every seed where it applies, - = claimed but not judged (the faults "
         "drawn exclude it), unclaimed = the recipe does not claim it"
      << (rq.where == Where::kSimulator ? "" : " (herd: never on a real server)")
      << ", seed S = first violating seed\n";
}

void print_failures(const std::vector<RecipeResult>& results, const CheckRequest& rq,
                    std::ostream& out) {
  for (const RecipeResult& r : results) {
    if (!r.error.empty()) out << "ERROR " << r.recipe << ": " << r.error << "\n";
    if (!r.unsupported.empty()) {
      out << "not provokable on a real server: " << r.recipe << " (" << r.unsupported
          << "); the simulator catches it: " << rq.o.program << " check --recipe " << r.recipe
          << "\n";
    }
    for (int i = 0; i < kPropertyCount; ++i) {
      const PropertyResult& p = r.properties[i];
      if (!p.seed) continue;
      char word[16];
      std::snprintf(
          word, sizeof word, "%-9s",
          std::string(violation_kind(r, i)) == "violated" ? "VIOLATED" : violation_kind(r, i));
      out << word << r.recipe << " " << to_string(static_cast<Property>(i)) << " at seed "
          << *p.seed << ": " << first_line(p.message)
          << "\n  reproduce: " << repro(rq, r.recipe, *p.seed) << "\n";
      if (auto t = r.traces.find(*p.seed); t != r.traces.end()) {
        out << "  trace:     " << t->second << "\n  replay:    " << rq.o.program << " replay "
            << t->second << "\n  show:      " << rq.o.program << " show " << t->second << "\n";
      }
    }
    for (int i = 0; i < kPropertyCount; ++i) {
      const PropertyResult& p = r.properties[i];
      if (!p.demonstration_seed || r.expected != recipes::Expected::kCorrect) continue;
      const PropertyResult& fenced = r.properties[static_cast<int>(Property::kFencedSafety)];
      out << "expected " << r.recipe << " " << to_string(static_cast<Property>(i)) << " in "
          << p.demonstrated << " seed(s), as its faults excuse (not a failure), first at seed "
          << *p.demonstration_seed << ": " << first_line(p.demonstration) << "\n"
          << (fenced.judged > 0 && !fenced.seed
                  ? "  fenced-safety held in every seed: the resource rejected the stale holder\n"
                  : "")
          << "  reproduce: " << repro(rq, r.recipe, *p.demonstration_seed) << "\n";
      if (auto t = r.traces.find(*p.demonstration_seed); t != r.traces.end()) {
        out << "  trace:     " << t->second << "\n  show:      " << rq.o.program << " show "
            << t->second << "\n";
      }
    }
    if (r.expected == recipes::Expected::kBroken && r.error.empty() && !r.as_expected() &&
        properties::complete(r, rq.o)) {
      out << "NOT CAUGHT " << r.recipe << ": "
          << (r.must_violate ? to_string(*r.must_violate) : "no property")
          << " was never violated in " << r.seeds_run << " seeds"
          << (rq.o.seed ? "" : " (try --seeds " + std::to_string(r.seeds_run * 10) + ")") << "\n";
    }
  }
  const bool saved = std::any_of(results.begin(), results.end(), [](const RecipeResult& r) {
    return std::any_of(std::begin(r.properties), std::end(r.properties),
                       [&](const PropertyResult& p) { return p.seed && r.traces.count(*p.seed); });
  });
  if (saved && rq.o.shrink_traces) {
    out << "(each trace holds its seed's run shrunk while the property stays violated: the "
           "fewest faults, clients and rounds, then the fewest scheduling choices off the "
           "default; --no-shrink saves it as run)\n";
  }
  // A real server's seed does not reproduce its schedule: the report is all there is.
  for (const RecipeResult& r : results) {
    if (!rq.o.seed && !r.first_report.empty() && r.expected == recipes::Expected::kCorrect) {
      out << "\n" << r.first_report;
    }
  }
}

// After an interrupted run: per recipe, the seeds fully run (the verdicts above cover exactly
// those) and the command that goes on from there.
void print_coverage(const std::vector<RecipeResult>& results, const CheckRequest& rq,
                    const std::string& stopped, std::ostream& out) {
  const CheckOptions& o = rq.o;
  out << "INTERRUPTED (" << stopped << "): the "
      << (rq.where == Where::kSimulator ? "workers were" : "servers were")
      << " stopped; the verdicts above cover, per recipe, only the seeds fully run (of "
      << o.first() << ".." << o.first() + o.seeds - 1 << "):\n";
  size_t width = 6;
  for (const RecipeResult& r : results) width = std::max(width, r.recipe.size());
  for (const RecipeResult& r : results) {
    out << "  " << r.recipe << std::string(width - r.recipe.size() + 2, ' ');
    if (r.seeds_run == 0) {
      out << "no seed fully run";
    } else {
      out << "seeds " << r.first_seed << ".." << r.first_seed + r.seeds_run - 1;
    }
    if (properties::complete(r, o)) {
      out << (r.search_over() ? " (caught: done)\n" : " (done)\n");
      continue;
    }
    std::string go_on = repro(rq, r.recipe, 0);
    go_on.erase(go_on.find(" --seed "));
    out << "  go on: " << go_on << " --first-seed " << r.first_seed + r.seeds_run << " --seeds "
        << o.count(r.expected) - r.seeds_run << properties::faults_flag(o.fault_restriction())
        << "\n";
  }
  out << "no trace was saved; each `reproduce:` line above re-runs its seed\n";
}

void print_summary(const CheckReport& report, const CheckRequest& rq, std::ostream& out) {
  uint64_t seeds = 0;
  uint64_t requests = 0;
  bool all_expected = true;
  for (const RecipeResult& r : report.results) {
    seeds += r.seeds_run;
    requests += r.requests;
    all_expected = all_expected && r.as_expected();
  }
  char buf[300];
  if (rq.where == Where::kSimulator) {
    const double per_second = report.seconds > 0 ? static_cast<double>(seeds) / report.seconds : 0;
    const double per_cpu_second =
        report.cpu_seconds > 0 ? static_cast<double>(seeds) / report.cpu_seconds : 0;
    std::snprintf(buf, sizeof buf,
                  "\n%zu recipes, %llu scenarios (%llu simulated requests) in %.2fs with %u "
                  "job(s): %.0f scenarios/s; %.2f CPU-s, %.0f scenarios per CPU-second\n",
                  report.results.size(), static_cast<unsigned long long>(seeds),
                  static_cast<unsigned long long>(requests), report.seconds, rq.o.jobs, per_second,
                  report.cpu_seconds, per_cpu_second);
  } else {
    std::snprintf(buf, sizeof buf, "\n%zu recipes, %llu scenarios in %.1fs on the %s\n",
                  report.results.size(), static_cast<unsigned long long>(seeds), report.seconds,
                  rq.where == Where::kEnsemble ? "3-server ensemble" : "standalone server");
  }
  out << buf;
  if (!report.interrupted.empty()) {
    print_coverage(report.results, rq, report.interrupted, out);
  } else if (all_expected) {
    out << "every recipe behaved as expected"
        << (rq.where == Where::kSimulator ? "" : " on the real server") << "\n";
  } else {
    out << "FAILED: a correct recipe failed, a broken variant was not caught"
        << (rq.where == Where::kSimulator ? "" : ", or the harness failed") << "\n";
  }
}

json or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

template <typename T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::string trace_of(const RecipeResult& r, uint64_t seed) {
  const auto t = r.traces.find(seed);
  return t == r.traces.end() ? std::string() : t->second;
}

json result_json(const RecipeResult& r, const CheckRequest& rq) {
  json props = json::object();
  json judged = json::object();
  json violations = json::array();
  json demos = json::object();  // what the faults excuse, shown, not failed
  for (int i = 0; i < kPropertyCount; ++i) {
    const PropertyResult& p = r.properties[i];
    const auto property = static_cast<Property>(i);
    props[to_string(property)] = p.seed                           ? "violated"
                                 : r.claimed.count(property) == 0 ? "not-claimed"
                                 : p.judged == 0                  ? "not-judged"
                                                                  : "pass";
    judged[to_string(property)] = p.judged;
    if (p.seed) {
      violations.push_back({{"property", to_string(property)},
                            {"kind", violation_kind(r, i)},
                            {"seed", *p.seed},
                            {"message", p.message},
                            {"reproduce", repro(rq, r.recipe, *p.seed)},
                            {"trace", or_null(trace_of(r, *p.seed))}});
    }
    if (p.demonstration_seed) {
      demos[to_string(property)] = {{"seeds", p.demonstrated},
                                    {"first_seed", *p.demonstration_seed},
                                    {"message", p.demonstration},
                                    {"trace", or_null(trace_of(r, *p.demonstration_seed))}};
    }
  }
  json j;
  j["recipe"] = r.recipe;
  j["expected"] = recipes::to_string(r.expected);
  j["verdict"] = r.verdict();
  j["as_expected"] = r.as_expected();
  j["expected_violation"] = r.must_violate ? json(to_string(*r.must_violate)) : json(nullptr);
  j["properties"] = props;
  j["violations"] = violations;
  j["judged"] = judged;
  j["demonstrations"] = demos;
  const std::optional<uint64_t> seed = r.first_failing_seed();
  j["seed"] = or_null(seed);
  j["reproduce"] = seed ? json(repro(rq, r.recipe, *seed)) : json(nullptr);
  j["first_seed"] = r.first_seed;
  j["last_seed"] = r.seeds_run > 0 ? json(r.first_seed + r.seeds_run - 1) : json(nullptr);
  j["seeds_run"] = r.seeds_run;
  j["requests"] = r.requests;
  j["complete"] = properties::complete(r, rq.o);
  j["trace"] = or_null(seed ? trace_of(r, *seed) : std::string());
  j["not_provokable_reason"] = or_null(r.unsupported);
  j["error"] = or_null(r.error);
  return j;
}

json options_json(const CheckRequest& rq) {
  const CheckOptions& o = rq.o;
  json j;
  j["recipes"] = o.recipes.empty() ? json(nullptr) : json(o.recipes);
  j["seed"] = or_null(o.seed);
  j["first_seed"] = rq.sweep_first;
  j["seeds"] = rq.sweep_seeds;
  if (o.no_faults) {
    j["faults"] = "none";
  } else if (o.faults.empty()) {
    j["faults"] = nullptr;
  } else {
    json names = json::array();
    for (sim::FaultKind k : o.faults) names.push_back(properties::fault_name(k));
    j["faults"] = names;
  }
  j["jobs"] = o.jobs;
  j["shard"] = rq.shard ? json{{"index", rq.shard->index}, {"count", rq.shard->count}} : json();
  j["save_traces"] = o.save_traces;
  j["shrink_traces"] = o.shrink_traces;
  j["trace_dir"] = o.trace_dir;
  return j;
}

// ---- reading a document back ----

// A report that does not read back: what is wrong, with the path of the key.
struct BadReport : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const json& field(const json& j, const std::string& key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw BadReport(where + key + " is missing");
  return j.at(key);
}

template <typename T>
T get(const json& j, const std::string& key, const std::string& where) {
  const json& v = field(j, key, where);
  const bool ok = std::is_same_v<T, bool>          ? v.is_boolean()
                  : std::is_same_v<T, std::string> ? v.is_string()
                  : std::is_floating_point_v<T>    ? v.is_number()
                                                   : v.is_number_unsigned();
  if (!ok) throw BadReport(where + key + " is not a " + (v.is_null() ? "value" : "valid value"));
  return v.get<T>();
}

// A string or null ("").
std::string get_text(const json& j, const std::string& key, const std::string& where) {
  return field(j, key, where).is_null() ? std::string() : get<std::string>(j, key, where);
}

Property property_named(const std::string& name, const std::string& where) {
  Property p{};
  if (!properties::parse_property(name, &p))
    throw BadReport(where + ": unknown property '" + name + "'");
  return p;
}

void read_options(const json& doc, CheckRequest* rq) {
  const std::string where = "options.";
  const json& o = field(doc, "options", "");
  const std::string backend = get<std::string>(doc, "backend", "");
  rq->where = backend == "standalone" ? Where::kStandalone
              : backend == "ensemble" ? Where::kEnsemble
                                      : Where::kSimulator;
  if (backend_name(rq->where) != backend) throw BadReport("backend '" + backend + "' is unknown");
  rq->o.recipes.clear();
  if (!field(o, "recipes", where).is_null()) {
    for (const json& name : field(o, "recipes", where))
      rq->o.recipes.push_back(name.get<std::string>());
  }
  rq->o.seed.reset();
  if (!field(o, "seed", where).is_null()) rq->o.seed = get<uint64_t>(o, "seed", where);
  rq->sweep_first = get<uint64_t>(o, "first_seed", where);
  rq->sweep_seeds = get<uint64_t>(o, "seeds", where);
  const json& faults = field(o, "faults", where);
  rq->o.no_faults = faults == "none";
  rq->o.faults.clear();
  if (faults.is_array()) {
    for (const json& name : faults) {
      sim::FaultKind k{};
      if (!name.is_string() || !properties::parse_fault_name(name.get<std::string>(), &k)) {
        throw BadReport("options.faults names an unknown fault kind: " + name.dump());
      }
      rq->o.faults.insert(k);
    }
  }
  rq->o.jobs = static_cast<uint32_t>(get<uint64_t>(o, "jobs", where));
  rq->shard.reset();
  if (const json& s = field(o, "shard", where); !s.is_null()) {
    rq->shard = Shard{get<uint64_t>(s, "index", "options.shard."),
                      get<uint64_t>(s, "count", "options.shard.")};
    if (rq->shard->count == 0 || rq->shard->index >= rq->shard->count) {
      throw BadReport("options.shard is not a shard: index " + std::to_string(rq->shard->index) +
                      " of " + std::to_string(rq->shard->count));
    }
  }
  rq->o.save_traces = get<bool>(o, "save_traces", where);
  rq->o.shrink_traces = get<bool>(o, "shrink_traces", where);
  rq->o.trace_dir = get<std::string>(o, "trace_dir", where);
  rq->o.first_seed = get<uint64_t>(doc, "first_seed", "");
  rq->o.seeds = get<uint64_t>(doc, "last_seed", "") - rq->o.first_seed + 1;
}

RecipeResult read_result(const json& j, const std::string& where) {
  RecipeResult r;
  r.recipe = get<std::string>(j, "recipe", where);
  const std::string expected = get<std::string>(j, "expected", where);
  if (expected != "correct" && expected != "broken")
    throw BadReport(where + "expected is '" + expected + "'");
  r.expected = expected == "broken" ? recipes::Expected::kBroken : recipes::Expected::kCorrect;
  if (const std::string must = get_text(j, "expected_violation", where); !must.empty()) {
    r.must_violate = property_named(must, where + "expected_violation");
  }
  const json& props = field(j, "properties", where);
  for (int i = 0; i < kPropertyCount; ++i) {
    const auto p = static_cast<Property>(i);
    const std::string status = get<std::string>(props, to_string(p), where + "properties.");
    if (status != "not-claimed") r.claimed.insert(p);
    r.properties[i].judged =
        get<uint64_t>(field(j, "judged", where), to_string(p), where + "judged.");
  }
  for (const json& v : field(j, "violations", where)) {
    PropertyResult& p = r.properties[static_cast<int>(
        property_named(get<std::string>(v, "property", where + "violations[]."), where))];
    p.seed = get<uint64_t>(v, "seed", where + "violations[].");
    p.message = get<std::string>(v, "message", where + "violations[].");
    if (const std::string t = get_text(v, "trace", where + "violations[]."); !t.empty())
      r.traces[*p.seed] = t;
  }
  for (const auto& [name, d] : field(j, "demonstrations", where).items()) {
    PropertyResult& p =
        r.properties[static_cast<int>(property_named(name, where + "demonstrations"))];
    const std::string at = where + "demonstrations." + name + ".";
    p.demonstrated = get<uint64_t>(d, "seeds", at);
    p.demonstration_seed = get<uint64_t>(d, "first_seed", at);
    p.demonstration = get<std::string>(d, "message", at);
    if (const std::string t = get_text(d, "trace", at); !t.empty())
      r.traces[*p.demonstration_seed] = t;
  }
  r.first_seed = get<uint64_t>(j, "first_seed", where);
  r.seeds_run = get<uint64_t>(j, "seeds_run", where);
  r.requests = get<uint64_t>(j, "requests", where);
  r.unsupported = get_text(j, "not_provokable_reason", where);
  r.error = get_text(j, "error", where);
  return r;
}

// ---- JUnit ----

// `s` as XML character data or an attribute value: the five special characters escaped, line
// breaks kept in attributes (&#10;), characters XML 1.0 forbids replaced by U+FFFD.
std::string xml_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      case '\t': out += "&#9;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\xEF\xBF\xBD";
        } else {
          out += c;
        }
    }
  }
  return out;
}

// One testcase's verdict: what JUnit calls it and what it says.
struct Case {
  std::string name;
  const char* element = nullptr;  // "failure", "error", "skipped", or nullptr for a pass
  std::string message;            // the element's message attribute (one line)
  std::string body;               // its text: the whole message, the seed, the reproduce command
  std::string out;                // <system-out> of a pass that has something to show
};

// The text a violation carries: its message, seed, reproduce command and trace.
std::string violation_text(const CheckRequest& rq, const RecipeResult& r, uint64_t seed,
                           const std::string& message) {
  std::string text = message + "\nseed: " + std::to_string(seed) +
                     "\nreproduce: " + repro(rq, r.recipe, seed) + "\n";
  if (const std::string t = trace_of(r, seed); !t.empty()) {
    text += "trace: " + t + "\nreplay: " + rq.o.program + " replay " + t + "\n";
  }
  return text;
}

Case junit_case(const CheckRequest& rq, const RecipeResult& r, int i) {
  const auto property = static_cast<Property>(i);
  const PropertyResult& p = r.properties[i];
  Case c;
  c.name = to_string(property);
  const bool complete = properties::complete(r, rq.o);
  if (!r.unsupported.empty()) {
    c.element = "skipped";
    c.message = "not provokable on a real server: " + r.unsupported;
    return c;
  }
  if (p.seed) {
    const std::string text = violation_text(rq, r, *p.seed, p.message);
    const std::string line = std::string(to_string(property)) + " violated at seed " +
                             std::to_string(*p.seed) + ": " + first_line(p.message);
    if (r.expected == recipes::Expected::kCorrect) {
      c.element = "failure";
      c.message = line;
      c.body = text;
    } else {
      c.out = std::string(expected_hit(r, i) ? "caught: " : "also: ") + line + "\n" + text;
    }
    return c;
  }
  const bool must_catch = r.expected == recipes::Expected::kBroken && r.must_violate == property;
  if (!r.error.empty()) {
    c.element = "error";
    c.message = "the run of " + r.recipe + " failed after " + std::to_string(r.seeds_run) +
                " seed(s): " + first_line(r.error);
    c.body = r.error + "\n";
  } else if (must_catch && complete) {
    c.element = "failure";
    c.message = "NOT CAUGHT: " + std::string(to_string(property)) + " was never violated in " +
                std::to_string(r.seeds_run) + " seeds";
    c.body = c.message + "\nreproduce: " + repro_range(rq, r) + "\n";
  } else if (r.claimed.count(property) == 0 && !must_catch) {
    c.element = "skipped";
    c.message = "unclaimed: the recipe does not claim it";
  } else if (!complete) {
    c.element = "skipped";
    c.message = "stopped: the run was interrupted after " + std::to_string(r.seeds_run) + " of " +
                std::to_string(rq.o.count(r.expected)) + " seeds";
  } else if (p.judged == 0 && !must_catch) {
    c.element = "skipped";
    c.message = "not judged: the faults drawn exclude it";
  }
  return c;
}

// The testcases of one recipe: one per property, and for a broken variant that names no property
// that must catch it, one named "caught" (any violation catches it).
std::vector<Case> junit_cases(const CheckRequest& rq, const RecipeResult& r) {
  std::vector<Case> cases;
  for (int i = 0; i < kPropertyCount; ++i) cases.push_back(junit_case(rq, r, i));
  if (r.expected == recipes::Expected::kBroken && !r.must_violate) {
    Case c;
    c.name = "caught";
    if (r.error.empty() && r.unsupported.empty() && !r.violated() &&
        properties::complete(r, rq.o)) {
      c.element = "failure";
      c.message =
          "NOT CAUGHT: no property was violated in " + std::to_string(r.seeds_run) + " seeds";
      c.body = c.message + "\nreproduce: " + repro_range(rq, r) + "\n";
    }
    cases.push_back(c);
  }
  return cases;
}

// tests="T" failures="F" errors="E" skipped="S" over `cases`.
std::string junit_counts(const std::vector<Case>& cases) {
  size_t failures = 0, errors = 0, skipped = 0;
  for (const Case& c : cases) {
    const std::string e = c.element ? c.element : "";
    failures += e == "failure";
    errors += e == "error";
    skipped += e == "skipped";
  }
  return "tests=\"" + std::to_string(cases.size()) + "\" failures=\"" + std::to_string(failures) +
         "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) + "\"";
}

}  // namespace

std::pair<uint64_t, uint64_t> shard_block(uint64_t first, uint64_t seeds, Shard s) {
  LOCKSTEP_ASSERT_MSG(s.index < s.count, "shard_block: index past the count");
  // seeds <= 10^8 and count <= kMaxShards: the products stay far below 2^64.
  const uint64_t begin = seeds * s.index / s.count;
  const uint64_t end = seeds * (s.index + 1) / s.count;
  return {first + begin, end - begin};
}

int exit_code(const CheckReport& report, const CheckRequest& rq) {
  if (!report.merged) {
    if (!report.interrupted.empty()) return kExitInterrupted;
    const bool all = std::all_of(report.results.begin(), report.results.end(),
                                 [](const RecipeResult& r) { return r.as_expected(); });
    return all ? kExitOk : kExitFailure;
  }
  // A merge: a failure in what ran is final; otherwise a sweep cut short is incomplete.
  bool failed = false;
  bool incomplete = false;
  for (const RecipeResult& r : report.results) {
    const bool complete = properties::complete(r, rq.o);
    incomplete = incomplete || !complete;
    failed = failed || (!r.as_expected() && (complete || !r.error.empty() ||
                                             r.expected == recipes::Expected::kCorrect));
  }
  return failed ? kExitFailure : incomplete ? kExitIncomplete : kExitOk;
}

std::string junit_file_problem(const std::string& path) {
  const std::string fix =
      "; pass --junit FILE with a file in a directory that exists and that "
      "you can write";
  if (path.empty()) return "--junit needs a file name: --junit FILE";
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return "--junit '" + path + "' is a directory" + fix;
  }
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return "--junit '" + path + "': '" + dir + "' is not a directory" + fix;
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    return "--junit '" + path + "': the directory '" + dir + "' is not writable" + fix;
  }
  return "";
}

std::string reproduce_run(const CheckRequest& rq) {
  std::string cmd = rq.o.program + " check" + backend_flag(rq.where);
  for (const std::string& name : rq.o.recipes) cmd += " --recipe " + name;
  if (rq.o.seed) {
    cmd += " --seed " + std::to_string(*rq.o.seed);
  } else {
    cmd += " --first-seed " + std::to_string(rq.sweep_first) + " --seeds " +
           std::to_string(rq.sweep_seeds);
  }
  cmd += properties::faults_flag(rq.o.fault_restriction());
  if (rq.shard) {
    cmd += " --shard " + std::to_string(rq.shard->index) + "/" + std::to_string(rq.shard->count);
  }
  return cmd;
}

json to_json(const CheckReport& report, const CheckRequest& rq) {
  json rs = json::array();
  uint64_t seeds = 0;
  for (const RecipeResult& r : report.results) {
    seeds += r.seeds_run;
    rs.push_back(result_json(r, rq));
  }
  const int code = exit_code(report, rq);
  json doc;
  doc["ok"] = code == kExitOk;
  doc["exit_code"] = code;
  doc["backend"] = backend_name(rq.where);
  doc["server"] = or_null(report.server);
  const uint64_t first = rq.o.first();
  doc["first_seed"] = first;
  doc["last_seed"] = rq.o.seed ? first : first + rq.o.seeds - 1;
  doc["options"] = options_json(rq);
  doc["reproduce"] = reproduce_run(rq);
  doc["interrupted"] = !report.interrupted.empty();
  doc["interrupted_by"] = or_null(report.interrupted);
  doc["seconds"] = report.seconds;
  doc["cpu_seconds"] = report.cpu_seconds;
  doc["seeds_per_second"] = report.seconds > 0 ? static_cast<double>(seeds) / report.seconds : 0.0;
  doc["seeds_per_cpu_second"] =
      report.cpu_seconds > 0 ? static_cast<double>(seeds) / report.cpu_seconds : 0.0;
  doc["results"] = std::move(rs);
  return doc;
}

std::string from_json(const json& doc, CheckRequest* rq, CheckReport* report) {
  try {
    if (!doc.is_object()) throw BadReport("it is not a JSON object");
    read_options(doc, rq);
    report->server = get_text(doc, "server", "");
    report->seconds = get<double>(doc, "seconds", "");
    report->cpu_seconds = get<double>(doc, "cpu_seconds", "");
    report->interrupted = get_text(doc, "interrupted_by", "");
    if (get<bool>(doc, "interrupted", "") && report->interrupted.empty()) {
      report->interrupted = "interrupted";
    }
    report->results.clear();
    const json& results = field(doc, "results", "");
    if (!results.is_array()) throw BadReport("results is not a list");
    for (size_t i = 0; i < results.size(); ++i) {
      report->results.push_back(read_result(results[i], "results[" + std::to_string(i) + "]."));
    }
  } catch (const BadReport& e) {
    return e.what();
  } catch (const json::exception& e) {
    return std::string("a value has the wrong type (") + e.what() + ")";
  }
  return "";
}

std::string to_junit(const CheckReport& report, const CheckRequest& rq) {
  std::vector<std::vector<Case>> suites;
  std::vector<Case> all;
  for (const RecipeResult& r : report.results) {
    suites.push_back(junit_cases(rq, r));
    all.insert(all.end(), suites.back().begin(), suites.back().end());
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f", report.seconds);
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"lockstep\" " +
                  junit_counts(all) + " time=\"" + seconds + "\">\n";
  for (size_t s = 0; s < suites.size(); ++s) {
    const RecipeResult& r = report.results[s];
    const std::string name = xml_escape(r.recipe);
    x += "  <testsuite name=\"" + name + "\" " + junit_counts(suites[s]) + ">\n    <properties>\n";
    const std::string seeds = r.seeds_run == 0 ? "none"
                                               : std::to_string(r.first_seed) + ".." +
                                                     std::to_string(r.first_seed + r.seeds_run - 1);
    for (const auto& [key, value] :
         {std::pair<std::string, std::string>{"expected", recipes::to_string(r.expected)},
          {"seeds", seeds},
          {"result", outcome(r, rq.o)},
          {"reproduce", reproduce_run(rq)}}) {
      x += "      <property name=\"" + key + "\" value=\"" + xml_escape(value) + "\"/>\n";
    }
    x += "    </properties>\n";
    for (const Case& c : suites[s]) {
      x += "    <testcase classname=\"" + name + "\" name=\"" + xml_escape(c.name) + "\"";
      if (c.element == nullptr && c.out.empty()) {
        x += "/>\n";
        continue;
      }
      x += ">\n";
      if (c.element != nullptr) {
        x += "      <" + std::string(c.element) + " message=\"" + xml_escape(c.message) + "\"";
        x += c.body.empty() ? "/>\n"
                            : ">" + xml_escape(c.body) + "</" + std::string(c.element) + ">\n";
      }
      if (!c.out.empty()) x += "      <system-out>" + xml_escape(c.out) + "</system-out>\n";
      x += "    </testcase>\n";
    }
    x += "  </testsuite>\n";
  }
  return x + "</testsuites>\n";
}

int finish(const CheckReport& report, const CheckRequest& rq, const char* command,
           std::ostream& out, std::ostream& err) {
  if (rq.json) {
    out << to_json(report, rq).dump(2) << "\n";
    if (!report.interrupted.empty()) {
      err << "lockstep " << command << ": interrupted (" << report.interrupted
          << "); each result covers first_seed..last_seed\n";
    }
  } else {
    if (!rq.o.seed) {
      print_table(report.results, rq, out);
      out << "\n";
    }
    print_failures(report.results, rq, out);
    if (!rq.o.seed) print_summary(report, rq, out);
  }
  int code = exit_code(report, rq);
  if (!rq.junit.empty()) {
    std::string why;
    if (!traces::write_file_atomically(rq.junit, to_junit(report, rq), &why)) {
      err << "lockstep " << command << ": the JUnit file was not written: " << why
          << "\n  fix: pass --junit FILE with a path in a directory you can write\n";
      if (code == kExitOk) code = kExitFailure;
    }
  }
  return code;
}

}  // namespace lockstep::cli
