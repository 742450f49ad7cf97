// The triaged-seed manifest (traces/corpus.h).
#include "traces/corpus.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>
#include <utility>

#include "properties/claims.h"
#include "recipes/registry.h"
#include "traces/record.h"
#include "traces/trace.h"

namespace lockstep::traces {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// The first whitespace-separated word of *rest, removed from it.
std::string_view take_word(std::string_view* rest) {
  *rest = trim(*rest);
  size_t end = 0;
  while (end < rest->size() && (*rest)[end] != ' ' && (*rest)[end] != '\t') ++end;
  const std::string_view word = rest->substr(0, end);
  rest->remove_prefix(end);
  return word;
}

// Why `line` is not a valid row, or "" with *out filled in.
std::string parse_row(std::string_view line, TriagedSeed* out) {
  const std::string_view recipe = take_word(&line);
  const std::string_view seed = take_word(&line);
  std::string_view rest = line;
  const std::string_view era_word = take_word(&rest);
  uint32_t era = 0;
  if (era_word == "later-draws") {
    era = 1;
  } else if (era_word.size() == 5 && era_word.substr(0, 4) == "era-" && era_word[4] >= '0' &&
             era_word[4] <= '9') {
    era = static_cast<uint32_t>(era_word[4] - '0');
    if (era > properties::kLatestDrawEra) {
      return "draw era " + std::string(era_word) + " is newer than the sweep's latest (era-" +
             std::to_string(properties::kLatestDrawEra) + ")";
    }
  }
  if (era != 0) line = rest;
  const std::string_view cause = trim(line);
  if (seed.empty() || cause.empty()) {
    return "want `recipe seed cause...`, got '" + std::string(recipe) + " " + std::string(seed) +
           "'";
  }
  const recipes::RecipeInfo* r = recipes::find_recipe(std::string(recipe));
  if (r == nullptr) return "unknown recipe '" + std::string(recipe) + "' (see `lockstep list`)";
  if (r->expected != recipes::Expected::kCorrect) {
    return "recipe '" + std::string(recipe) +
           "' is a broken variant; its trace is kept as <recipe>.json by `lockstep corpus`";
  }
  uint64_t v = 0;
  if (seed.size() > 19) return "seed '" + std::string(seed) + "' is too long";
  for (char c : seed) {
    if (c < '0' || c > '9') return "seed '" + std::string(seed) + "' is not a number";
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v == 0) return "seed 0 is not a seed (seeds start at 1)";
  *out = TriagedSeed{std::string(recipe), v, std::string(cause), era};
  return {};
}

}  // namespace

