#include "real/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "real/c_client.h"

namespace lockstep::real {

namespace {

using Clock = std::chrono::steady_clock;

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// The last `lines` lines of a file, for error messages.
std::string tail_of(const std::string& path, size_t lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  std::string line;
  while (std::getline(in, line)) all.push_back(line);
  std::string out;
  const size_t from = all.size() > lines ? all.size() - lines : 0;
  for (size_t i = from; i < all.size(); ++i) out += "  | " + all[i] + "\n";
  return out;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// Several ports at once, so that they are distinct.
std::vector<int> free_ports(size_t n) {
  std::vector<int> fds;
  std::vector<int> ports;
  for (size_t i = 0; i < n; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      if (fd >= 0) ::close(fd);
      ports.push_back(0);
      continue;
    }
    fds.push_back(fd);
    ports.push_back(ntohs(addr.sin_port));
  }
  for (int fd : fds) ::close(fd);
  return ports;
}

std::string mode_of(const std::string& srvr) {
  const auto at = srvr.find("Mode: ");
  if (at == std::string::npos) return "";
  const auto end = srvr.find('\n', at);
  return srvr.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
}

// Removes the directories of clusters whose test process died without running its
// destructors (SIGKILL, abort): their servers died with them (PR_SET_PDEATHSIG), their
// directories did not. A directory without an owner file is being created: left alone.
void sweep_orphaned_dirs() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/tmp", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("lockstep-zk-", 0) != 0) continue;
    std::ifstream owner(entry.path() / "owner.pid");
    long pid = 0;
    if (!(owner >> pid) || pid <= 0) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::filesystem::remove_all(entry.path(), ec);
    }
  }
}

}  // namespace

int free_port() { return free_ports(1).front(); }

