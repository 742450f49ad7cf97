#include "explore/search.h"

#include <algorithm>
#include <climits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_set>
#include <utility>

#include "explore/probe.h"
#include "properties/generator.h"
#include "properties/suite.h"

namespace lockstep::explore {
namespace {

using sim::FaultKind;
using zk::milliseconds;

bool has_fault(const std::vector<sim::Fault>& faults, std::initializer_list<FaultKind> kinds) {
  for (const sim::Fault& f : faults) {
    if (std::find(kinds.begin(), kinds.end(), f.kind) != kinds.end()) return true;
  }
  return false;
}

bool parse_number(std::string_view text, uint64_t max, uint64_t* out) {
  if (text.empty() || text.size() > 12) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > max) return false;
  *out = v;
  return true;
}

// Is `a` a shorter counterexample than `b`: fewer decisions, then fewer simulator events.
bool shorter(const Counterexample& a, const Counterexample& b) {
  if (a.decisions.size() != b.decisions.size()) return a.decisions.size() < b.decisions.size();
  return a.sim_events < b.sim_events;
}

// Records a violating run in `out` (first and shortest). Returns whether `r` counts.
bool note_violation(SearchResult* out, const Schedule& schedule, const RunReport& r,
                    const std::optional<properties::Property>& target) {
  const properties::Verdict* v = counted_violation(r, target);
  if (v == nullptr) return false;
  out->violated.insert(v->property);
  if (out->first_violation_at == 0) out->first_violation_at = out->schedules;
  Counterexample c{schedule, r.decisions, *v, r.sim_events, out->schedules};
  if (!out->shortest || shorter(c, *out->shortest)) out->shortest = std::move(c);
  return true;
}

// Memory bound on the states remembered (beyond it, distinct_states is a lower bound and the
// reduction stops learning new states).
constexpr size_t kMaxTrackedStates = 4000000;

// The distinct states met at choice points over a search's runs, and how many the last
// SearchResult::kRecentRuns runs found. Only the set's size and membership are read, never its
// order.
class StateCounter {
 public:
  // Before run `run` (0-based) adds its states.
  void start_run(uint64_t run) { seen_before_[run % SearchResult::kRecentRuns] = states_.size(); }
  // True when `state` was not met before. Past kMaxTrackedStates new states are no longer told
  // apart (*capped turns true) and the count is a lower bound.
  bool add(uint64_t state, bool* capped) {
    if (states_.size() >= kMaxTrackedStates) {
      *capped = *capped || states_.count(state) == 0;
      return false;
    }
    return states_.insert(state).second;
  }
  uint64_t size() const { return states_.size(); }
  void finish(SearchResult* out) const {
    out->states_visited = states_.size();
    const uint64_t window = std::min(out->schedules, SearchResult::kRecentRuns);
    out->new_states_recent =
        states_.size() - (window == out->schedules ? 0 : seen_before_[out->schedules % window]);
  }

 private:
  std::unordered_set<uint64_t> states_;
  // seen_before_[r % kRecentRuns]: how many states were known before run r started.
  std::vector<uint64_t> seen_before_ = std::vector<uint64_t>(SearchResult::kRecentRuns, 0);
};

}  // namespace

std::vector<uint32_t> alternatives(uint32_t n, uint32_t max_alternatives) {
  std::vector<uint32_t> out;
  if (n < 2) return out;
  const uint64_t others = n - 1;
  if (max_alternatives == 0 || others <= max_alternatives) {
    for (uint32_t c = 1; c < n; ++c) out.push_back(c);
    return out;
  }
  for (uint64_t j = 0; j < max_alternatives; ++j) {
    out.push_back(static_cast<uint32_t>(1 + j * others / max_alternatives));
  }
  return out;
}

