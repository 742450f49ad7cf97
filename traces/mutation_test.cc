// Hand-edited traces: every numeric field of a corpus trace, set to 0, -1, 2^31, 2^63 (and, for a
// client or server index, one past the scenario's count), is either refused before anything runs
// (exit 2, the message naming the field) or replayed, shown and rechecked to an ordinary verdict —
// never a signal, a runaway allocation or a hang. Each mutant runs in a forked child with a memory
// and a CPU limit, so a crash fails one case instead of killing the test.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "traces/test_util.h"
#include "traces/trace.h"

namespace lockstep::traces {
namespace {

using Json = nlohmann::ordered_json;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

const std::string kCorpusDir = std::string(LOCKSTEP_SOURCE_DIR) + "/traces/corpus";

struct NumericField {
  Json::json_pointer pointer;
  std::string path;  // as load errors name it: "scenario.faults[0].client", "decisions[3][1]"
  std::string key;   // the member name, or "" for an array element
};

void collect(const Json& j, const Json::json_pointer& pointer, const std::string& path,
             const std::string& key, std::vector<NumericField>* out) {
  if (j.is_number()) {
    out->push_back({pointer, path, key});
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      collect(it.value(), pointer / it.key(), path.empty() ? it.key() : path + "." + it.key(),
              it.key(), out);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      collect(j[i], pointer / i, path + "[" + std::to_string(i) + "]", "", out);
    }
  }
}

struct Mutant {
  const NumericField* field;
  Json value;
  std::string what;  // "broken_no-relist.json: scenario.seed = 0"
  bool recheck;      // a scenario field: also run the scenario afresh
};

// The exit code of `lockstep COMMAND PATH`.
int run_main(const char* command, const std::string& path) {
  return testing::run_command(command, {path}).code;
}

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

// What a child reported: a line per mutant, "I replay R show S [recheck C]", preceded by
// "begin I" (so a crash names the mutant it was running), and how the child ended.
struct ChildReport {
  bool signalled = false;
  int signal = 0;
  int status = -1;
  std::string lines;
};

// Forks a child that limits itself to 2 GiB of address space and 60 s of CPU and, for each
// mutant of `batch`, writes the mutated document to `path` and runs `replay`, `show` and (for a
// scenario field) `recheck` on it, reporting each status. (Loading alone is pure and allocates in
// proportion to the file, not to the values in it, so the parent checks refusals in-process and
// forks only for what runs; a batch per child keeps forks few.)
ChildReport run_batch_in_child(const Json& original, const std::vector<Mutant>& batch,
                               size_t first, size_t count, const std::string& path) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
#if !defined(__SANITIZE_ADDRESS__)
    const rlimit memory{2ull << 30, 2ull << 30};
    ::setrlimit(RLIMIT_AS, &memory);
#endif
    const rlimit cpu{60, 60};
    ::setrlimit(RLIMIT_CPU, &cpu);
    for (size_t i = first; i < first + count; ++i) {
      const Mutant& m = batch[i];
      write_all(fds[1], "begin " + std::to_string(i) + "\n");
      Json doc = original;
      doc[m.field->pointer] = m.value;
      write_file(path, doc.dump());
      std::string line = std::to_string(i) + " replay " +
                         std::to_string(run_main("replay", path)) + " show " +
                         std::to_string(run_main("show", path));
      if (m.recheck) line += " recheck " + std::to_string(run_main("recheck", path));
      write_all(fds[1], line + "\n");
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  ChildReport r;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    r.lines.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.signalled = WIFSIGNALED(status);
  r.signal = r.signalled ? WTERMSIG(status) : 0;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The index of the last "begin I" line of a report (the mutant a dead child was running).
size_t last_begun(const std::string& lines) {
  const size_t at = lines.rfind("begin ");
  return at == std::string::npos ? 0 : std::stoul(lines.substr(at + 6));
}

// The values a field is set to: the four of the brief, and an index one past the scenario's
// count for the fields that index clients or servers.
std::vector<Json> mutations(const NumericField& f, const Json& doc) {
  std::vector<Json> out = {Json(0), Json(-1), Json(uint64_t{1} << 31), Json(uint64_t{1} << 63)};
  const uint32_t clients = doc["scenario"]["workload"]["clients"].get<uint32_t>();
  const uint32_t servers = doc["scenario"]["servers"].get<uint32_t>();
  const bool event_client = f.path.rfind("event_log.events[", 0) == 0 && f.path.ends_with("[1]");
  if (f.key == "client" || event_client) out.push_back(Json(clients + 1));
  if (f.key == "server") out.push_back(Json(servers + 1));
  if (f.key == "clients") out.push_back(Json(kMaxClients + 1));
  if (f.key == "servers") out.push_back(Json(2));
  return out;
}

// Mutates every numeric field whose path starts with `prefix` ("" = all of them).
void mutate_numeric_fields(const std::string& corpus_file, const std::string& prefix) {
  const Json original = Json::parse(read_file(kCorpusDir + "/" + corpus_file));
  std::vector<NumericField> fields;
  collect(original, Json::json_pointer(), "", "", &fields);
  ASSERT_GT(fields.size(), 100u) << "the walk found too few numeric fields in " << corpus_file;
  TempDir dir;
  const std::string path = dir.file("mutant.json");
  size_t refused = 0;
  std::vector<Mutant> accepted;
  for (const NumericField& f : fields) {
    if (f.path.rfind(prefix, 0) != 0) continue;
    for (const Json& value : mutations(f, original)) {
      Json doc = original;
      doc[f.pointer] = value;
      const std::string what = corpus_file + ": " + f.path + " = " + value.dump();
      LoadError error;
      if (parse_trace(doc.dump(), path, &error)) {
        const bool in_scenario = f.path.rfind("scenario.", 0) == 0 || f.path == "seed";
        accepted.push_back({&f, value, what, in_scenario});
        continue;
      }
      ++refused;
      EXPECT_EQ(error.problem, LoadProblem::kBadInput) << what << ": " << error.message;
      EXPECT_NE(error.message.find(f.path), std::string::npos)
          << what << " was refused without naming the field: " << error.message;
    }
  }
  // What loads must run to an ordinary end: replay reproduces (0) or names a divergence (3), show
  // prints (0), recheck passes (0) or fails (1).
  constexpr size_t kBatch = 250;
  for (size_t first = 0; first < accepted.size(); first += kBatch) {
    const size_t count = std::min(kBatch, accepted.size() - first);
    const ChildReport r = run_batch_in_child(original, accepted, first, count, path);
    ASSERT_TRUE(!r.signalled && r.status == 0)
        << accepted[last_begun(r.lines)].what << " killed the child (signal " << r.signal
        << ", status " << r.status << ")";
    std::istringstream lines(r.lines);
    std::string word;
    size_t reported = 0;
    while (lines >> word) {
      if (word == "begin") {
        lines >> word;
        continue;
      }
      const Mutant& m = accepted[std::stoul(word)];
      int replay = -1;
      int show = -1;
      int recheck = 0;
      lines >> word >> replay >> word >> show;
      if (m.recheck) lines >> word >> recheck;
      ++reported;
      EXPECT_TRUE(replay == cli::kExitOk || replay == cli::kExitDiverged) << m.what << ": replay " << replay;
      EXPECT_EQ(show, cli::kExitOk) << m.what;
      EXPECT_TRUE(recheck == cli::kExitOk || recheck == cli::kExitFailure) << m.what << ": recheck "
                                                                    << recheck;
    }
    EXPECT_EQ(reported, count);
  }
  const size_t ran = accepted.size();
  // Both outcomes occur: some values are refused, some run (0 is a valid time, index or count).
  EXPECT_GT(refused, 0u);
  EXPECT_GT(ran, 0u);
  std::printf("%s: %zu numeric fields, %zu mutants refused, %zu ran\n", corpus_file.c_str(),
              fields.size(), refused, ran);
}

TEST(TraceMutation, EveryNumericFieldOfACorpusTraceIsRefusedOrRunsCleanly) {
  mutate_numeric_fields("broken_no-relist.json", "");
}

// The scenario of a trace with a sequence start near the signed wrap and an abandon fault.
TEST(TraceMutation, SequenceStartAndFaultFieldsAreRefusedOrRunCleanly) {
  mutate_numeric_fields("broken_ignores-expiry.json", "scenario.");
}

// The message names the field and says what the scenario allows (the brief's example).
TEST(TraceMutation, AFaultClientOutOfRangeNamesTheFieldAndTheCount) {
  Json doc = Json::parse(read_file(kCorpusDir + "/broken_no-relist.json"));
  doc["scenario"]["faults"][0]["client"] = 99;
  LoadError e;
  EXPECT_FALSE(parse_trace(doc.dump(), "T.json", &e).has_value());
  EXPECT_EQ(e.problem, LoadProblem::kBadInput);
  EXPECT_NE(e.message.find("T.json"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("scenario.faults[0].client is 99, but the scenario has 5 clients"),
            std::string::npos)
      << e.message;
  doc = Json::parse(read_file(kCorpusDir + "/broken_no-relist.json"));
  doc["scenario"]["workload"]["clients"] = -1;
  EXPECT_FALSE(parse_trace(doc.dump(), "T.json", &e).has_value());
  EXPECT_NE(e.message.find("scenario.workload.clients is -1, but it must be in 1..256"),
            std::string::npos)
      << e.message;
}

}  // namespace
}  // namespace lockstep::traces