std::string four_letter_word(int port, const std::string& word, int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  auto left_ms = [&] {
    const auto d = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return static_cast<int>(std::max<int64_t>(0, d.count()));
  };
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  std::string out;
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  if (rc != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return "";
  }
  pollfd p{fd, POLLOUT, 0};
  if (::poll(&p, 1, left_ms()) != 1) {
    ::close(fd);
    return "";
  }
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0 ||
      ::send(fd, word.data(), word.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(word.size())) {
    ::close(fd);
    return "";
  }
  char buf[4096];
  for (;;) {
    p = pollfd{fd, POLLIN, 0};
    if (::poll(&p, 1, left_ms()) != 1) break;  // timed out: return what we have
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

// ---- Cluster ----

Cluster::Cluster(ClusterOptions options) : options_(std::move(options)) {}

Cluster::~Cluster() {
  stop_all();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

Cluster::StartResult Cluster::start(ClusterOptions options) {
  StartResult result;
  sweep_orphaned_dirs();
  for (const std::string& jar : split(options.classpath, ':')) {
    if (!file_exists(jar)) {
      result.error =
          "ZooKeeper server jar not found: " + jar + " (install with: " + kServerInstallCommand + ")";
      return result;
    }
  }
  if (options.servers < 1) {
    result.error = "a cluster needs at least one server";
    return result;
  }
  std::unique_ptr<Cluster> c(new Cluster(std::move(options)));
  char tmpl[] = "/tmp/lockstep-zk-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    result.error = std::string("mkdtemp failed: ") + std::strerror(errno);
    return result;
  }
  c->dir_ = tmpl;
  {
    std::ofstream owner(c->dir_ + "/owner.pid");
    owner << ::getpid() << "\n";
  }
  const int n = c->options_.servers;
  const std::vector<int> ports = free_ports(static_cast<size_t>(3 * n));
  for (int i = 0; i < n; ++i) {
    Server s;
    s.id = i + 1;
    s.client_port = ports[static_cast<size_t>(3 * i)];
    s.quorum_port = ports[static_cast<size_t>(3 * i + 1)];
    s.election_port = ports[static_cast<size_t>(3 * i + 2)];
    s.dir = c->dir_ + "/server" + std::to_string(s.id);
    c->servers_.push_back(s);
  }
  if (std::string e = c->write_configs(); !e.empty()) {
    result.error = e;
    return result;  // the destructor removes the directory
  }
  for (Server& s : c->servers_) {
    if (std::string e = c->spawn(s); !e.empty()) {
      result.error = e;
      return result;  // the destructor stops what started
    }
  }
  for (Server& s : c->servers_) {
    if (std::string e = c->wait_ready(s); !e.empty()) {
      result.error = e;
      return result;
    }
  }
  result.cluster = std::move(c);
  return result;
}

std::string Cluster::write_configs() {
  for (const Server& s : servers_) {
    std::error_code ec;
    std::filesystem::create_directories(s.dir + "/data", ec);
    if (ec) return "cannot create " + s.dir + ": " + ec.message();
    std::ofstream cfg(s.dir + "/zoo.cfg");
    cfg << "tickTime=" << options_.tick_ms << "\n"
        << "initLimit=10\n"
        << "syncLimit=5\n"
        << "dataDir=" << s.dir << "/data\n"
        << "clientPort=" << s.client_port << "\n"
        << "clientPortAddress=127.0.0.1\n"
        << "admin.enableServer=false\n"
        << "4lw.commands.whitelist=srvr,ruok,cons,dump,mntr\n"
        << "forceSync=" << (options_.force_sync ? "yes" : "no") << "\n";
    if (servers_.size() > 1) {
      for (const Server& peer : servers_) {
        cfg << "server." << peer.id << "=127.0.0.1:" << peer.quorum_port << ":"
            << peer.election_port << "\n";
      }
      std::ofstream myid(s.dir + "/data/myid");
      myid << s.id << "\n";
      if (!myid) return "cannot write " + s.dir + "/data/myid";
    }
    if (!cfg) return "cannot write " + s.dir + "/zoo.cfg";
  }
  return "";
}

std::string Cluster::spawn(Server& s) {
  std::vector<std::string> args;
  args.push_back(options_.java);
  for (const auto& f : options_.jvm_flags) args.push_back(f);
  if (options_.extended_types) args.push_back("-Dzookeeper.extendedTypesEnabled=true");
  args.push_back("-Dznode.container.checkIntervalMs=" +
                 std::to_string(options_.container_check_interval_ms));
  args.push_back("-cp");
  args.push_back(options_.classpath);
  args.push_back("org.apache.zookeeper.server.quorum.QuorumPeerMain");
  args.push_back(s.dir + "/zoo.cfg");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  const std::string log_path = s.dir + "/server.log";
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return "cannot open " + log_path + ": " + std::strerror(errno);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int err_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(log_fd);
    if (null_fd >= 0) ::close(null_fd);
    return std::string("pipe2: ") + std::strerror(errno);
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Child: async-signal-safe calls only until exec.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    if (::chdir(s.dir.c_str()) != 0) ::_exit(127);
    ::execvp(argv[0], argv.data());
    const int e = errno;
    ssize_t ignored = ::write(err_pipe[1], &e, sizeof e);
    (void)ignored;
    ::_exit(127);
  }
  ::close(err_pipe[1]);
  ::close(log_fd);
  if (null_fd >= 0) ::close(null_fd);
  if (pid < 0) {
    ::close(err_pipe[0]);
    return std::string("fork: ") + std::strerror(errno);
  }
  int exec_errno = 0;
  const ssize_t n = ::read(err_pipe[0], &exec_errno, sizeof exec_errno);
  ::close(err_pipe[0]);
  if (n == sizeof exec_errno) {
    ::waitpid(pid, nullptr, 0);
    if (exec_errno == ENOENT) {
      return "cannot run '" + options_.java +
             "': not found (install a Java runtime with: " + kServerInstallCommand + ")";
    }
    return "cannot run '" + options_.java + "': " + std::strerror(exec_errno);
  }
  s.pid = pid;
  return "";
}

std::string Cluster::wait_ready(Server& s) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(options_.ready_timeout_ms);
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(s.pid, &status, WNOHANG) == s.pid) {
      s.pid = 0;
      return "ZooKeeper server " + std::to_string(s.id) + " exited (status " +
             std::to_string(status) + ") before it was ready; " + s.dir + "/server.log ends:\n" +
             tail_of(s.dir + "/server.log", 15);
    }
    if (!mode_of(four_letter_word(s.client_port, "srvr", 200)).empty()) return "";
    sleep_ms(20);
  }
  return "ZooKeeper server " + std::to_string(s.id) + " not ready after " +
         std::to_string(options_.ready_timeout_ms) + " ms; " + s.dir + "/server.log ends:\n" +
         tail_of(s.dir + "/server.log", 15);
}

std::string Cluster::connect_string() const {
  std::string out;
  for (const Server& s : servers_) {
    if (!out.empty()) out += ",";
    out += "127.0.0.1:" + std::to_string(s.client_port);
  }
  return out;
}

int Cluster::client_port(int server) const { return servers_.at(server - 1).client_port; }
std::string Cluster::address(int server) const {
  return "127.0.0.1:" + std::to_string(client_port(server));
}
int Cluster::pid(int server) const { return servers_.at(server - 1).pid; }
bool Cluster::running(int server) const { return pid(server) != 0; }

std::string Cluster::four_letter(int server, const std::string& word) const {
  if (!running(server)) return "";
  return four_letter_word(client_port(server), word);
}

std::string Cluster::mode(int server) const {
  if (!running(server)) return "";
  return mode_of(four_letter_word(client_port(server), "srvr", 2000));
}

int Cluster::leader() const {
  for (int i = 1; i <= size(); ++i) {
    const std::string m = mode(i);
    if (m == "leader" || m == "standalone") return i;
  }
  return 0;
}