Scope make_scope(const recipes::RecipeInfo& recipe, uint32_t clients, uint32_t rounds,
                 std::vector<sim::Fault> faults, uint64_t seed) {
  Scope sc;
  sc.recipe = &recipe;
  sc.claims = properties::claims_for(recipe);
  properties::Scenario& s = sc.scenario;
  s.seed = seed;
  properties::WorkloadOptions& w = s.workload;
  w.kind = recipe.kind;
  w.clients = clients;
  w.rounds = rounds;
  w.think_max = milliseconds(1);
  w.hold_min = milliseconds(1);
  w.hold_max = milliseconds(4);
  // Timed acquires that run out while another client holds (holds last 1-4 ms).
  w.timed_percent = sc.claims.needs_timeouts ? 100 : 0;
  w.acquire_timeout = milliseconds(2);
  w.reentrant_percent = 0;
  w.stray_release_percent = 0;
  w.give_up_percent = 0;
  // A holder that is not told it lost its session must still believe when the next is granted.
  if (has_fault(faults, {FaultKind::kAbandonSession, FaultKind::kExpireSession, FaultKind::kPause,
                         FaultKind::kPartition})) {
    w.long_hold_percent = 50;
    w.long_hold = s.session_timeout * 2;
  }
  if (recipe.kind == recipes::Kind::kSemaphore) w.max_leases = 2;
  if (recipe.kind == recipes::Kind::kReadWrite) {
    w.roles = {recipes::Role::kWrite, recipes::Role::kRead};
  }
  if (sc.claims.needs_wrap) s.sequence_start = INT32_MAX - 1;
  // Two caller tasks on each client's one Lock, for a variant that shared callers expose.
  if (sc.claims.needs_shared_callers) w.callers = 2;
  // For a variant only a long hold exposes (a TTL node deleted under its holder; a waiter
  // asleep on a lease ahead that stays held while one behind it is left): the first client
  // holds for twice a session timeout, the others for their 1-4 ms, so that in every order the
  // schedule gives them one hold outlasts the rest.
  if (sc.claims.needs_long_holds) {
    w.client_holds.assign(clients, zk::Duration{});
    w.client_holds[0] = s.session_timeout * 2;
  }
  // A fault on a server other than the first, or a lag (which on a standalone server changes
  // nothing: its reply comes after its apply), runs the scope on an ensemble.
  for (const sim::Fault& f : faults) {
    if (f.server > 1 || f.kind == FaultKind::kLaggingFollower) s.servers = kScopeServers;
  }
  s.faults = std::move(faults);
  std::stable_sort(s.faults.begin(), s.faults.end(),
                   [](const sim::Fault& a, const sim::Fault& b) { return a.at < b.at; });
  properties::finish_scenario(&s);
  return sc;
}

