#include "explore/coverage.h"

#include <cstdio>
#include <set>

namespace lockstep::explore {
namespace {

using properties::Op;
using properties::Type;

constexpr const char* kNames[kMarkCount] = {
    "contended-acquire",
    "ambiguous-create",
    "ambiguous-create-recovered",
    "lost-reply-create-adopted",
    "predecessor-gone-before-watch",
    "queue-restart",
    "expiry-while-holding",
    "suspended-while-holding",
    "reconnect-with-pending-watch",
    "release-under-connection-loss",
    "timeout-cleanup",
    "cancellation-cleanup",
    "foreign-child-ignored",
    "wrap-crossed",
    "session-reopened",
    "holder-crash-handover",
    "release-woke-many",
    "gave-up",
    "stray-release-refused",
    "reentrant-acquire",
};

// A node name whose sequence suffix is negative: "...lock--2147483648".
bool negative_sequence(const std::string& node) {
  size_t i = node.size();
  while (i > 0 && node[i - 1] >= '0' && node[i - 1] <= '9') --i;
  return i != node.size() && i >= 2 && node[i - 1] == '-' && node[i - 2] == '-';
}

void set(MarkSet* m, Mark k) { (*m)[static_cast<size_t>(k)] = true; }

// Marks read from the history alone.
void mark_history(const properties::History& h, MarkSet* m, std::set<uint32_t>* granted,
                  std::set<uint32_t>* timed_out, std::set<uint32_t>* cancelled) {
  std::set<uint32_t> holding;
  bool foreign = false;
  bool crashed_holder = false;
  for (const properties::Event& e : h.events()) {
    if (e.op == Op::kFault && e.text.rfind("foreign-child", 0) == 0) foreign = true;
    if (e.op == Op::kAcquire && e.type == Type::kInvoke) {
      for (uint32_t c : holding) {
        if (c != e.client) set(m, Mark::kContendedAcquire);
      }
    }
    if (e.op == Op::kAcquire && e.type == Type::kOk) {
      if (e.hold_count > 1) set(m, Mark::kReentrantAcquire);
      if (e.hold_count == 1) {
        holding.insert(e.client);
        granted->insert(e.client);
        if (foreign) set(m, Mark::kForeignChildIgnored);
        if (crashed_holder) set(m, Mark::kHolderCrashHandover);
      }
      if (negative_sequence(e.text)) set(m, Mark::kWrapCrossed);
    }
    if (e.op == Op::kAcquire && e.type == Type::kFail) {
      if (e.error == zk::Error::kOperationTimeout) timed_out->insert(e.client);
      if (e.error == zk::Error::kCancelled) cancelled->insert(e.client);
    }
    if (e.op == Op::kRelease && e.type == Type::kInvoke && e.hold_count <= 1) {
      holding.erase(e.client);
    }
    if (e.op == Op::kLost) {
      if (e.state == recipes::LockState::kLost) set(m, Mark::kExpiryWhileHolding);
      if (e.state == recipes::LockState::kSuspended) set(m, Mark::kSuspendedWhileHolding);
      holding.erase(e.client);
    }
    if (e.op == Op::kCrash) {
      if (holding.count(e.client) != 0) crashed_holder = true;
      holding.erase(e.client);
    }
    if (e.op == Op::kReopen) {
      set(m, Mark::kSessionReopened);
      holding.erase(e.client);
    }
    if (e.op == Op::kGiveUp) set(m, Mark::kGaveUp);
    if (e.op == Op::kStrayRelease && e.type == Type::kFail && e.error == zk::Error::kNothing) {
      set(m, Mark::kStrayReleaseRefused);
    }
  }
}

}  // namespace

const char* to_string(Mark m) {
  const int i = static_cast<int>(m);
  return i >= 0 && i < kMarkCount ? kNames[i] : "?";
}

bool is_rare(Mark m) {
  // A waiter's own node must vanish while it is queued: its session expired on the server while
  // the client, not yet told, was still waiting (an expiry or pause timed into a wait).
  return m == Mark::kQueueRestart;
}

MarkSet mark_run(const properties::History& history,
                 const std::map<uint32_t, recipes::RecipeStats>& stats,
                 const std::vector<properties::HerdSample>& herd) {
  MarkSet m{};
  std::set<uint32_t> granted;
  std::set<uint32_t> timed_out;
  std::set<uint32_t> cancelled;
  mark_history(history, &m, &granted, &timed_out, &cancelled);
  for (const auto& [client, s] : stats) {
    if (s.ambiguous_creates > 0) set(&m, Mark::kAmbiguousCreate);
    if (s.ambiguous_creates > 0 && granted.count(client) != 0) {
      set(&m, Mark::kAmbiguousCreateRecovered);
    }
    if (s.adopted > 0) set(&m, Mark::kLostReplyCreateAdopted);
    if (s.predecessor_gone > 0) set(&m, Mark::kPredecessorGoneBeforeWatch);
    if (s.restarts > 0) set(&m, Mark::kQueueRestart);
    if (s.session_wakeups > 0) set(&m, Mark::kReconnectWithPendingWatch);
    if (s.remove_retries > 0) set(&m, Mark::kReleaseUnderConnectionLoss);
    if (s.cleanups > 0 && timed_out.count(client) != 0) set(&m, Mark::kTimeoutCleanup);
    if (s.cleanups > 0 && cancelled.count(client) != 0) set(&m, Mark::kCancellationCleanup);
  }
  for (const properties::HerdSample& r : herd) {
    if (r.notifications > 1) set(&m, Mark::kReleaseWokeMany);
  }
  return m;
}

void Coverage::add(const MarkSet& marks) {
  ++runs_;
  for (size_t i = 0; i < marks.size(); ++i) counts_[i] += marks[i] ? 1 : 0;
}

std::vector<Mark> Coverage::missing() const {
  std::vector<Mark> out;
  for (int i = 0; i < kMarkCount; ++i) {
    if (counts_[static_cast<size_t>(i)] == 0) out.push_back(static_cast<Mark>(i));
  }
  return out;
}

std::string Coverage::summary() const {
  std::string out;
  for (int i = 0; i < kMarkCount; ++i) {
    const auto m = static_cast<Mark>(i);
    char line[128];
    std::snprintf(line, sizeof line, "  %-31s %8llu run%s%s\n", to_string(m),
                  static_cast<unsigned long long>(count(m)), count(m) == 1 ? "" : "s",
                  is_rare(m) ? " (rare)" : "");
    out += line;
  }
  return out;
}

}  // namespace lockstep::explore
