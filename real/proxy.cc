#include "real/proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <vector>

namespace lockstep::real {

namespace {

int32_t read_be32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(s[at + i]);
  return static_cast<int32_t>(v);
}

// The path a request frame carries first after its header (create, delete, set_data, ...):
// frame = length, xid, type, then a string (length, bytes). "" when the frame is too short.
std::string path_of(const std::string& frame, size_t total) {
  if (total < 16) return "";
  const int32_t len = read_be32(frame, 12);
  if (len < 0 || 16 + static_cast<size_t>(len) > total) return "";
  return frame.substr(16, static_cast<size_t>(len));
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Direction indexes: bytes that came from the client (kUp, to the server) or from the server
// (kDown, to the client).
constexpr int kUp = 0;
constexpr int kDown = 1;

struct Conn {
  int fd[2] = {-1, -1};  // fd[kUp] = client socket (we read requests from it), fd[kDown] = server
  std::string in[2];     // unframed bytes read, per direction
  std::string out[2];    // bytes to write, per direction (out[kUp] goes to the server)
  bool handshake_done[2] = {false, false};
  bool has_drop = false;
  int32_t drop_xid = 0;
  bool dead = false;
};

}  // namespace

struct Proxy::Impl {
  int listen_fd = -1;
  int wake[2] = {-1, -1};
  int target_port = 0;
  std::thread thread;

  mutable std::mutex mu;
  std::condition_variable cv;
  uint64_t requested = 0;  // control changes requested
  uint64_t applied = 0;    // control changes the proxy thread has applied
  bool stop = false;
  bool cut_pending = false;
  bool blackhole = false;
  bool drop_armed = false;
  bool drop_request = false;  // drop the request itself, not its reply
  std::set<int32_t> drop_types;
  std::string drop_path;
  int dropped = 0;
  std::optional<std::chrono::steady_clock::time_point> matched;  // an armed drop's last match
  int open = 0;

  std::vector<std::unique_ptr<Conn>> conns;  // proxy thread only

  void request(const std::function<void()>& change) {
    std::unique_lock<std::mutex> lock(mu);
    change();
    const uint64_t mine = ++requested;
    const char b = 1;
    ssize_t ignored = ::write(wake[1], &b, 1);
    (void)ignored;
    cv.wait(lock, [&] { return applied >= mine; });
  }

  void close_conn(Conn& c) {
    if (c.dead) return;
    // Best effort: deliver what the client should still see before the cut.
    for (int d : {kDown, kUp}) {
      const int to = d == kDown ? c.fd[kUp] : c.fd[kDown];
      while (!c.out[d].empty()) {
        const ssize_t n = ::send(to, c.out[d].data(), c.out[d].size(), MSG_NOSIGNAL);
        if (n <= 0) break;
        c.out[d].erase(0, static_cast<size_t>(n));
      }
    }
    for (int& fd : c.fd) {
      if (fd >= 0) ::close(fd);
      fd = -1;
    }
    c.dead = true;
  }

  // Handles whole frames read in direction d; returns false when the connection was cut.
  bool on_frames(Conn& c, int d) {
    std::string& in = c.in[d];
    while (in.size() >= 4) {
      const int32_t len = read_be32(in, 0);
      if (len < 0) return false;
      const size_t total = 4 + static_cast<size_t>(len);
      if (in.size() < total) break;
      bool forward = true;
      if (!c.handshake_done[d]) {
        c.handshake_done[d] = true;
      } else if (d == kUp && len >= 8) {
        const int32_t xid = read_be32(in, 4);
        const int32_t type = read_be32(in, 8);
        std::lock_guard<std::mutex> lock(mu);
        if (drop_armed && drop_types.count(type) != 0 &&
            (drop_path.empty() || path_of(in, total).find(drop_path) != std::string::npos)) {
          drop_armed = false;
          matched = std::chrono::steady_clock::now();
          if (drop_request) {
            ++dropped;
            in.clear();
            return false;  // the request is lost with the connection
          }
          c.has_drop = true;
          c.drop_xid = xid;
        }
      } else if (d == kDown && len >= 4 && c.has_drop && read_be32(in, 4) == c.drop_xid) {
        forward = false;
        {
          std::lock_guard<std::mutex> lock(mu);
          ++dropped;
        }
        in.clear();
        return false;  // the reply is lost with the connection
      }
      if (forward) c.out[d].append(in, 0, total);
      in.erase(0, total);
    }
    return true;
  }

  void accept_one() {
    const int cfd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (cfd < 0) return;
    const int sfd = connect_loopback(target_port);
    if (sfd < 0) {
      ::close(cfd);  // the server is down: the client sees a refused/closed connection
      return;
    }
    for (int fd : {cfd, sfd}) {
      set_nonblocking(fd);
      set_nodelay(fd);
    }
    auto c = std::make_unique<Conn>();
    c->fd[kUp] = cfd;
    c->fd[kDown] = sfd;
    conns.push_back(std::move(c));
  }