bool Cluster::wait_for_leader(int timeout_ms) const {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    int leaders = 0;
    bool all = true;
    for (int i = 1; i <= size(); ++i) {
      if (!running(i)) continue;
      const std::string m = mode(i);
      if (m.empty()) all = false;
      if (m == "leader" || m == "standalone") ++leaders;
    }
    if (all && leaders == 1) return true;
    sleep_ms(20);
  }
  return false;
}

void Cluster::stop(int server) {
  Server& s = servers_.at(server - 1);
  if (s.pid == 0) return;
  ::kill(s.pid, SIGTERM);
  const auto deadline = Clock::now() + std::chrono::milliseconds(options_.stop_grace_ms);
  while (Clock::now() < deadline) {
    if (::waitpid(s.pid, nullptr, WNOHANG) == s.pid) {
      s.pid = 0;
      return;
    }
    sleep_ms(5);
  }
  kill(server);
}

void Cluster::kill(int server) {
  Server& s = servers_.at(server - 1);
  if (s.pid == 0) return;
  ::kill(s.pid, SIGKILL);
  ::waitpid(s.pid, nullptr, 0);
  s.pid = 0;
}

std::string Cluster::restart(int server) {
  Server& s = servers_.at(server - 1);
  if (s.pid != 0) return "server " + std::to_string(server) + " is running";
  if (std::string e = spawn(s); !e.empty()) return e;
  return wait_ready(s);
}

void Cluster::stop_all() {
  // Signal every server first, so that they shut down in parallel.
  for (Server& s : servers_) {
    if (s.pid != 0) ::kill(s.pid, SIGTERM);
  }
  for (int i = 1; i <= size(); ++i) stop(i);
}

bool Cluster::session_alive(zk::SessionId id) const {
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(id.value));
  const std::string needle(hex);
  // A server that does not answer in time (a loaded machine) proves nothing: ask again, and
  // when no answer comes, say "alive" (the conservative answer for every caller).
  for (int attempt = 0; attempt < 5; ++attempt) {
    const int l = leader();
    if (l == 0) continue;
    std::string dump = four_letter_word(client_port(l), "dump", 2000);
    // Only the session tracker's part: the connections part also names the session of a
    // connection that is still being closed (or a rejected reconnect of a dead session).
    const size_t end = dump.find("ephemeral nodes dump:");
    if (dump.find("SessionTracker dump:") == std::string::npos || end == std::string::npos) {
      continue;
    }
    dump.resize(end);
    for (size_t at = dump.find(needle); at != std::string::npos; at = dump.find(needle, at + 1)) {
      const size_t after = at + needle.size();
      if (after >= dump.size() || !std::isxdigit(static_cast<unsigned char>(dump[after]))) {
        return true;
      }
    }
    return false;
  }
  return true;
}

// ---- forced expiry ----

namespace {

struct JoinWatch {
  std::mutex mu;
  std::condition_variable cv;
  int state = 0;
  bool seen = false;
};

void join_watcher(zhandle_t*, int type, int state, const char*, void* ctx) {
  if (type != ZOO_SESSION_EVENT) return;
  auto* w = static_cast<JoinWatch*>(ctx);
  std::lock_guard<std::mutex> lock(w->mu);
  if (state == ZOO_CONNECTED_STATE || state == ZOO_EXPIRED_SESSION_STATE) {
    w->state = state;
    w->seen = true;
    w->cv.notify_all();
  }
}

int take_over_and_close(const Cluster& cluster, const std::string& hosts, const Credentials& victim,
                        int max_tries) {
  clientid_t cid{};
  cid.client_id = static_cast<int64_t>(victim.id.value);
  std::memcpy(cid.passwd, victim.password.data(), sizeof cid.passwd);
  for (int attempt = 1; attempt <= max_tries; ++attempt) {
    JoinWatch w;
    zhandle_t* zh =
        zookeeper_init2(hosts.c_str(), &join_watcher, 10000, &cid, &w, 0, &detail::drop_c_log_line);
    if (zh == nullptr) return 0;
    bool already_gone = false;
    {
      std::unique_lock<std::mutex> lock(w.mu);
      w.cv.wait_for(lock, std::chrono::seconds(5), [&] { return w.seen; });
      already_gone = w.seen && w.state == ZOO_EXPIRED_SESSION_STATE;
    }
    zookeeper_close(zh);  // closeSession: the server deletes the session's ephemerals
    if (already_gone || !cluster.session_alive(victim.id)) return attempt;
  }
  return 0;
}

}  // namespace

int expire_session(const Cluster& cluster, const std::string& hosts, const Credentials& victim,
                   Proxy* victim_proxy, int max_tries) {
  if (victim_proxy != nullptr) {
    victim_proxy->set_blackhole(true);
    victim_proxy->cut();
  }
  const int tries = take_over_and_close(cluster, hosts, victim, max_tries);
  if (victim_proxy != nullptr) victim_proxy->set_blackhole(false);
  return tries;
}

}  // namespace lockstep::real
