// See properties/host_progress.h.
#include "properties/host_progress.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iterator>

#include "properties/check.h"
#include "zk/invariant.h"

namespace lockstep::properties {
namespace {

volatile std::sig_atomic_t g_signal = 0;  // the signal that stopped the run; 0: none
bool g_guarding = false;                  // a StopSignals is alive

extern "C" void on_stop_signal(int sig) {
  if (g_signal != 0) {
    // A second Ctrl-C: do what the user asked for at once (servers started by the run still die
    // with it: real/server.h, PR_SET_PDEATHSIG). A repeated SIGTERM or SIGHUP is not a person
    // insisting: `timeout` sends SIGTERM to the run and then to its process group, and a batch
    // engine may repeat it, so the run still stops in order and reports what it covered.
    if (sig == SIGINT && g_signal == SIGINT) {
      ::signal(sig, SIG_DFL);
      ::raise(sig);
    }
    return;
  }
  g_signal = sig;
}

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_saved[std::size(kStopSignals)];

}  // namespace

std::string human_seconds(double s) {
  const uint64_t total = static_cast<uint64_t>(std::max(0.0, s) + 0.5);
  char buf[32];
  if (total < 60) {
    std::snprintf(buf, sizeof buf, "%llus", static_cast<unsigned long long>(total));
  } else if (total < 3600) {
    std::snprintf(buf, sizeof buf, "%llum%02llus", static_cast<unsigned long long>(total / 60),
                  static_cast<unsigned long long>(total % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lluh%02llum", static_cast<unsigned long long>(total / 3600),
                  static_cast<unsigned long long>(total % 3600 / 60));
  }
  return buf;
}

// ---- ProgressLine ----

ProgressLine::ProgressLine(std::ostream* out) : out_(out), start_s_(host_seconds()) {}

ProgressLine::~ProgressLine() { clear(); }

bool ProgressLine::due() const {
  constexpr double kInterval_s = 0.25;  // between two redraws at least
  return out_ != nullptr && (last_s_ < 0 || host_seconds() - last_s_ >= kInterval_s);
}

void ProgressLine::update(const std::string& text, bool force) {
  if (out_ == nullptr || !(force || due())) return;
  last_s_ = host_seconds();
  *out_ << "\r" << text << std::string(width_ > text.size() ? width_ - text.size() : 0, ' ')
        << std::flush;
  width_ = text.size();
}

void ProgressLine::clear() {
  if (out_ == nullptr || width_ == 0) return;
  *out_ << "\r" << std::string(width_, ' ') << "\r" << std::flush;
  width_ = 0;
}

double ProgressLine::elapsed_s() const { return host_seconds() - start_s_; }

double ProgressLine::rate(uint64_t done) const {
  return static_cast<double>(done) / std::max(elapsed_s(), 1e-9);
}

// ---- StopSignals ----

StopSignals::StopSignals() {
  LOCKSTEP_ASSERT_MSG(!g_guarding, "two StopSignals alive at once");
  g_guarding = true;
  g_signal = 0;
  struct sigaction stop {};
  stop.sa_handler = on_stop_signal;
  sigemptyset(&stop.sa_mask);
  for (size_t i = 0; i < std::size(kStopSignals); ++i) {
    ::sigaction(kStopSignals[i], &stop, &g_saved[i]);
  }
}

StopSignals::~StopSignals() {
  for (size_t i = 0; i < std::size(kStopSignals); ++i) {
    ::sigaction(kStopSignals[i], &g_saved[i], nullptr);
  }
  g_guarding = false;
}

bool StopSignals::stopped() { return g_signal != 0; }

const char* StopSignals::signal_name() {
  switch (g_signal) {
    case 0: return nullptr;
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
  }
}

}  // namespace lockstep::properties