bool parse_fault_spec(std::string_view spec, const properties::Scenario& s, sim::Fault* out,
                      std::string* error) {
  std::string_view kind = spec;
  std::string_view at_text;
  std::string_view task_text;
  const size_t eq = kind.find('=');
  if (eq != std::string_view::npos) {
    task_text = kind.substr(eq + 1);
    kind = kind.substr(0, eq);
  }
  // KIND[@MS] then any of :cN (the client) and :sN (the server), in either order.
  std::optional<std::string_view> client_text;
  std::optional<std::string_view> server_text;
  const size_t colon = kind.find(':');
  if (colon != std::string_view::npos) {
    std::string_view rest = kind.substr(colon + 1);
    kind = kind.substr(0, colon);
    for (;;) {
      const size_t next = rest.find(':');
      const std::string_view part = rest.substr(0, next);
      if (!part.empty() && part[0] == 's' && !server_text) {
        server_text = part.substr(1);
      } else if (!part.empty() && part[0] == 'c' && !client_text) {
        client_text = part.substr(1);
      } else {
        *error = "bad selector '" + std::string(part) + "' in '" + std::string(spec) +
                 "': want KIND[@MS][:cN][:sN][=TASK], each of :cN (client) and :sN (server) at "
                 "most once";
        return false;
      }
      if (next == std::string_view::npos) break;
      rest = rest.substr(next + 1);
    }
  }
  const size_t at = kind.find('@');
  if (at != std::string_view::npos) {
    at_text = kind.substr(at + 1);
    kind = kind.substr(0, at);
  }
  sim::Fault f;
  if (!properties::parse_fault_name(kind, &f.kind)) {
    std::string known;
    for (sim::FaultKind k : properties::all_fault_kinds()) {
      known += (known.empty() ? "" : ", ") + std::string(properties::fault_name(k));
    }
    *error = "unknown fault kind '" + std::string(kind) + "' in '" + std::string(spec) +
             "' (known: " + known + ")";
    return false;
  }
  uint64_t ms = 0;
  if (at != std::string_view::npos && !parse_number(at_text, 3600000, &ms)) {
    *error = "bad time in '" + std::string(spec) + "': want KIND@MS with MS in milliseconds";
    return false;
  }
  uint64_t client = 1;
  if (client_text && (!parse_number(*client_text, s.workload.clients, &client) || client == 0)) {
    *error = "bad client in '" + std::string(spec) + "': want KIND:cN with N in 1.." +
             std::to_string(s.workload.clients);
    return false;
  }
  uint64_t server = 0;
  if (server_text) {
    if (!zk::takes(f.kind, zk::kParamServer)) {
      *error = "'" + std::string(spec) + "': :sN names the server of a kind that hits one (" +
               "lagging-follower, server-restart), e.g. lagging-follower@0:s1";
      return false;
    }
    if (!parse_number(*server_text, kScopeServers, &server) || server == 0) {
      *error = "bad server in '" + std::string(spec) + "': want KIND:sN with N in 1.." +
               std::to_string(kScopeServers) + " (s1 is the ensemble's leader)";
      return false;
    }
  }
  f.at = zk::Time{} + milliseconds(static_cast<int64_t>(ms));
  f.client = static_cast<uint32_t>(client);
  // One typical instance of the kind: the generator's parameters with nothing drawn.
  properties::fault_parameters(nullptr, properties::Backend::kSimulator, s, 0, {}, &f);
  if (server_text) f.server = static_cast<uint32_t>(server);
  if (eq != std::string_view::npos) {
    if (!zk::takes(f.kind, zk::kParamTask) || task_text.empty()) {
      *error = "'" + std::string(spec) + "': =TASK names the task of a kind that takes one (" +
               "stall, cancel), e.g. stall@5:c1=lock-monitor@after-check";
      return false;
    }
    f.task = std::string(task_text);
  }
  *out = f;
  return true;
}

RunReport ScopeProgram::run(sim::Strategy& strategy, StateHashing* probe) {
  RunProbe rp;
  if (probe != nullptr) probe->set_probe([&rp] { return rp.state_hash(); });
  properties::RunResult r =
      properties::run_in_sim(rp.wrap(scope_.recipe->make), scope_.scenario,
                             properties::Keep::kAudit, std::make_unique<Borrowed>(&strategy));
  if (probe != nullptr) probe->set_probe({});
  RunReport out;
  out.decisions = std::move(r.decisions);
  for (properties::Verdict& v :
       properties::judge(*scope_.recipe, scope_.claims, scope_.scenario, r)) {
    if (!v.ok) out.violations.push_back(std::move(v));
  }
  out.sim_events = r.sim_events;
  out.log_hash = r.log_hash.value();
  Hasher h;
  for (const properties::NodeSnapshot& n : r.tree.nodes) {
    h.text(n.path);
    h.word(n.owner.value);
    h.word(n.owner_alive ? 1 : 0);
    h.word(static_cast<uint64_t>(n.czxid.value));
  }
  h.word(rp.final_hash());
  h.word(r.finished ? 1 : 0);
  out.final_state = h.value();
  for (const properties::Event& e : r.history.events()) {
    out.history_writes.emplace(e.at.us, e.client);
  }
  out.marks = mark_run(r.history, rp.stats(), r.herd);
  out.diverged = r.diverged;
  out.divergence = r.divergence;
  return out;
}

