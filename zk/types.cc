#include "zk/types.h"

#include <bit>
#include <cstdio>
#include <cstring>

#include "zk/error.h"

namespace zk {

namespace {

// The value of eight ASCII digits (s[0] most significant), or -1 if one is not a digit. Word at
// a time: recipes parse every child name of every listing.
int64_t eight_digits(const char* s) {
  uint64_t x;
  std::memcpy(&x, s, 8);
  if (std::endian::native != std::endian::little) x = __builtin_bswap64(x);
  constexpr uint64_t kHigh = 0xF0F0F0F0F0F0F0F0ull, kZeros = 0x3030303030303030ull;
  // Every byte is 0x30..0x3F, and adding 6 keeps it below 0x40: '0'..'9'.
  if ((x & kHigh) != kZeros || ((x + 0x0606060606060606ull) & kHigh) != kZeros) return -1;
  x -= kZeros;
  x = x * 10 + (x >> 8);  // byte pairs: 10 * d[2i] + d[2i+1]
  constexpr uint64_t kMask = 0x000000FF000000FFull;
  x = ((x & kMask) * (100 + (1000000ull << 32)) + ((x >> 16) & kMask) * (1 + (10000ull << 32))) >>
      32;
  return static_cast<int64_t>(x);
}

}  // namespace

bool parse_sequence_suffix(std::string_view s, Sequence* out) {
  bool negative = false;
  if (!s.empty() && s.front() == '-') {
    negative = true;
    s.remove_prefix(1);
    // %010d of a negative number: '-' and 9 digits, or '-' and 10 for magnitudes >= 10^9 (so
    // never '-' and 10 digits from 0).
    if (s.size() != 9 && s.size() != 10) return false;
    if (s.size() == 10 && s.front() == '0') return false;
  } else if (s.size() != 10) {
    return false;
  }
  int64_t v = 0;
  size_t i = 0;
  if (s.size() >= 8) {
    v = eight_digits(s.data());
    if (v < 0) return false;
    i = 8;
  }
  for (; i < s.size(); ++i) {
    const char c = s[i];
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
    case CreateMode::kContainer: return "container";
    case CreateMode::kPersistentWithTtl: return "persistent-with-ttl";
    case CreateMode::kPersistentSequentialWithTtl: return "persistent-sequential-with-ttl";
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
