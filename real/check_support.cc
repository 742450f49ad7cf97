#include "real/check_support.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace lockstep::real {
namespace {

bool executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

bool on_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return executable(program);
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t colon = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, colon - start);
    if (!dir.empty() && executable(dir + "/" + program)) return true;
    start = colon + 1;
  }
  return false;
}

}  // namespace

std::string server_prerequisites(const ClusterOptions& options) {
  std::string missing;
  if (!on_path(options.java)) {
    missing += "java ('" + options.java + "') is not installed or not on PATH";
  }
  size_t start = 0;
  const std::string& cp = options.classpath;
  while (start <= cp.size()) {
    const size_t colon = std::min(cp.find(':', start), cp.size());
    const std::string jar = cp.substr(start, colon - start);
    if (!jar.empty() && ::access(jar.c_str(), R_OK) != 0) {
      missing += std::string(missing.empty() ? "" : "; ") + "the ZooKeeper server jar " + jar +
                 " is missing";
    }
    start = colon + 1;
  }
  if (missing.empty()) return "";
  return missing +
         ".\nInstall Debian's ZooKeeper server and a Java runtime: sudo " + kServerInstallCommand +
         "\n(or run the top-level ./lockstep, which installs them)";
}

std::string ensure_healthy(Cluster& cluster, int timeout_ms) {
  for (int s = 1; s <= cluster.size(); ++s) {
    if (cluster.running(s)) continue;
    const std::string e = cluster.restart(s);
    if (!e.empty()) return "server " + std::to_string(s) + " did not come back: " + e;
  }
  if (!cluster.wait_for_leader(timeout_ms))
    return "no leader within " + std::to_string(timeout_ms) + " ms";
  return "";
}

}  // namespace lockstep::real