const properties::Verdict* counted_violation(const RunReport& r,
                                             const std::optional<properties::Property>& target) {
  for (const properties::Verdict& v : r.violations) {
    if (!target || v.property == *target) return &v;
  }
  return nullptr;
}

const char* to_string(Reduction r) {
  switch (r) {
    case Reduction::kNone: return "none";
    case Reduction::kSleepSets: return "sleep sets";
    case Reduction::kStateHash: return "state-hash (UNSOUND: may hide schedules)";
  }
  return "?";
}

sim::EventInfo user_code_wrote(sim::EventInfo e, const RunReport& r) {
  if ((e.footprint & sim::kRunsUserCode) != 0 &&
      r.history_writes.count(std::make_pair(e.at.us, e.client)) == 0) {
    e.footprint &= ~static_cast<uint32_t>(sim::kRunsUserCode);
  }
  return e;
}

bool needs_all_dependent(const Scope& scope) {
  return has_fault(scope.scenario.faults, {FaultKind::kPartition});
}

namespace {

// A schedule waiting to run, with what sleep sets need at its last pick.
struct Queued {
  Schedule schedule;
  std::vector<sim::EventInfo> sleep;  // asleep when the last pick was made
  uint64_t group = 0;                 // sleep sets: the kNextEvent choice it is an alternative of
};

// The alternatives of one kNextEvent choice (sleep sets). Alternative a starts with the events
// that ran as alternatives 0..a-1 asleep; they run (and are recorded here) before a does,
// because siblings are pushed in reverse and every level is a stack.
struct Group {
  std::vector<std::optional<sim::EventInfo>> ran;  // by answer: that event, as it ran
  uint32_t left = 0;                               // alternatives still to run
};

class Exhaustive {
 public:
  Exhaustive(Program& program, const ExhaustiveOptions& o)
      : program_(program),
        o_(o),
        sleep_sets_(o.reduction == Reduction::kSleepSets),
        order_free_(o.order_free || sleep_sets_),
        levels_(o.preemption_bound + 2) {}

  SearchResult run() {
    out_.strategy = "exhaustive";
    out_.new_states_per_level.assign(o_.preemption_bound + 1, 0);
    out_.new_final_states_per_level.assign(o_.preemption_bound + 1, 0);
    levels_[0].push_back({});
    bool cut = false;
    for (uint32_t level = 0; level <= o_.preemption_bound; ++level) {
      std::vector<Queued>& stack = levels_[level];
      while (!stack.empty()) {
        if (out_.schedules >= o_.max_schedules) {
          cut = true;
          break;
        }
        Queued q = std::move(stack.back());
        stack.pop_back();
        if (run_one(std::move(q), level)) return finish(true);
        if (o_.observer && !o_.observer({out_.schedules, states_.size(),
                                         out_.final_states.size(), level})) {
          out_.stopped_by_observer = true;
          return finish(false);
        }
      }
      if (cut || dropped_) break;
      out_.levels_done = level + 1;
      if (out_.shortest) break;  // the fewest-pick counterexamples are in this level
    }
    out_.run_limit_reached = cut;
    out_.queue_full = dropped_;
    return finish(!cut && !dropped_);
  }

 private:
  SearchResult finish(bool complete) {
    out_.complete = complete;
    out_.probe_states = branched_.size();
    out_.distinct_states = out_.final_states.size();
    states_.finish(&out_);
    return std::move(out_);
  }

  // Counts the states the run met after its schedule's last pick (the earlier ones are its
  // parent's).
  void count_states(const Schedule& schedule, const ScheduleStrategy& s, uint32_t level) {
    const std::vector<ChoicePoint>& points = s.points();
    states_.start_run(out_.schedules - 1);
    for (size_t i = schedule.empty() ? 0 : schedule.back().index + 1; i < points.size(); ++i) {
      if (states_.add(points[i].state, &out_.states_capped)) ++out_.new_states_per_level[level];
    }
  }

