// `lockstep selfcheck`: a SELF-CHECK of the simulator, not of any recipe.
//
// It proves the machinery `lockstep check` (the property suite) stands on: each seeded
// scenario drives clients through a
// create-ephemeral-sequential / get-children / delete loop under a fault plan, and is run three
// times — twice with the same seed (the event-log hashes, sizes and decision lists must be
// identical), once replaying the first run's recorded decisions (same hash again). It also
// checks that every injected fault shows up in the event log, that a different seed changes the
// schedule, and that no ephemeral node outlives its session (expiry really deletes them).
#include <cinttypes>
#include <cstdio>
#include <ostream>
#include <map>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "sim/world.h"
#include "zk/session.h"

namespace lockstep::cli {
namespace {

using sim::Fault;
using sim::FaultKind;
using zk::milliseconds;
using zk::Time;

constexpr const char* kDir = "/selfcheck";
constexpr Time kRunEnd = Time{} + zk::seconds(8);  // virtual; every fault plan heals before

struct Scenario {
  const char* name;
  uint32_t servers;
  uint32_t clients;
  bool local_session_expiry;  // model a Curator-like client that gives up on its own timer
  std::vector<Fault> faults;
  std::vector<zk::Error> must_see;  // errors the fault plan must make some client see
};

Fault fault(FaultKind kind, int64_t at_ms, uint32_t client, zk::Duration duration = {},
            uint32_t server = 0) {
  Fault f;
  f.kind = kind;
  f.at = Time{} + milliseconds(at_ms);
  f.client = client;
  f.server = server;
  f.duration = duration;
  return f;
}

Fault task(Fault f, std::string name) {
  f.task = std::move(name);
  return f;
}

Fault path(Fault f, std::string path) {
  f.path = std::move(path);
  return f;
}

Fault extra(Fault f, zk::Duration d) {
  f.extra = d;
  return f;
}

std::vector<Scenario> scenarios() {
  using E = zk::Error;
  using K = FaultKind;
  const zk::Duration ms = milliseconds(1);
  return {
      {"steady", 1, 4, false, {}, {}},
      {"connection-loss",
       1,
       4,
       false,
       {fault(K::kConnectionLoss, 5, 1), fault(K::kLoseNextReply, 8, 2)},
       {E::kConnectionLoss}},
      {"expiry-and-crash",
       1,
       4,
       false,
       {fault(K::kExpireSession, 10, 1), fault(K::kCrash, 12, 3)},
       {E::kSessionExpired}},
      {"pause-partition",
       1,
       4,
       false,
       {fault(K::kPause, 5, 2, zk::seconds(2)), fault(K::kPartition, 10, 4, ms * 300)},
       {E::kSessionExpired}},
      {"ensemble",
       3,
       5,
       false,
       {extra(fault(K::kLaggingFollower, 2, 0, ms * 300, 2), ms * 20),
        extra(fault(K::kDelay, 4, 2, ms * 50), ms * 5),
        fault(K::kServerRestart, 20, 0, ms * 500, 1)},
       {E::kConnectionLoss}},
      {"cancel-abandon",
       1,
       4,
       true,
       {task(fault(K::kCancel, 7, 1), "loop"),
        path(fault(K::kForeignChild, 3, 0), std::string(kDir) + "/foreign-node"),
        fault(K::kAbandonSession, 9, 2), fault(K::kCloseSession, 15, 4)},
       {E::kCancelled, E::kSessionExpired}},
  };
}

struct Tally {
  std::map<zk::Error, uint64_t> errors;  // ordered: printed in a stable order
};

// True when the session is dead and the loop should open a new one (the application's "new
// handle" after expiry).
bool session_over(const sim::Client& c) {
  return c.state() == zk::SessionState::kExpired || c.state() == zk::SessionState::kClosed;
}

// One client's loop. Errors are expected under faults: they are counted, not fatal.
zk::Task<void> churn(sim::Client* c, uint32_t rounds, Tally* tally) {
  for (uint32_t attempt = 0; attempt < 8; ++attempt) {
    zk::Result<zk::Created> dir = co_await c->create(kDir, "", zk::CreateMode::kPersistent);
    if (dir.ok() || dir.error == zk::Error::kNodeExists) break;
    tally->errors[dir.error]++;
    if (session_over(*c)) c->reopen();
  }
  const std::string prefix = std::string(kDir) + "/n-";
  for (uint32_t r = 0; r < rounds; ++r) {
    if (session_over(*c)) c->reopen();
    zk::Result<zk::Created> made =
        co_await c->create(prefix, c->name(), zk::CreateMode::kEphemeralSequential);
    if (!made.ok()) {
      tally->errors[made.error]++;
      continue;
    }
    zk::Result<zk::Children> kids = co_await c->get_children(kDir);
    if (!kids.ok()) tally->errors[kids.error]++;
    zk::Status gone = co_await c->remove(made.value.path);
    if (!gone.ok()) tally->errors[gone.error]++;
  }
}

struct RunResult {
  uint64_t hash = 0;
  uint64_t events = 0;
  uint64_t requests = 0;
  uint64_t fault_events = 0;
  std::vector<sim::Decision> decisions;
  std::vector<std::string> orphans;  // ephemeral nodes whose session the server no longer holds
  Tally tally;
};

RunResult run_once(const Scenario& s, uint64_t seed, uint32_t rounds,
                   std::unique_ptr<sim::Strategy> strategy) {
  RunResult out;
  sim::WorldOptions wo;
  wo.seed = seed;
  wo.servers = s.servers;
  sim::World world(wo, std::move(strategy));
  for (uint32_t i = 0; i < s.clients; ++i) {
    sim::ClientOptions co;
    co.local_session_expiry = s.local_session_expiry;
    sim::Client& c = world.add_client(co);
    c.spawn(churn(&c, rounds, &out.tally), "loop");  // by name, so kCancel finds it
  }
  for (const Fault& f : s.faults) world.inject(f);
  world.run_until(kRunEnd);

  out.hash = world.log().hash();
  out.events = world.log().size();
  out.requests = world.requests_total();
  out.decisions = world.decisions();
  for (const sim::LoggedEvent& e : world.log().events()) {
    if (e.kind == "fault") out.fault_events++;
  }
  if (std::optional<sim::NodeView> dir = world.node(kDir)) {
    for (const std::string& child : dir->children) {
      std::optional<sim::NodeView> n = world.node(std::string(kDir) + "/" + child);
      if (n && n->stat.ephemeral_owner.valid() && !world.session_alive(n->stat.ephemeral_owner)) {
        out.orphans.push_back(n->path);
      }
    }
  }
  return out;
}

// printf into `out`: the table's fixed-width rows.
template <class... T>
void print(std::ostream& out, const char* format, T... values) {
  char line[512];
  std::snprintf(line, sizeof line, format, values...);
  out << line;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

std::string error_summary(const Tally& t) {
  std::string s;
  for (const auto& [e, n] : t.errors) {
    if (!s.empty()) s += " ";
    s += std::string(zk::error_name(e)) + "x" + std::to_string(n);
  }
  return s.empty() ? "-" : s;
}

const char* verdict(bool ok) { return ok ? "yes" : "NO"; }

// Runs one scenario four ways, prints its row (and what went wrong), returns whether it passed.
bool check_scenario(const Scenario& s, uint64_t seed, uint32_t rounds, std::ostream& out) {
  const uint64_t other_seed = seed + 1000003;
  RunResult a = run_once(s, seed, rounds, sim::make_random_strategy(seed));
  RunResult b = run_once(s, seed, rounds, sim::make_random_strategy(seed));
  RunResult r = run_once(s, seed, rounds, sim::make_replay_strategy(a.decisions));
  RunResult other = run_once(s, other_seed, rounds, sim::make_random_strategy(other_seed));
  const bool same = a.hash == b.hash && a.events == b.events && a.decisions == b.decisions;
  const bool replay = r.hash == a.hash && r.events == a.events;
  const bool seed_matters = other.hash != a.hash;
  const bool faults_logged = a.fault_events >= s.faults.size();
  std::vector<zk::Error> unseen;
  for (zk::Error e : s.must_see) {
    if (a.tally.errors.count(e) == 0) unseen.push_back(e);
  }
  print(out, "%-17s %5" PRIu64 " %3u %3u %2" PRIu64 "/%-3zu %7" PRIu64 " %6" PRIu64
              "  %-16s %4s %6s %5s %7zu  %s\n",
              s.name, seed, s.servers, s.clients, a.fault_events, s.faults.size(), a.events,
              a.requests, hex(a.hash).c_str(), verdict(same), verdict(replay),
              verdict(seed_matters), a.orphans.size(), error_summary(a.tally).c_str());
  for (const std::string& o : a.orphans) print(out, "    orphan ephemeral node: %s\n", o.c_str());
  if (!faults_logged) {
    print(out, "    only %" PRIu64 " of %zu injected faults appear in the event log\n",
                a.fault_events, s.faults.size());
  }
  for (zk::Error e : unseen) {
    print(out, "    the fault plan should have made a client see %s; none did\n",
                zk::error_name(e));
  }
  return same && replay && seed_matters && faults_logged && unseen.empty() && a.orphans.empty();
}

int self_check(uint64_t base, uint32_t rounds, std::ostream& out) {
  out << "lockstep selfcheck: SIMULATOR SELF-CHECK — no recipe is checked here ("
               "`lockstep check` runs the property suite).\n"
            << "It runs each scenario twice with one seed and once replaying the recorded "
               "decisions; all three event logs must hash the same.\n"
            << "seed " << base << " (scenario i uses seed " << base << "+i), rounds " << rounds
            << " per client, virtual run " << zk::to_string(kRunEnd - Time{}) << "\n\n";
  print(out, "%-17s %5s %3s %3s %6s %7s %6s  %-16s %4s %6s %5s %7s  %s\n", "scenario", "seed",
              "srv", "cli", "faults", "events", "reqs", "event-log hash", "same", "replay", "seed+",
              "orphans", "errors clients saw");
  const std::vector<Scenario> all = scenarios();
  size_t failures = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (!check_scenario(all[i], base + i, rounds, out)) failures++;
  }
  out << "\ncolumns: faults = fault events logged / injected; same = identical hash, size "
               "and decisions on a second run; replay = identical hash replaying the decisions; "
               "seed+ = another seed gives another log; orphans = ephemeral nodes of dead "
               "sessions; each fault plan must also make clients see the errors it causes.\n";
  if (failures == 0) {
    out << "self-check passed: " << all.size()
              << " scenarios deterministic, replayable and fault-exercised (seed " << base
              << ").\n";
    return kExitOk;
  }
  out << "self-check FAILED: " << failures << " of " << all.size()
            << " scenarios. Reproduce: lockstep selfcheck --seed " << base << " --rounds " << rounds
            << "\n";
  return kExitFailure;
}

int run_selfcheck(const Command& self, const Args& args, const Io& io) {
  std::optional<uint64_t> base = parse_uint_flag(self, args, "seed", 1, 0, UINT64_MAX / 2, io.err);
  std::optional<uint64_t> rounds = parse_uint_flag(self, args, "rounds", 20, 1, 10000, io.err);
  if (!base || !rounds) return kExitUsage;
  return self_check(*base, static_cast<uint32_t>(*rounds), io.out);
}

}  // namespace

const Command kSelfCheckCommand = {
    .name = "selfcheck",
    .summary =
        "Self-check of the simulator: seeded fault scenarios, run twice and replayed, "
        "must give identical event logs.",
    .positional = "",
    .flags = {{"seed", "N", "base seed; scenario i uses seed N+i (default 1)"},
              {"rounds", "N", "create/get-children/delete rounds per client (default 20)"}},
    .run = run_selfcheck,
    .details =
        "exit: 0 every scenario deterministic, replayable and fault-exercised, 1 otherwise,\n"
        "      2 usage error\n",
};

}  // namespace lockstep::cli
