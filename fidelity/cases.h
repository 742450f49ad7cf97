// lockstep fidelity: saved conformance cases (issue 18).
//
// A case is a short operation sequence together with what Debian's ZooKeeper server answered to
// each operation, normalized (compare.h). It is written when the differential tester finds a
// mismatch (the sequence shrunk first, shrink.h) or when someone pins a behaviour on purpose
// (`lockstep conformance --record NAME`), and from then on it runs on both backends:
//   - on the simulator, against the recorded answers, in every unit run (no server needed);
//   - on the real server, against the same recorded answers, in the real-server tests (a server
//     that answers differently from when the case was recorded is reported as such).
// A case saved from a mismatch fails its simulator run until the simulator is fixed, or until
// compare.h names the difference as one of the server's freedoms.
//
// File format (JSON, one case per file, fidelity/cases/<name>.json):
//   {"format": "lockstep-conformance-case/1", "name": "...", "servers": 1 | 3,
//    "found": "how it was found (the command)", "note": "what it pins",
//    "operations": ["s0 create /d '' persistent", ...],            // sequence.h's to_string
//    "real": [{"error": "ZOK", "path": "", "data": "", "stat": "", "children": "",
//              "state": "", "events": "", "event_ms": [..]}, ...]} // one per operation
// Files are written atomically (a temporary file, fsync, rename).
#pragma once

#include <string>
#include <vector>

#include "fidelity/compare.h"
#include "fidelity/sequence.h"

namespace lockstep::fidelity {

inline constexpr const char* kCaseFormat = "lockstep-conformance-case/1";

struct Case {
  std::string name;  // file stem: letters, digits, '-', '_' and '.'
  int servers = 1;
  std::string found;
  std::string note;
  Sequence operations;
  std::vector<Normalized> real;  // one per operation
};

std::string to_json(const Case& c);
// Parses a case; on failure returns false and *error names the field and the fix.
bool parse_case(const std::string& text, Case* out, std::string* error);

// Whether `name` can name a case (1-100 letters, digits, '-', '_' or '.', not starting with '.').
bool case_name_ok(const std::string& name);
// Writes `dir`/`name`.json atomically (creating `dir`); returns the path, or "" and *error.
// An existing case is never overwritten (that is an error).
std::string save_case(const std::string& dir, const Case& c, std::string* error);
// `stem`, or `stem`-2, -3, ...: the first name no case in `dir` has yet.
std::string free_case_name(const std::string& dir, const std::string& stem);
// Every *.json under `dir`, sorted by file name. A file that does not parse is an error (with
// its path), not skipped. A missing directory is an empty list.
bool load_cases(const std::string& dir, std::vector<Case>* out, std::string* error);

// Compares one run of a case's operations with its recorded answers: the differences, one line
// per differing operation ("op #3 s0 exists /d [events]: got ... recorded ..."), empty when
// none. A run that did not complete is a difference too.
std::vector<std::string> check_case(const Case& c, const RunResult& run, const std::string& root);

}  // namespace lockstep::fidelity
