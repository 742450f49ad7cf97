#include "properties/history.h"

#include <cinttypes>
#include <cstdio>

namespace lockstep::properties {
namespace {

// Local names, so that the history (and the checkers) need only the recipes' header.
const char* state_name(recipes::LockState s) {
  switch (s) {
    case recipes::LockState::kIdle: return "idle";
    case recipes::LockState::kAcquiring: return "acquiring";
    case recipes::LockState::kHeld: return "held";
    case recipes::LockState::kSuspended: return "suspended";
    case recipes::LockState::kLost: return "lost";
  }
  return "?";
}

const char* role_name(recipes::Role r) { return recipes::to_string(r); }

}  // namespace

const char* to_string(Type t) {
  switch (t) {
    case Type::kInvoke: return "invoke";
    case Type::kOk: return "ok";
    case Type::kFail: return "fail";
    case Type::kInfo: return "info";
  }
  return "?";
}

const char* to_string(Op op) {
  switch (op) {
    case Op::kAcquire: return "acquire";
    case Op::kRelease: return "release";
    case Op::kStrayRelease: return "stray-release";
    case Op::kEnter: return "enter";
    case Op::kLeave: return "leave";
    case Op::kLost: return "lost";
    case Op::kProbe: return "probe";
    case Op::kReopen: return "reopen";
    case Op::kGiveUp: return "give-up";
    case Op::kDone: return "done";
    case Op::kCrash: return "crash";
    case Op::kFault: return "fault";
    case Op::kSession: return "session";
    case Op::kReport: return "report";
    case Op::kCapacity: return "capacity";
  }
  return "?";
}

uint64_t History::add(Event e) {
  e.index = events_.size();
  events_.push_back(std::move(e));
  return events_.back().index;
}

std::string format_time(zk::Time t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "t=%" PRId64 ".%06" PRId64, t.us / 1000000, t.us % 1000000);
  return buf;
}

std::string describe(const Event& e) {
  char head[112];
  char task[16] = "";
  if (e.task != 0) std::snprintf(task, sizeof task, ".t%u", e.task);
  std::snprintf(head, sizeof head, "#%" PRIu64 " %s c%u%s s=0x%" PRIx64 " %s %s", e.index,
                format_time(e.at).c_str(), e.client, task, e.session.value, to_string(e.type),
                to_string(e.op));
  std::string out = head;
  const bool lockish = e.op == Op::kAcquire || e.op == Op::kRelease || e.op == Op::kStrayRelease;
  if (e.op == Op::kAcquire && e.type == Type::kInvoke && e.role != recipes::Role::kExclusive) {
    out += std::string(" role=") + role_name(e.role);
  }
  if (e.type == Type::kFail && e.error != zk::Error::kOk) {
    out += std::string(" error=") + zk::error_name(e.error);
  }
  if (e.token != 0 || e.op == Op::kEnter || e.op == Op::kLeave) {
    out += " token=" + std::to_string(e.token);
  }
  if (e.op == Op::kAcquire && e.type == Type::kOk) {
    out += " hold_count=" + std::to_string(e.hold_count);
  }
  if (e.op == Op::kRelease && e.type == Type::kInvoke) {
    out += " depth=" + std::to_string(e.hold_count);
  }
  if ((lockish && e.type != Type::kInvoke && !(e.op == Op::kAcquire && e.type == Type::kOk)) ||
      e.op == Op::kLost) {
    out += std::string(" state=") + state_name(e.state);
  }
  if (e.op == Op::kSession) out += " " + zk::to_string(e.session_state);
  if (!e.text.empty()) out += " " + e.text;
  return out;
}

std::string History::to_text() const {
  std::string out;
  for (const Event& e : events_) {
    out += describe(e);
    out += '\n';
  }
  return out;
}

}  // namespace lockstep::properties
