#include "zk/types.h"

#include <cstdio>

#include "zk/error.h"

namespace zk {

bool parse_sequence_suffix(std::string_view s, Sequence* out) {
  bool negative = false;
  if (!s.empty() && s.front() == '-') {
    negative = true;
    s.remove_prefix(1);
    // %010d of a negative number: '-' and 9 digits, or '-' and 10 for magnitudes >= 10^9.
    if (s.size() != 9 && s.size() != 10) return false;
  } else if (s.size() != 10) {
    return false;
  }
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (negative) v = -v;
  if (v < INT32_MIN || v > INT32_MAX) return false;
  if (negative && v == 0) return false;
  *out = Sequence{static_cast<int32_t>(v)};
  return true;
}

std::string format_sequence(Sequence seq) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%010d", seq.value);
  return buf;
}

std::string to_string(SessionState s) {
  switch (s) {
    case SessionState::kConnecting: return "connecting";
    case SessionState::kConnected: return "connected";
    case SessionState::kExpired: return "expired";
    case SessionState::kClosed: return "closed";
  }
  return "?";
}

std::string to_string(EventType t) {
  switch (t) {
    case EventType::kCreated: return "created";
    case EventType::kDeleted: return "deleted";
    case EventType::kDataChanged: return "data-changed";
    case EventType::kChildrenChanged: return "children-changed";
    case EventType::kSession: return "session";
  }
  return "?";
}

std::string to_string(CreateMode m) {
  switch (m) {
    case CreateMode::kPersistent: return "persistent";
    case CreateMode::kEphemeral: return "ephemeral";
    case CreateMode::kPersistentSequential: return "persistent-sequential";
    case CreateMode::kEphemeralSequential: return "ephemeral-sequential";
  }
  return "?";
}

std::string to_string(Duration d) {
  char buf[48];
  if (d.us % 1000000 == 0) {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(d.us / 1000000));
  } else if (d.us % 1000 == 0) {
    std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(d.us / 1000));
  } else {
    std::snprintf(buf, sizeof buf, "%lldus", static_cast<long long>(d.us));
  }
  return buf;
}

const char* error_name(Error e) {
  switch (e) {
    case Error::kOk: return "ZOK";
    case Error::kSystemError: return "ZSYSTEMERROR";
    case Error::kRuntimeInconsistency: return "ZRUNTIMEINCONSISTENCY";
    case Error::kDataInconsistency: return "ZDATAINCONSISTENCY";
    case Error::kConnectionLoss: return "ZCONNECTIONLOSS";
    case Error::kMarshallingError: return "ZMARSHALLINGERROR";
    case Error::kUnimplemented: return "ZUNIMPLEMENTED";
    case Error::kOperationTimeout: return "ZOPERATIONTIMEOUT";
    case Error::kBadArguments: return "ZBADARGUMENTS";
    case Error::kInvalidState: return "ZINVALIDSTATE";
    case Error::kApiError: return "ZAPIERROR";
    case Error::kNoNode: return "ZNONODE";
    case Error::kNoAuth: return "ZNOAUTH";
    case Error::kBadVersion: return "ZBADVERSION";
    case Error::kNoChildrenForEphemerals: return "ZNOCHILDRENFOREPHEMERALS";
    case Error::kNodeExists: return "ZNODEEXISTS";
    case Error::kNotEmpty: return "ZNOTEMPTY";
    case Error::kSessionExpired: return "ZSESSIONEXPIRED";
    case Error::kInvalidCallback: return "ZINVALIDCALLBACK";
    case Error::kInvalidAcl: return "ZINVALIDACL";
    case Error::kAuthFailed: return "ZAUTHFAILED";
    case Error::kClosing: return "ZCLOSING";
    case Error::kNothing: return "ZNOTHING";
    case Error::kSessionMoved: return "ZSESSIONMOVED";
    case Error::kCancelled: return "LOCKSTEP_CANCELLED";
  }
  return "ZUNKNOWN";
}

}  // namespace zk
