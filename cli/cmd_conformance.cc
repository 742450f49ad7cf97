// `lockstep conformance`: the differential tester (fidelity/differential.h). Random operation
// sequences run one operation at a time on the simulator and on Debian's ZooKeeper server
// (started here on 127.0.0.1 and stopped by pid at the end); every outcome is compared through
// fidelity/compare.h's list of the server's freedoms. Exit (cli/cli.h) 0 when nothing differs,
// 1 on any mismatch, 2 for a usage error, 3 when the server cannot be started (java or the
// server's jar missing), as `check --real`, 130 when interrupted (Ctrl-C, SIGTERM, SIGHUP:
// the figures cover the sequences compared, and the command that goes on is printed). On a
// terminal a progress line is kept on stderr; off a terminal nothing is drawn.
#include <algorithm>
#include <ostream>
#include <string>

#include "cli/cli.h"
#ifdef LOCKSTEP_HAVE_FIDELITY
#include "fidelity/cases.h"
#include "fidelity/differential.h"
#include "properties/host_progress.h"
#endif

namespace lockstep::cli {
namespace {

#ifdef LOCKSTEP_HAVE_FIDELITY
// --cases: every saved case on the simulator and (unless --sim-only) the real server.
int run_saved_cases(const Args& args, const std::string& dir, const Io& io) {
  std::vector<fidelity::Case> cases;
  std::string error;
  if (!fidelity::load_cases(dir, &cases, &error)) {
    io.err << "lockstep conformance: " << error << "\n";
    return kExitUsage;
  }
  if (cases.empty()) {
    io.err << "lockstep conformance: no saved cases in " << dir
              << " (save one with --record NAME, or point --cases-dir at a folder of them)\n";
    return kExitUsage;
  }
  const bool with_real = !args.has("sim-only");
  fidelity::CasesReport r = fidelity::run_cases(cases, with_real);
  if (!r.server_error.empty()) {
    io.err << "lockstep conformance: could not start the ZooKeeper server: " << r.server_error
              << "\n";
    return kExitNoServer;
  }
  size_t failed = 0;
  for (const auto& [name, run] : r.runs) {
    const bool ok = run.sim.empty() && run.real.empty();
    failed += ok ? 0 : 1;
    io.out << (ok ? "ok    " : "DIFF  ") << name << " (simulator"
           << (run.real_ran ? " and real server" : "") << " against the recorded answers)"
           << (run.reruns.empty() ? std::string()
                                  : ", real run again " + std::to_string(run.reruns.size()) +
                                        "x (disturbed by a loaded machine)")
           << "\n";
    for (const std::string& why : run.reruns) io.out << "  rerun:     " << why << "\n";
    for (const std::string& d : run.sim) io.out << "  simulator: " << d << "\n";
    for (const std::string& d : run.real) io.out << "  real:      " << d << "\n";
  }
  io.out << r.runs.size() << " cases from " << dir << ", " << failed << " differ\n";
  return failed == 0 ? kExitOk : kExitFailure;
}
#endif

int run_conformance(const Command& self, const Args& args, const Io& io) {
  std::optional<uint64_t> sequences = parse_uint_flag(self, args, "sequences", 20, 1, 1000000, io.err);
  std::optional<uint64_t> seed = parse_uint_flag(self, args, "seed", 1, 0, UINT64_MAX / 2, io.err);
  std::optional<uint64_t> ops = parse_uint_flag(self, args, "ops", 30, 1, 10000, io.err);
  if (!sequences || !seed || !ops) return kExitUsage;
  const std::string dir = args.get("cases-dir", "fidelity/cases");
  if (args.has("record") && args.has("cases")) {
    return usage_error(self, "--record and --cases do different things: give one of them", io.err);
  }
  if (args.has("sim-only") && !args.has("cases")) {
    return usage_error(self, "--sim-only goes with --cases", io.err);
  }
  if (args.has("note") && !args.has("record"))
    return usage_error(self, "--note goes with --record", io.err);
#ifdef LOCKSTEP_HAVE_FIDELITY
  if (args.has("cases")) return run_saved_cases(args, dir, io);
  fidelity::Options o;
  o.sequences = *sequences;
  o.seed = *seed;
  o.ops = *ops;
  o.faults = !args.has("no-faults");
  o.servers = args.has("ensemble") ? 3 : 1;
  if (args.has("verbose")) o.each_op = [&io](const std::string& line) { io.out << line << "\n"; };
  o.cases_dir = args.has("no-save") ? "" : dir;
  if (args.has("record")) {
    const std::string name = args.get("record", "");
    if (!fidelity::case_name_ok(name)) {
      return usage_error(self,
                         "--record NAME: a case name is 1-100 letters, digits, '-', '_' or "
                         "'.' (it becomes the file NAME.json)", io.err);
    }
    if (fidelity::free_case_name(dir, name) != name) {
      return usage_error(self, "--record " + name + ": " + dir + "/" + name +
                                   ".json exists and a saved case is not overwritten (choose "
                                   "another name, or delete the file if it is no longer wanted)", io.err);
    }
    fidelity::RecordResult r = fidelity::record_case(o, name, args.get("note", ""));
    if (!r.server_error.empty()) {
      io.err << "lockstep conformance: could not start the ZooKeeper server: " << r.server_error
                << "\n";
      return kExitNoServer;
    }
    if (r.path.empty()) {
      io.err << "lockstep conformance: case " << name << " not saved: " << r.error << "\n";
      return kExitFailure;
    }
    io.out << "saved " << r.path << " (" << o.ops << " operations, the real server's answers)\n";
    for (const std::string& d : r.sim_differences)
      io.out << "  simulator differs: " << d << "\n";
    return r.sim_differences.empty() ? kExitOk : kExitFailure;
  }
  io.out << "conformance: " << o.sequences << " sequences of " << o.ops << " operations"
            << (o.faults ? " with faults" : "") << ", seeds " << o.seed << ".."
            << o.seed + o.sequences - 1 << ", simulator vs. "
            << (o.servers == 1 ? "a standalone ZooKeeper server" : "a 3-server ZooKeeper ensemble")
            << "\n"
            << std::flush;
  // A Ctrl-C (SIGINT, SIGTERM, SIGHUP) stops after the sequence in progress, which is dropped:
  // the signal may have reached the server too. On a terminal a progress line is kept.
  const properties::StopSignals signals;
  fidelity::Report r;
  {
    properties::ProgressLine line(io.interactive ? &io.err : nullptr);
    r = fidelity::run_differential(o, [&](uint64_t done) {
      if (line.due()) {
        const double rate = line.rate(done);
        line.update("  conformance: " + std::to_string(done) + " of " +
                    std::to_string(o.sequences) + " sequences compared, ETA " +
                    (rate > 0 ? properties::human_seconds(
                                    static_cast<double>(o.sequences - done) / rate)
                              : std::string("?")));
      }
      return !properties::StopSignals::stopped();
    });
  }  // the line is wiped before the report
  if (properties::StopSignals::stopped() && r.sequences == 0 && !r.stopped) {
    io.err << "lockstep conformance: interrupted (" << properties::StopSignals::signal_name()
           << ") before a sequence was compared\n";
    return kExitInterrupted;
  }
  if (!r.server_error.empty()) {
    io.err << "lockstep conformance: could not start the ZooKeeper server: " << r.server_error
              << "\n";
    return kExitNoServer;
  }
  if (!r.setup_error.empty() && !r.stopped) {
    io.err << "lockstep conformance: the real side could not run as asked: " << r.setup_error
              << "\n";
    return kExitNoServer;
  }
  io.out << "server: pid " << r.server_pid << " on " << r.server_address << " (stopped)\n"
            << "sequences: " << r.sequences << "\n"
            << "operations: " << r.operations << " (" << r.faults << " of them faults)\n"
            << "mismatches: " << r.mismatched_ops << " operations in " << r.mismatched_sequences
            << " sequences\n";
  for (const auto& [kind, count] : r.by_kind) io.out << "  " << kind << ": " << count << "\n";
  if (!r.reruns.empty()) {
    io.out << "reruns: " << r.reruns.size()
           << " (a real session dropped its connection where the simulator's did not, or the "
              "real run stopped short; the sequence ran again on both sides; a loaded machine "
              "does this)\n";
    for (const std::string& why : r.reruns) io.out << "  rerun: " << why << "\n";
  }
  if (r.timed_ops > 0) {
    io.out << "timing: " << r.timed_ops << " timed operations; largest |sim - real| by event:";
    for (const auto& [name, ms] : r.skew_ms) io.out << " " << name << " " << ms << "ms";
    io.out << " (tolerance " << fidelity::kTimingToleranceMs << "ms)\n";
  }
  for (const fidelity::Mismatch& m : r.shown) {
    io.out << "mismatch: seed " << m.sequence_seed << " op #" << m.op_index << " " << m.op
              << " [" << m.kinds << "]\n"
              << "  sim:  " << m.sim << "\n"
              << "  real: " << m.real << "\n"
              << "  rerun: lockstep conformance --sequences 1 --seed " << m.sequence_seed
              << " --ops " << o.ops << (o.faults ? "" : " --no-faults")
              << (o.servers == 1 ? "" : " --ensemble") << "\n";
  }
  for (const std::string& path : r.saved) io.out << "saved case: " << path << "\n";
  for (const std::string& why : r.not_saved) io.out << "not saved: " << why << "\n";
  if (!r.saved.empty()) {
    io.out << "  rerun them: lockstep conformance --cases --cases-dir " << dir << "\n";
  }
  if (r.stopped) {
    io.out << "INTERRUPTED (" << properties::StopSignals::signal_name() << "): the server was "
           << "stopped; the figures above cover the " << r.sequences << " sequences compared"
           << (r.sequences > 0 ? " (seeds " + std::to_string(o.seed) + ".." +
                                     std::to_string(o.seed + r.sequences - 1) + ")"
                               : std::string())
           << "; the one in progress was dropped\n  go on: lockstep conformance --seed "
           << o.seed + r.sequences << " --sequences " << o.sequences - r.sequences << " --ops "
           << o.ops << (o.faults ? "" : " --no-faults") << (o.servers == 1 ? "" : " --ensemble")
           << "\n";
    return kExitInterrupted;
  }
  return r.mismatched_sequences == 0 ? kExitOk : kExitFailure;
#else
  io.err << "lockstep conformance: needs the real ZooKeeper client, which this build leaves "
               "out (the installed lockstep::cli library, or a build configured with "
               "-DLOCKSTEP_REAL=OFF or without libzookeeper-mt-dev)\n";
  return kExitNoServer;
#endif
}

}  // namespace

const Command kConformanceCommand = {
    .name = "conformance",
    .summary =
        "Differential test: random operation sequences on the simulator and on a real "
        "ZooKeeper server, compared reply by reply.",
    .positional = "",
    .flags = {{"sequences", "N", "number of sequences (default 20)"},
              {"seed", "S", "sequence i uses seed S+i (default 1)"},
              {"ops", "K", "operations per sequence (default 30)"},
              {"ensemble", "", "a 3-server ensemble instead of one standalone server"},
              {"no-faults", "", "sequences without fault operations"},
              {"verbose", "", "print every operation with both outcomes"},
              {"cases-dir", "DIR",
               "where mismatches are saved as cases, and --cases reads (default fidelity/cases)"},
              {"no-save", "", "do not shrink and save mismatching sequences"},
              {"record", "NAME",
               "save sequence --seed (--ops K) with the server's answers as a case"},
              {"note", "TEXT", "with --record: what the case pins"},
              {"cases", "", "run every saved case on the simulator and the real server"},
              {"sim-only", "", "with --cases: the simulator only (no server needed)"}},
    .run = run_conformance,
    .details =
        "exit: 0 nothing differs, 1 a mismatch, 2 usage error, 3 no server can be started,\n"
        "      130 interrupted (Ctrl-C, SIGTERM, SIGHUP: what was compared is reported, with the\n"
        "      command that goes on)\n"
        "On a terminal a progress line (sequences compared, ETA) is kept on stderr.\n",
};

}  // namespace lockstep::cli
