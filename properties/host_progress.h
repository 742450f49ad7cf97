// The host side of every long command: a progress line kept on a terminal, and the signals that
// stop a run so that it can report what it covered. Shared by `check` (check_host.cc) and the
// commands of cli/ (explore, conformance, herd). Deliberately outside the deterministic core:
// nothing here feeds a decision of a run; a run that is not stopped gives the same result
// whether or not these are in use.
//
// ProgressLine: one line on a stream that is a terminal (the caller passes nullptr when it is
// not, or when the output is machine-read, e.g. --json: the line is then never drawn), redrawn
// in place with "\r" at most four times a second and wiped by clear() (and the destructor) so
// that the report that follows starts on a clean line. Single-threaded: one owner draws.
//
// StopSignals: while one exists, SIGINT, SIGTERM and SIGHUP only record the signal (without
// SA_RESTART, so a blocking call returns EINTR at once); the run polls stopped() between units of
// work, stops (a real server's run: destroys its Cluster, which stops every server by process
// id), reports what it covered and exits with 130 (cli/cli.h kExitInterrupted). A second SIGINT
// after a first restores the default action and re-raises it: a user who presses Ctrl-C twice
// gets the usual kill. A repeated SIGTERM or SIGHUP is ignored (`timeout` sends SIGTERM twice). The destructor restores the previous handlers. Create it on
// the main thread; at most one exists at a time (it asserts that). The one signal guard of every
// command: `check` on both backends, explore, conformance, herd.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace lockstep::properties {

// "1m05s": a duration for people.
std::string human_seconds(double s);

class ProgressLine {
 public:
  // `out`: the terminal to draw on, or nullptr for a quiet line (not a terminal).
  explicit ProgressLine(std::ostream* out);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // True when a line is drawn at all (a terminal was given).
  bool shown() const { return out_ != nullptr; }
  // True when a redraw is due: a terminal, and a quarter of a second since the last one. Lets a
  // caller skip formatting the text when it would not be drawn.
  bool due() const;
  // Redraws the line with `text` when due() (or always, with `force`).
  void update(const std::string& text, bool force = false);
  // Wipes the line (the cursor ends at its start).
  void clear();
  // Seconds since the line was made (for rates and ETAs).
  double elapsed_s() const;
  // "R per second" over elapsed_s(), for `done` units.
  double rate(uint64_t done) const;

 private:
  std::ostream* out_;
  double start_s_;
  double last_s_ = -1;
  size_t width_ = 0;  // of the line on screen
};

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // True once SIGINT, SIGTERM or SIGHUP arrived while this guard was alive.
  static bool stopped();
  // "SIGINT", "SIGTERM" or "SIGHUP"; nullptr when none arrived.
  static const char* signal_name();
};

}  // namespace lockstep::properties