  // Runs one schedule and queues its children. True when the search stops here.
  bool run_one(Queued q, uint32_t level) {
    std::vector<sim::EventInfo> sleep = std::move(q.sleep);
    Group* group = nullptr;
    uint32_t answer = 0;
    if (q.group != 0) {
      group = &groups_.at(q.group);
      answer = q.schedule.back().chosen;
      for (uint32_t k = 0; k < answer && k < group->ran.size(); ++k) {
        if (group->ran[k]) sleep.push_back(*group->ran[k]);
      }
    }
    ScheduleStrategy strategy(q.schedule);
    if (sleep_sets_) strategy.set_sleep(sleep, o_.all_dependent);
    const RunReport r = program_.run(strategy, &strategy);
    ++out_.schedules;
    count_states(q.schedule, strategy, level);
    if (strategy.stopped()) {
      // Blocked: everything after the stop is covered by runs explored elsewhere, and what the
      // truncated run produced is not a run's outcome.
      ++out_.stopped_early;
    } else {
      logs_.insert(r.log_hash);
      out_.distinct_runs = logs_.size();
      if (out_.final_states.insert(r.final_state).second) {
        ++out_.new_final_states_per_level[level];
      }
      out_.coverage.add(r.marks);
      const bool counted = note_violation(&out_, q.schedule, r, o_.target);
      if (counted && o_.stop_at_first) {
        out_.stopped_at_first = true;
        return true;
      }
    }
    if (group != nullptr) {
      const ChoicePoint& p = strategy.points()[q.schedule.back().index];
      group->ran[answer] =
          ran_as(strategy, r, strategy.candidates()[p.first_candidate + answer].seq);
      if (--group->left == 0) groups_.erase(q.group);
    }
    const bool blocked = branch(q.schedule, level, strategy, r, std::move(sleep));
    // The online stop must agree with the analysis (it uses more dependences, so it can only
    // stop where the analysis also finds the run blocked).
    if (strategy.stopped() && !blocked) ++out_.unexplained_stops;
    return false;
  }

  // The event with insertion number `seq` as it ran in that run (nullopt: it did not run).
  static std::optional<sim::EventInfo> ran_as(const ScheduleStrategy& s, const RunReport& r,
                                              uint64_t seq) {
    for (const RanEvent& e : s.ran()) {
      if (e.info.seq == seq) return user_code_wrote(e.info, r);
    }
    return std::nullopt;
  }

  void push(uint32_t level, Queued q) {
    if (queued_ >= o_.max_schedules * 4) {
      dropped_ = true;  // the queue is full: the search can no longer be complete
      return;
    }
    ++queued_;
    levels_[level].push_back(std::move(q));
  }

