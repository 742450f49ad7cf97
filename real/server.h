// lockstep real client: a harness that runs Debian's ZooKeeper server for tests.
//
// A Cluster is one ZooKeeper deployment started from this process: a standalone server or an
// ensemble of N servers (N = 3 in the tests), all on 127.0.0.1 with free ports, in a fresh
// temporary directory (one dataDir per server, with its myid). Each server is a child process
// `java -cp <classpath> org.apache.zookeeper.server.quorum.QuorumPeerMain zoo.cfg`, started
// with fork/exec and stopped by its process id (SIGTERM, then SIGKILL after a grace period);
// its output goes to server.log in its own directory.
//
// Readiness: a server is ready when the four-letter word `srvr` reports a `Mode:` line
// (`ruok` answers before the server serves). Every 4lw poll uses short connect/read timeouts.
//
// Ownership and cleanup: the Cluster owns its processes and its directory. The destructor
// stops every server and removes the directory, also when a test assertion failed (RAII).
// If the test process itself dies, each child gets SIGKILL from the kernel
// (prctl(PR_SET_PDEATHSIG), armed in the child after fork; the signal follows the *thread*
// that forked, so start clusters from a thread that outlives them, e.g. the test's main
// thread). The directory of a test process that died (it holds owner.pid) is removed by the
// next Cluster::start. Not thread-safe: one owner thread.
//
// Faults available on a running cluster: stop / kill / restart of one server (restart reuses
// its data directory, so the data tree and sessions survive as ZooKeeper persists them), kill
// of the current leader, and forced session expiry (expire_session below).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "real/proxy.h"
#include "real/session.h"

namespace lockstep::real {

// How to install what the server needs on Debian: the server's jar (libzookeeper-java, which
// brings the jars it loads and slf4j-simple) and a headless Java runtime. The `zookeeper`
// package would do too, but it adds a service and the full default-jre (GTK, sound). The one
// spelling of this hint; ./lockstep's SERVER_PACKAGES installs the same.
inline constexpr const char kServerInstallCommand[] =
    "apt-get install --no-install-recommends libzookeeper-java default-jre-headless";

struct ClusterOptions {
  int servers = 1;    // 1 = standalone; 3 = an ensemble
  int tick_ms = 200;  // tickTime: sessions may be as short as 2 ticks
  bool force_sync = true;
  std::string java = "java";  // looked up on PATH unless it contains '/'
  std::string classpath = "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar";
  std::vector<std::string> jvm_flags = {"-Xms32m", "-Xmx256m", "-XX:+UseSerialGC",
                                        "-XX:TieredStopAtLevel=1", "-Xshare:auto"};
  int ready_timeout_ms = 30000;  // per start or restart
  int stop_grace_ms = 3000;      // SIGTERM -> SIGKILL
  // TTL nodes (-Dzookeeper.extendedTypesEnabled=true; without it a TTL create fails with
  // kUnimplemented) and the leader's container/TTL check interval
  // (-Dznode.container.checkIntervalMs; ZooKeeper's default is 60 s, the simulator's 100 ms).
  bool extended_types = true;
  int container_check_interval_ms = 100;
};

class Cluster {
 public:
  struct StartResult;
  // Starts every server and waits until each reports a Mode. On failure nothing is left
  // running and the result carries a message (missing java or jar: "install with: " and
  // kServerInstallCommand; a server that exits or never gets ready: the tail of its log).
  static StartResult start(ClusterOptions options);

  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  int size() const { return static_cast<int>(servers_.size()); }
  const std::string& dir() const { return dir_; }
  // "127.0.0.1:p1,127.0.0.1:p2,..." for zookeeper_init.
  std::string connect_string() const;
  // Servers are numbered 1..size() (their myid).
  int client_port(int server) const;
  std::string address(int server) const;  // "127.0.0.1:port"
  int pid(int server) const;              // 0 when not running
  bool running(int server) const;

  // "standalone", "leader", "follower", or "" when the server does not answer.
  std::string mode(int server) const;
  // The server that reports "leader" (or "standalone"), or 0 when there is none.
  int leader() const;
  // The answer of a four-letter word ("" when the server does not answer).
  std::string four_letter(int server, const std::string& word) const;

  // Stops a server: SIGTERM, then SIGKILL after the grace period. Returns when it is gone.
  void stop(int server);
  // Kills a server at once (SIGKILL): a crash.
  void kill(int server);
  // Starts a stopped server again on the same ports and data directory; waits until ready.
  // Returns "" or an error message.
  std::string restart(int server);
  // Waits until every running server reports a Mode and exactly one of them leads (or is
  // standalone). Returns false after timeout_ms.
  bool wait_for_leader(int timeout_ms) const;

  // Whether the leader (or the standalone server) still tracks `id` as a live session
  // (from the `dump` four-letter word).
  bool session_alive(zk::SessionId id) const;

 private:
  struct Server {
    int id = 0;
    int client_port = 0;
    int quorum_port = 0;
    int election_port = 0;
    std::string dir;  // holds zoo.cfg, data/, server.log
    int pid = 0;
  };
  explicit Cluster(ClusterOptions options);
  std::string write_configs();
  std::string spawn(Server& s);
  std::string wait_ready(Server& s);
  void stop_all();

  ClusterOptions options_;
  std::string dir_;
  std::vector<Server> servers_;
};

struct Cluster::StartResult {
  std::unique_ptr<Cluster> cluster;  // null on failure
  std::string error;
};

// The answer of a four-letter word on 127.0.0.1:port, with short timeouts ("" on failure).
std::string four_letter_word(int port, const std::string& word, int timeout_ms = 500);

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_port();

// Forces the expiry of the session `victim` the way ZooKeeper's own tests do: a second handle
// joins the session with its id and password, connects, and closes it (closeSession). This
// repeats until `cluster.session_alive(victim.id)` turns false, up to `max_tries` times, and
// returns the number of tries it took, or 0 when the session is still alive after them.
//
// With `victim_proxy` (the proxy the victim connects through) the victim is first cut off and
// held back (black hole) until the session is gone, then let through again: like a timeout
// expiry, the victim is disconnected when its ephemerals are deleted, its own watches never
// reach it, and it learns kExpired (after kConnecting) when it reconnects. Without a proxy a
// live C-client victim races the second handle: it reconnects at once (sometimes winning the
// session back, hence the retries) and may even receive the node events of its own ephemerals'
// deletion on its new connection before it learns kExpired.
int expire_session(const Cluster& cluster, const std::string& hosts, const Credentials& victim,
                   Proxy* victim_proxy = nullptr, int max_tries = 20);

}  // namespace lockstep::real