  void run() {
    char buf[65536];
    for (;;) {
      bool hole = false;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (stop) break;
        if (cut_pending) {
          for (auto& c : conns) close_conn(*c);
          cut_pending = false;
        }
        hole = blackhole;
      }
      std::erase_if(conns, [](const std::unique_ptr<Conn>& c) { return c->dead; });
      {
        std::lock_guard<std::mutex> lock(mu);
        open = static_cast<int>(conns.size());
        applied = requested;
      }
      cv.notify_all();

      std::vector<pollfd> fds;
      fds.push_back(pollfd{wake[0], POLLIN, 0});
      if (!hole) fds.push_back(pollfd{listen_fd, POLLIN, 0});
      const size_t first_conn = fds.size();
      if (!hole) {
        for (auto& c : conns) {
          // fd[kUp] (client) is read for kUp bytes and written with out[kDown].
          fds.push_back(pollfd{
              c->fd[kUp], static_cast<short>(POLLIN | (c->out[kDown].empty() ? 0 : POLLOUT)), 0});
          fds.push_back(pollfd{
              c->fd[kDown], static_cast<short>(POLLIN | (c->out[kUp].empty() ? 0 : POLLOUT)), 0});
        }
      }
      if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) break;
      if (fds[0].revents != 0) {
        while (::read(wake[0], buf, sizeof buf) > 0) {
        }
      }
      if (hole) continue;
      if (fds[1].revents & POLLIN) accept_one();
      for (size_t i = 0; i + first_conn < fds.size() && i / 2 < conns.size(); i += 2) {
        Conn& c = *conns[i / 2];
        for (int d : {kUp, kDown}) {
          if (c.dead) break;
          const pollfd& p = fds[first_conn + i + static_cast<size_t>(d)];
          if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            const ssize_t n = ::recv(c.fd[d], buf, sizeof buf, 0);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
              close_conn(c);
              break;
            }
            if (n > 0) {
              c.in[d].append(buf, static_cast<size_t>(n));
              if (!on_frames(c, d)) {
                close_conn(c);
                break;
              }
            }
          }
        }
        for (int d : {kUp, kDown}) {
          if (c.dead || c.out[d].empty()) continue;
          const int to = d == kUp ? c.fd[kDown] : c.fd[kUp];
          const ssize_t n = ::send(to, c.out[d].data(), c.out[d].size(), MSG_NOSIGNAL);
          if (n > 0) {
            c.out[d].erase(0, static_cast<size_t>(n));
          } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
            close_conn(c);
          }
        }
      }
    }
    for (auto& c : conns) close_conn(*c);
    conns.clear();
  }
};

std::unique_ptr<Proxy> Proxy::start(int target_port, std::string* error) {
  auto impl = std::make_unique<Impl>();
  impl->target_port = target_port;
  impl->listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (impl->listen_fd < 0 ||
      ::bind(impl->listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(impl->listen_fd, 64) != 0 ||
      ::getsockname(impl->listen_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      ::pipe2(impl->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    if (error != nullptr) *error = std::string("proxy: ") + std::strerror(errno);
    if (impl->listen_fd >= 0) ::close(impl->listen_fd);
    return nullptr;
  }
  const int port = ntohs(addr.sin_port);
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->run(); });
  return std::unique_ptr<Proxy>(new Proxy(std::move(impl), port));
}

Proxy::Proxy(std::unique_ptr<Impl> impl, int port) : impl_(std::move(impl)), port_(port) {}

Proxy::~Proxy() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  const char b = 1;
  ssize_t ignored = ::write(impl_->wake[1], &b, 1);
  (void)ignored;
  impl_->thread.join();
  ::close(impl_->listen_fd);
  ::close(impl_->wake[0]);
  ::close(impl_->wake[1]);
}

void Proxy::cut() {
  impl_->request([this] { impl_->cut_pending = true; });
}

void Proxy::set_blackhole(bool on) {
  impl_->request([this, on] { impl_->blackhole = on; });
}

void Proxy::drop_reply_to(std::set<int32_t> types, std::string path_contains) {
  impl_->request([this, &types, &path_contains] {
    impl_->drop_types = std::move(types);
    impl_->drop_path = std::move(path_contains);
    impl_->drop_request = false;
    impl_->drop_armed = true;
  });
}

void Proxy::drop_request_to(std::set<int32_t> types, std::string path_contains) {
  impl_->request([this, &types, &path_contains] {
    impl_->drop_types = std::move(types);
    impl_->drop_path = std::move(path_contains);
    impl_->drop_request = true;
    impl_->drop_armed = true;
  });
}

int Proxy::replies_dropped() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->dropped;
}

std::optional<std::chrono::steady_clock::time_point> Proxy::last_drop_matched() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->matched;
}

int Proxy::connections() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->open;
}

}  // namespace lockstep::real
