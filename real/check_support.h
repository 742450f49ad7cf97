// lockstep real client: the host side of `lockstep check --real` / `--ensemble` (process
// signals, the server's prerequisites, and the cluster's health between runs).
//
// These are the wall-clock and process parts that the check engine (properties/real_backend.h)
// must not contain itself: properties/ stays free of signals, threads and clocks.
//
// InterruptGuard: while one exists, SIGINT, SIGTERM and SIGHUP only set a flag (interrupted())
// instead of killing the process, so that a Ctrl-C lets the engine finish the current step,
// destroy its Cluster (which stops every server by process id and removes its directory) and
// exit. The previous handlers come back when the guard is destroyed. A second signal while the
// flag is already set restores the default action and re-raises it (a user who presses Ctrl-C
// twice gets the usual kill; the servers still die with the process: PR_SET_PDEATHSIG).
// Not thread-safe: create it on the main thread, one at a time.
#pragma once

#include <string>

#include "real/server.h"

namespace lockstep::real {

class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // Whether a signal arrived since the guard was made.
  static bool interrupted();
  // The signal's name ("SIGINT", ...), or "" when none arrived.
  static const char* signal_name();
};

// "" when java and the ZooKeeper server jar are installed for `options`, otherwise what is
// missing and how to install it (apt-get install zookeeper, or ./lockstep, which installs it).
std::string server_prerequisites(const ClusterOptions& options);

// Brings every stopped server of `cluster` back (a fault may have left one down) and waits up
// to `timeout_ms` for a leader. Returns "" or what failed.
std::string ensure_healthy(Cluster& cluster, int timeout_ms);

}  // namespace lockstep::real
