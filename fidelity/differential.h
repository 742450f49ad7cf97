// lockstep fidelity: the differential tester (issue 18, first step).
//
// run_differential() starts Debian's ZooKeeper server (one standalone server on 127.0.0.1,
// real/server.h), then for each of `sequences` sequences (sequence i uses seed `seed + i`, so
// `--seed S --sequences 1` reruns one) generates `ops` operations (sequence.h), runs them on a
// fresh sim::World and on two fresh sessions of the real server under the same fresh root
// ("/ls<seed>"), normalizes every outcome (compare.h, the one list of the server's freedoms) and
// compares them operation by operation. The server is stopped (by pid, Cluster's destructor)
// before it returns. An engine: it prints nothing and returns a Report; cli/cmd_conformance.cc
// talks to people.
//
// Not yet (issue 18, next steps): faults, shrinking, saving cases, the 3-server ensemble.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fidelity/compare.h"
#include "fidelity/runner.h"
#include "fidelity/sequence.h"

namespace lockstep::real {
class Cluster;
}

namespace lockstep::fidelity {

struct Options {
  uint64_t sequences = 20;
  uint64_t seed = 1;
  uint64_t ops = 30;
  bool faults = true;  // fault operations in the sequences (sequence.h)
  int servers = 1;     // 1: a standalone server; 3: an ensemble
  size_t shown = 5;    // mismatches kept in full (the first ones found)
  // When set, called once per compared operation with a line "seed op# op | sim | real".
  std::function<void(const std::string&)> each_op;
  // Where a mismatching sequence, shrunk (shrink.h), is saved as a case (cases.h); "" saves
  // none. At most `shrink_max` sequences are shrunk (each shrink runs both backends up to 150
  // times).
  std::string cases_dir;
  size_t shrink_max = 3;
};

struct Mismatch {
  uint64_t sequence_seed = 0;
  size_t op_index = 0;
  std::string op;     // to_string(Op)
  std::string kinds;  // "error,stat"
  std::string sim;    // to_string(Normalized)
  std::string real;
};

struct Report {
  std::string server_error;  // non-empty: the server could not be started (nothing ran)
  int server_pid = 0;
  std::string server_address;
  uint64_t sequences = 0;       // compared: seeds options.seed .. options.seed + sequences - 1
  bool stopped = false;         // keep_going stopped the run before options.sequences
  std::string setup_error;      // non-empty: a proxy or a server restart failed (runs invalid)
  uint64_t operations = 0;      // operations compared
  uint64_t faults = 0;          // fault operations among them
  uint64_t mismatched_ops = 0;  // operations whose normalized outcomes differ
  uint64_t mismatched_sequences = 0;
  std::map<std::string, uint64_t> by_kind;  // field name (or "incomplete") -> operations
  // Timed operations (compare.h, freedom 7): how many were compared, and the largest
  // |sim - real| event time seen, by event name.
  uint64_t timed_ops = 0;
  std::map<std::string, int64_t> skew_ms;
  std::vector<Mismatch> shown;
  // Each run again because the real run was disturbed (disturbance() below): "<root>: why".
  std::vector<std::string> reruns;
  std::vector<std::string> saved;      // "path (N operations)" of every case saved
  std::vector<std::string> not_saved;  // why a mismatching sequence was not saved
};

struct Case;

// `lockstep conformance --record NAME`: runs sequence `options.seed` on the real server and
// saves it, with the server's answers, as case NAME in options.cases_dir.
struct RecordResult {
  std::string server_error;
  std::string error;
  std::string path;                          // the saved case
  std::vector<std::string> sim_differences;  // the simulator against the recorded answers
};
RecordResult record_case(const Options& options, const std::string& name, const std::string& note);

// A saved case run on the simulator (always) and on a real server (when given), each against
// the case's recorded answers (cases.h check_case). Its root is /lsc-<name> (/lsc-<name>-rN for
// a rerun of a disturbed real run): run a case at most once per server.
struct CaseRun {
  std::vector<std::string> sim;
  std::vector<std::string> real;
  bool real_ran = false;
  // Real runs disturbed by the machine and run again: "<root>: why" (disturbance()).
  std::vector<std::string> reruns;
};
CaseRun run_case(const Case& c, real::Cluster* cluster, uint64_t seed);

struct CasesReport {
  std::string server_error;
  std::vector<std::pair<std::string, CaseRun>> runs;  // by case name, in the given order
};
// Every case on the simulator and, with `with_real`, on a harness-started server of the case's
// size (one standalone server and one ensemble at most, started on first use).
CasesReport run_cases(const std::vector<Case>& cases, bool with_real);

// `keep_going(done)` (may be empty) is called after each sequence has run on both sides and
// before it is compared, with the number of sequences compared so far. Returning false stops the
// run there (a Ctrl-C: it may have hit the server in the middle of that sequence): that sequence
// is neither compared nor counted, and Report::stopped is set.
Report run_differential(const Options& options,
                        const std::function<bool(uint64_t done)>& keep_going = {});

// A real run disturbed by its machine: at some operation a slot's session reported a disconnect
// (its subscription's kConnecting) on the real server and not on the simulator. No operation of
// a sequence makes a server drop a connection without the simulator dropping it too; a loaded
// machine does (a JVM or the client thread stalled past 2/3 of the 2 s session timeout, and the
// C client gave the connection up). So is a real run that stopped short where the simulator's
// finished: its sessions did not connect within the driver's limit, or its body ran past the
// run's (seen once in CI: a saved ensemble case gave 0 of its 14 operations and was not rerun).
// run_differential() runs such a sequence again, both sides, under a fresh root, up to
// kDisturbedReruns times, and counts the reruns; a difference every rerun shows is a mismatch like
// any other (a disconnect only the simulator shows never causes a rerun).
constexpr int kDisturbedReruns = 3;
bool disturbed(const RunResult& sim, const RunResult& real);
// Why a real run is disturbed (which slot dropped at which operation, or how the real run
// stopped short), or "" when it is not: what a report says of each rerun.
std::string disturbance(const RunResult& sim, const RunResult& real);

// The simulator side alone (for tests of the tester itself): a fresh World seeded `seed`.
RunResult run_on_sim(const Sequence& seq, const std::string& root, uint64_t seed, int servers = 1);

// Compares two runs of `seq` and adds the result to `report` (sequences, operations,
// mismatches). Returns the index of the first operation that differs (the number compared when
// only the completion differs), or nothing. Exposed so that two simulator runs can be compared
// in a unit test.
std::optional<size_t> compare_runs(const Sequence& seq, const std::string& root,
                                   uint64_t sequence_seed, const RunResult& sim,
                                   const RunResult& real, size_t shown, Report* report,
                                   const std::function<void(const std::string&)>& each_op = {});

}  // namespace lockstep::fidelity
