// `lockstep conformance`: the differential tester (fidelity/differential.h). Random operation
// sequences run one operation at a time on the simulator and on Debian's ZooKeeper server
// (started here on 127.0.0.1 and stopped by pid at the end); every outcome is compared through
// fidelity/compare.h's list of the server's freedoms. Exit 0 when nothing differs, 1 on any
// mismatch, 2 for a usage error, 3 when the server cannot be started (java or the zookeeper
// package missing), as `check --real`.
#include <unistd.h>

#include <iostream>

#include "cli/cli.h"
#ifdef LOCKSTEP_HAVE_FIDELITY
#include "fidelity/differential.h"
#endif

namespace lockstep::cli {
namespace {

constexpr int kExitNoServer = 3;

int run_conformance(const Command& self, const Args& args) {
  std::optional<uint64_t> sequences = parse_uint_flag(self, args, "sequences", 20, 1, 1000000);
  std::optional<uint64_t> seed = parse_uint_flag(self, args, "seed", 1, 0, UINT64_MAX / 2);
  std::optional<uint64_t> ops = parse_uint_flag(self, args, "ops", 30, 1, 10000);
  if (!sequences || !seed || !ops) return kExitUsage;
#ifdef LOCKSTEP_HAVE_FIDELITY
  fidelity::Options o;
  o.sequences = *sequences;
  o.seed = *seed;
  o.ops = *ops;
  o.faults = !args.has("no-faults");
  o.servers = args.has("ensemble") ? 3 : 1;
  if (args.has("verbose")) o.each_op = [](const std::string& line) { std::cout << line << "\n"; };
  std::cout << "conformance: " << o.sequences << " sequences of " << o.ops << " operations"
            << (o.faults ? " with faults" : "") << ", seeds " << o.seed << ".."
            << o.seed + o.sequences - 1 << ", simulator vs. "
            << (o.servers == 1 ? "a standalone ZooKeeper server" : "a 3-server ZooKeeper ensemble")
            << "\n"
            << std::flush;
  const bool tty = isatty(STDERR_FILENO) != 0;
  fidelity::Report r = fidelity::run_differential(o, [&](uint64_t done) {
    if (tty) std::cerr << "\r" << done << "/" << o.sequences << " sequences" << std::flush;
  });
  if (tty) std::cerr << "\r\033[K";
  if (!r.server_error.empty()) {
    std::cerr << "lockstep conformance: could not start the ZooKeeper server: " << r.server_error
              << "\n";
    return kExitNoServer;
  }
  if (!r.setup_error.empty()) {
    std::cerr << "lockstep conformance: the real side could not run as asked: " << r.setup_error
              << "\n";
    return kExitNoServer;
  }
  std::cout << "server: pid " << r.server_pid << " on " << r.server_address << " (stopped)\n"
            << "sequences: " << r.sequences << "\n"
            << "operations: " << r.operations << " (" << r.faults << " of them faults)\n"
            << "mismatches: " << r.mismatched_ops << " operations in " << r.mismatched_sequences
            << " sequences\n";
  for (const auto& [kind, count] : r.by_kind) std::cout << "  " << kind << ": " << count << "\n";
  if (r.timed_ops > 0) {
    std::cout << "timing: " << r.timed_ops << " timed operations; largest |sim - real| by event:";
    for (const auto& [name, ms] : r.skew_ms) std::cout << " " << name << " " << ms << "ms";
    std::cout << " (tolerance " << fidelity::kTimingToleranceMs << "ms)\n";
  }
  for (const fidelity::Mismatch& m : r.shown) {
    std::cout << "mismatch: seed " << m.sequence_seed << " op #" << m.op_index << " " << m.op
              << " [" << m.kinds << "]\n"
              << "  sim:  " << m.sim << "\n"
              << "  real: " << m.real << "\n"
              << "  rerun: lockstep conformance --sequences 1 --seed " << m.sequence_seed
              << " --ops " << o.ops << (o.faults ? "" : " --no-faults")
              << (o.servers == 1 ? "" : " --ensemble") << "\n";
  }
  return r.mismatched_sequences == 0 ? kExitOk : kExitFailure;
#else
  std::cerr << "lockstep conformance: needs the real ZooKeeper client, which this build leaves "
               "out (configured with -DLOCKSTEP_REAL=OFF or without libzookeeper-mt-dev)\n";
  return kExitFailure;
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
              {"verbose", "", "print every operation with both outcomes"}},
    .run = run_conformance,
};

}  // namespace lockstep::cli