  // Queues the children of a run of `schedule` (level `level`): its choice points after the
  // last pick, with the sleep set each starts from.
  // Returns whether the run was blocked (sleep sets).
  bool branch(const Schedule& schedule, uint32_t level, const ScheduleStrategy& s,
              const RunReport& r, std::vector<sim::EventInfo> sleep) {
    const std::vector<ChoicePoint>& points = s.points();
    const std::vector<RanEvent>& ran = s.ran();
    const uint32_t budget = o_.preemption_bound - level;
    const int64_t last_pick = schedule.empty() ? -1 : static_cast<int64_t>(schedule.back().index);
    const size_t start = static_cast<size_t>(last_pick + 1);
    const size_t end =
        sleep_sets_ ? points.size() : std::min<size_t>(points.size(), o_.depth_bound);
    size_t next_ran = 0;
    while (next_ran < ran.size() &&
           static_cast<int64_t>(ran[next_ran].points_before) <= last_pick) {
      ++next_ran;
    }
    // An event that finished wakes the sleepers it depends on; one that was asleep itself makes
    // the rest of the run redundant (returns true: the run was blocked).
    auto finished = [&](const sim::EventInfo& info) {
      const sim::EventInfo e = user_code_wrote(info, r);
      if (asleep(sleep, e.seq)) {
        ++out_.blocked;
        return true;
      }
      std::erase_if(sleep,
                    [&](const sim::EventInfo& z) { return o_.all_dependent || dependent(z, e); });
      return false;
    };
    for (size_t i = start; i < end; ++i) {
      // Events that finished before choice point i.
      for (; next_ran < ran.size() && ran[next_ran].points_before <= i; ++next_ran) {
        if (sleep_sets_ && finished(ran[next_ran].info)) return true;
      }
      const ChoicePoint& p = points[i];
      if (o_.reduction == Reduction::kStateHash && !state_hash_allows(i, p, budget)) return false;
      const bool branches = o_.kinds.empty() || o_.kinds.count(p.kind) != 0;
      if (p.kind == sim::ChoiceKind::kNextEvent && order_free_) {
        const sim::EventInfo* c = &s.candidates()[p.first_candidate];
        const bool default_asleep = sleep_sets_ && asleep(sleep, c[0].seq);
        if (branches) branch_order(schedule, level, i, p.n, c, s, r, sleep);
        if (default_asleep) {
          ++out_.blocked;
          return true;
        }
        continue;
      }
      if (budget == 0 || !branches) continue;
      const std::vector<uint32_t> answers = alternatives(p.n, o_.max_alternatives);
      // Pushed in reverse so that lower answers are popped (run) first.
      for (auto a = answers.rbegin(); a != answers.rend(); ++a) {
        Queued child{schedule, sleep, 0};
        child.schedule.push_back(Pick{static_cast<uint32_t>(i), *a});
        push(level + 1, std::move(child));
      }
    }
    // Events after the last choice point branch nothing, but a sleeper among them still means
    // the run was blocked.
    for (; sleep_sets_ && next_ran < ran.size(); ++next_ran) {
      if (finished(ran[next_ran].info)) return true;
    }
    return false;
  }
  // The alternatives 1..n-1 of kNextEvent choice i, free of the bound (order_free).
  void branch_order(const Schedule& schedule, uint32_t level, size_t i, uint32_t n,
                    const sim::EventInfo* c, const ScheduleStrategy& s, const RunReport& r,
                    const std::vector<sim::EventInfo>& sleep) {
    uint64_t id = 0;
    Group* g = nullptr;
    if (sleep_sets_) {
      id = ++next_group_;
      g = &groups_[id];
      g->ran.resize(n);
      if (!asleep(sleep, c[0].seq)) g->ran[0] = ran_as(s, r, c[0].seq);
    }
    for (uint32_t a = n - 1; a >= 1; --a) {
      if (sleep_sets_ && asleep(sleep, c[a].seq)) {
        ++out_.pruned;
        continue;
      }
      Queued child{schedule, sleep, id};
      child.schedule.push_back(Pick{static_cast<uint32_t>(i), a});
      const uint64_t before = queued_;
      push(level, std::move(child));
      if (g != nullptr && queued_ != before) ++g->left;
    }
    if (g != nullptr && g->left == 0) groups_.erase(id);
  }

  // The unsound state-hash pruning: false when choice point i's state was already branched from
  // with at least this budget (then nothing after it branches either).
  bool state_hash_allows(size_t i, const ChoicePoint& p, uint32_t budget) {
    const auto key = std::make_pair(static_cast<uint32_t>(i),
                                    p.state ^ (static_cast<uint64_t>(p.kind) << 56) ^ p.n);
    auto it = branched_.find(key);
    if (it != branched_.end() && it->second >= budget) {
      ++out_.pruned;
      return false;
    }
    if (it != branched_.end()) {
      it->second = std::max(it->second, budget);
    } else if (branched_.size() < kMaxTrackedStates) {
      branched_.emplace(key, budget);
    }
    return true;
  }