std::optional<std::vector<TriagedSeed>> parse_triaged_seeds(std::string_view text,
                                                            std::string_view origin,
                                                            std::string* error) {
  std::vector<TriagedSeed> out;
  std::set<std::pair<std::string, uint64_t>> seen;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = trim(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    TriagedSeed t;
    std::string why = parse_row(line, &t);
    if (why.empty() && !seen.insert({t.recipe, t.seed}).second) {
      why = t.recipe + " seed " + std::to_string(t.seed) + " is listed twice";
    }
    if (!why.empty()) {
      if (error) *error = std::string(origin) + ":" + std::to_string(line_no) + ": " + why;
      return std::nullopt;
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::optional<std::vector<TriagedSeed>> load_triaged_seeds(const std::string& path,
                                                           std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (error) *error = "cannot read " + path;
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_triaged_seeds(text.str(), path, error);
}

std::ostream& operator<<(std::ostream& out, const TriagedSeed& t) {
  out << t.recipe << " " << t.seed << " ";
  if (t.draw_era == 1) out << "later-draws ";
  if (t.draw_era >= 2) out << "era-" << t.draw_era << " ";
  return out << t.cause;
}

std::string triaged_id(const TriagedSeed& t) {
  std::string id;
  for (char c : t.recipe) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    id.push_back(plain ? c : '_');
  }
  return id + "_" + std::to_string(t.seed);
}

std::string triaged_trace_name(const TriagedSeed& t) {
  return file_stem(t.recipe) + "-seed" + std::to_string(t.seed) + ".json";
}

bool CorpusReport::ok() const {
  return error.empty() && stale.empty() &&
         std::all_of(entries.begin(), entries.end(),
                     [](const CorpusEntry& e) { return e.failure.empty(); });
}

namespace {

bool wanted(const CorpusOptions& o, const std::string& recipe) {
  return o.recipes.empty() || std::find(o.recipes.begin(), o.recipes.end(), recipe) != o.recipes.end();
}

// Records `seed` of `recipe` and, unless it must pass and does not, saves it at `path`. False
// (with report->error) when the file could not be written.
bool record_entry(const recipes::RecipeInfo& recipe, uint64_t seed, bool triaged,
                  uint32_t draw_era, const std::string& path, CorpusReport* report) {
  // A triaged seed keeps the scenario it failed in (GenerateOptions::draw_era).
  Trace t = record_trace(recipe, check_scenario(recipe, seed, {}, draw_era));
  // A broken variant's trace reports the property that catches it, as `lockstep check` does.
  t.reported = triaged ? std::nullopt : properties::claims_for(recipe).must_violate;
  CorpusEntry e{recipe.name, triaged, seed, "", t.event_count, t.history.size(),
                verdict_summary(t), ""};
  if (triaged && t.violation() != nullptr) {
    e.failure = "FAILS NOW";
    report->entries.push_back(std::move(e));
    return true;
  }
  std::string why;
  if (!write_file_atomically(path, to_json_text(t), &why)) {
    report->error = why;
    return false;
  }
  e.path = path;
  report->entries.push_back(std::move(e));
  return true;
}

}  // namespace

CorpusReport regenerate_corpus(const CorpusOptions& o) {
  namespace fs = std::filesystem;
  CorpusReport report;
  const fs::path triaged_dir = fs::path(o.dir) / kTriagedDir;
  // The manifest is read (and a bad one refused) before anything is run or written.
  const std::string manifest = (triaged_dir / kTriagedManifest).string();
  std::vector<TriagedSeed> triaged;
  report.manifest_found = fs::exists(manifest);
  if (report.manifest_found) {
    std::optional<std::vector<TriagedSeed>> rows = load_triaged_seeds(manifest, &report.error);
    if (!rows) return report;
    triaged = std::move(*rows);
  }
  std::error_code ec;
  fs::create_directories(o.dir, ec);
  if (ec) {
    report.error = "cannot create " + o.dir + ": " + ec.message();
    return report;
  }
  for (const recipes::RecipeInfo& r : recipes::registry()) {
    if (r.expected != recipes::Expected::kBroken || !wanted(o, r.name)) continue;
    const std::optional<uint64_t> found = first_failing_seed(r, o.seeds);
    if (!found) {
      report.entries.push_back(
          {r.name, false, 0, "", 0, 0, "", "not caught in seeds 1.." + std::to_string(o.seeds)});
      continue;
    }
    const std::string path = (fs::path(o.dir) / (file_stem(r.name) + ".json")).string();
    if (!record_entry(r, *found, false, properties::kLatestDrawEra, path, &report)) return report;
  }
  bool any = false;
  for (const TriagedSeed& s : triaged) any = any || wanted(o, s.recipe);
  if (any) fs::create_directories(triaged_dir, ec);
  if (ec) {
    report.error = "cannot create " + triaged_dir.string() + ": " + ec.message();
    return report;
  }
  for (const TriagedSeed& s : triaged) {
    if (!wanted(o, s.recipe)) continue;
    const recipes::RecipeInfo* r = recipes::find_recipe(s.recipe);  // the manifest checked it
    if (!record_entry(*r, s.seed, true, s.draw_era,
                      (triaged_dir / triaged_trace_name(s)).string(), &report)) {
      return report;
    }
  }
  std::set<std::string> listed;
  for (const TriagedSeed& s : triaged) listed.insert(triaged_trace_name(s));
  std::set<std::string> present;  // ordered: the report does not depend on the directory's order
  for (const auto& e : fs::directory_iterator(triaged_dir, ec)) {
    if (e.path().extension() == ".json") present.insert(e.path().filename().string());
  }
  for (const std::string& name : present) {
    if (listed.count(name) == 0) report.stale.push_back((triaged_dir / name).string());
  }
  return report;
}

}  // namespace lockstep::traces
