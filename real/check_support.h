// lockstep real client: the host side of `lockstep check --real` / `--ensemble`: the server's
// prerequisites and the cluster's health between runs, the process parts that the check engine
// (properties/real_backend.h) leaves to real/.
//
// The signals that interrupt a run are properties/host_progress.h's StopSignals (the one guard
// of every command); a Ctrl-C lets the engine finish the current step and destroy its Cluster,
// which stops every server by process id and removes its directory.
#pragma once

#include <string>

#include "real/server.h"

namespace lockstep::real {

// "" when java and the ZooKeeper server jar are installed for `options`, otherwise what is
// missing and how to install it (kServerInstallCommand, or ./lockstep, which installs it).
std::string server_prerequisites(const ClusterOptions& options);

// Brings every stopped server of `cluster` back (a fault may have left one down) and waits up
// to `timeout_ms` for a leader. Returns "" or what failed.
std::string ensure_healthy(Cluster& cluster, int timeout_ms);

}  // namespace lockstep::real