  Program& program_;
  const ExhaustiveOptions& o_;
  const bool sleep_sets_;
  const bool order_free_;
  SearchResult out_;
  std::vector<std::vector<Queued>> levels_;  // levels_[k]: schedules that spent k of the bound
  uint64_t queued_ = 1;
  bool dropped_ = false;
  std::map<uint64_t, Group> groups_;
  uint64_t next_group_ = 0;
  // (choice index, state) -> the largest remaining budget it was branched from with.
  std::map<std::pair<uint32_t, uint64_t>, uint32_t> branched_;
  std::set<uint64_t> logs_;
  // Every state met at a choice point; only its size and membership are read, never its order.
  StateCounter states_;
};

}  // namespace

SearchResult explore_exhaustive(Program& program, const ExhaustiveOptions& o) {
  return Exhaustive(program, o).run();
}

namespace {

// Runs o.runs runs, the i-th with make(o.seed + i).
template <class MakeStrategy>
SearchResult sample(Program& program, const SampleOptions& o, std::string name,
                    MakeStrategy&& make) {
  SearchResult out;
  out.strategy = std::move(name);
  std::set<uint64_t> logs;
  StateCounter states;
  for (uint64_t i = 0; i < o.runs; ++i) {
    std::unique_ptr<sim::Strategy> s = make(o.seed + i);
    StateRecorder recorder(s.get());
    const RunReport r = program.run(recorder, &recorder);
    ++out.schedules;
    states.start_run(i);
    for (uint64_t state : recorder.states()) states.add(state, &out.states_capped);
    states.finish(&out);
    logs.insert(r.log_hash);
    out.distinct_runs = logs.size();
    out.final_states.insert(r.final_state);
    out.distinct_states = out.final_states.size();
    out.coverage.add(r.marks);
    const bool counted = note_violation(&out, schedule_of(r.decisions), r, o.target);
    if (counted && o.stop_at_first) {
      out.stopped_at_first = true;
      break;
    }
    if (o.observer && !o.observer({out.schedules, states.size(), out.final_states.size(), 0})) {
      out.stopped_by_observer = true;
      break;
    }
  }
  return out;
}

}  // namespace

SearchResult explore_random(Program& program, const SampleOptions& o) {
  return sample(program, o, "random",
                [](uint64_t seed) { return sim::make_random_strategy(seed); });
}

SearchResult explore_pct(Program& program, const SampleOptions& o) {
  // k: the scheduling steps of one run (the all-zero schedule), counted once.
  ScheduleStrategy calibrate({});
  program.run(calibrate, nullptr);
  uint32_t steps = 0;
  for (const ChoicePoint& p : calibrate.points()) {
    steps += p.kind == sim::ChoiceKind::kNextEvent ? 1 : 0;
  }
  return sample(program, o, "pct-d" + std::to_string(o.pct_depth), [&](uint64_t seed) {
    PctOptions po;
    po.seed = seed;
    po.depth = o.pct_depth;
    po.steps = std::max<uint32_t>(1, steps);
    return make_pct_strategy(po);
  });
}

Counterexample shrink(Program& program, Counterexample c,
                      const std::optional<properties::Property>& target, uint64_t max_runs,
                      uint64_t* runs) {
  uint64_t spent = 0;
  bool changed = true;
  while (changed && spent < max_runs) {
    changed = false;
    for (size_t k = c.schedule.size(); k-- > 0 && spent < max_runs;) {
      Schedule candidate = c.schedule;
      candidate.erase(candidate.begin() + static_cast<std::ptrdiff_t>(k));
      ScheduleStrategy strategy(candidate, "shrink");
      const RunReport r = program.run(strategy, nullptr);
      ++spent;
      const properties::Verdict* v = counted_violation(r, target);
      if (v == nullptr) continue;
      Counterexample smaller{schedule_of(r.decisions), r.decisions, *v, r.sim_events, c.found_at};
      if (smaller.schedule.size() >= c.schedule.size()) continue;
      c = std::move(smaller);
      changed = true;
      k = std::min(k, c.schedule.size());
    }
  }
  if (runs != nullptr) *runs = spent;
  return c;
}

}  // namespace lockstep::explore
