#include "real/inspect.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "real/c_client.h"

namespace lockstep::real {

namespace {}  // namespace

struct TreeInspector::Impl {
  zhandle_t* zh = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  bool connected = false;

  static void watcher(zhandle_t*, int type, int state, const char*, void* ctx) {
    if (type != ZOO_SESSION_EVENT) return;
    auto* self = static_cast<Impl*>(ctx);
    std::lock_guard<std::mutex> lock(self->mu);
    self->connected = state == ZOO_CONNECTED_STATE;
    self->cv.notify_all();
  }
};

TreeInspector::TreeInspector(const std::string& hosts, int connect_timeout_ms) : impl_(new Impl) {
  impl_->zh = zookeeper_init2(hosts.c_str(), &Impl::watcher, 10000, nullptr, impl_, 0,
                              &detail::drop_c_log_line);
  if (impl_->zh == nullptr) return;
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->cv.wait_for(lock, std::chrono::milliseconds(connect_timeout_ms),
                     [this] { return impl_->connected; });
}

TreeInspector::~TreeInspector() {
  if (impl_->zh != nullptr) zookeeper_close(impl_->zh);
  delete impl_;
}

bool TreeInspector::connected() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->connected;
}

namespace {
struct SyncWait {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  int rc = 0;
};
void on_sync(int rc, const char*, const void* data) {
  auto* w = static_cast<SyncWait*>(const_cast<void*>(data));
  std::lock_guard<std::mutex> lock(w->mu);
  w->rc = rc;
  w->done = true;
  w->cv.notify_all();
}
}  // namespace

bool TreeInspector::sync_path(const std::string& path) {
  if (impl_->zh == nullptr) return false;
  SyncWait w;
  if (zoo_async(impl_->zh, path.c_str(), &on_sync, &w) != ZOK) return false;
  std::unique_lock<std::mutex> lock(w.mu);
  // The completion always comes (at the latest when the handle gives up on the connection):
  // waiting for it keeps `w` alive for the callback.
  w.cv.wait(lock, [&] { return w.done; });
  return w.rc == ZOK;
}

bool TreeInspector::walk(const std::string& dir,
                         const std::function<void(const std::string&, const zk::Stat&)>& fn) {
  if (impl_->zh == nullptr) return false;
  std::vector<std::string> stack{dir};
  for (size_t guard = 0; !stack.empty() && guard < 1000000; ++guard) {
    const std::string path = std::move(stack.back());
    stack.pop_back();
    struct Stat st {};
    struct String_vector kids {};
    const int rc = zoo_get_children2(impl_->zh, path.c_str(), 0, &kids, &st);
    if (rc == ZNONODE) continue;
    if (rc != ZOK) return false;
    fn(path, detail::stat_from_c(st));
    std::vector<std::string> names;
    for (int32_t i = 0; i < kids.count; ++i) names.emplace_back(kids.data[i]);
    deallocate_String_vector(&kids);
    std::sort(names.begin(), names.end());
    const std::string base = path == "/" ? "" : path;
    for (auto it = names.rbegin(); it != names.rend(); ++it) stack.push_back(base + "/" + *it);
  }
  return true;
}

int TreeInspector::remove(const std::string& path) {
  if (impl_->zh == nullptr) return ZINVALIDSTATE;
  return zoo_delete(impl_->zh, path.c_str(), -1);
}

}  // namespace lockstep::real
