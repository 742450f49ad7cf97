// lockstep contract: value types shared by recipes, the simulator and the real client.
//
// Everything a recipe may observe about time, identities and znodes is a strong type here, so
// that a session id is never added to a sequence number by mistake. Time is virtual in the
// simulator and a monotonic clock on the real client; recipes cannot tell which. All types are
// plain values: cheap to copy, totally ordered where ordering means something, and printable.
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "zk/names.h"

namespace zk {

// A span of time in microseconds. Negative durations are legal intermediate values.
struct Duration {
  int64_t us = 0;

  constexpr auto operator<=>(const Duration&) const = default;
  constexpr Duration operator+(Duration o) const { return {us + o.us}; }
  constexpr Duration operator-(Duration o) const { return {us - o.us}; }
  constexpr Duration operator*(int64_t k) const { return {us * k}; }
  constexpr Duration operator/(int64_t k) const { return {us / k}; }
  constexpr int64_t ms() const { return us / 1000; }
};

constexpr Duration microseconds(int64_t n) { return {n}; }
constexpr Duration milliseconds(int64_t n) { return {n * 1000}; }
constexpr Duration seconds(int64_t n) { return {n * 1000 * 1000}; }

// A point in time, in microseconds since the context's epoch (the start of the simulation, or
// the moment the real client's context was created).
struct Time {
  int64_t us = 0;

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Duration d) const { return {us + d.us}; }
  constexpr Time operator-(Duration d) const { return {us - d.us}; }
  constexpr Duration operator-(Time o) const { return {us - o.us}; }
};

// The point in time that never comes: a deadline of Time::never() means "no deadline".
constexpr Time kNever{INT64_MAX};

// ZooKeeper's 64-bit session id. Ids are not ordered by creation time (the real server mixes
// the server id and a timestamp into the high bits), so recipes must never compare them to
// decide anything but equality.
struct SessionId {
  uint64_t value = 0;
  constexpr auto operator<=>(const SessionId&) const = default;
  constexpr bool valid() const { return value != 0; }
};

// A ZooKeeper transaction id: one global order over all writes.
struct Zxid {
  int64_t value = 0;
  constexpr auto operator<=>(const Zxid&) const = default;
};

// The suffix ZooKeeper appends to a sequential node: a signed 32-bit per-parent counter,
// printed as %010d (so past INT32_MAX it is "-2147483648").
struct Sequence {
  int32_t value = 0;
  constexpr auto operator<=>(const Sequence&) const = default;
};

// A znode's data version (or cversion); -1 in a delete/set means "any version".
using Version = int32_t;
constexpr Version kAnyVersion = -1;

// ZooKeeper's Stat structure, field for field.
struct Stat {
  Zxid czxid;
  Zxid mzxid;
  Zxid pzxid;
  int64_t ctime_ms = 0;
  int64_t mtime_ms = 0;
  Version version = 0;
  Version cversion = 0;
  Version aversion = 0;
  SessionId ephemeral_owner;  // 0 for persistent nodes
  int32_t data_length = 0;
  int32_t num_children = 0;

  bool operator==(const Stat&) const = default;
};

// ZooKeeper's create modes. The last three are ZooKeeper 3.5's extended types:
//   kContainer   a persistent node the server deletes once it has had a child and has none
//                left (ContainerManager, every znode.container.checkIntervalMs on the leader;
//                a container that never had a child is kept);
//   kPersistentWithTtl, kPersistentSequentialWithTtl   a persistent node the server deletes
//                once it has no children and was not modified for longer than its TTL (create's
//                `ttl`; the server must run with zookeeper.extendedTypesEnabled=true).
// The server records the type in its own copy of the node's ephemeralOwner: kContainerOwner for
// a container, kTtlOwnerMark | ttl_ms for a TTL node (is_session_owner tells a real session
// apart). Clients never see those marks: the Stat they are given shows ephemeral_owner 0 for
// containers and TTL nodes (measured on Debian's 3.8.0: DataTree.getClientEphemeralOwner).
enum class CreateMode : uint8_t {
  kPersistent,
  kEphemeral,
  kPersistentSequential,
  kEphemeralSequential,
  kContainer,
  kPersistentWithTtl,
  kPersistentSequentialWithTtl,
};

constexpr bool is_ephemeral(CreateMode m) {
  return m == CreateMode::kEphemeral || m == CreateMode::kEphemeralSequential;
}
constexpr bool is_sequential(CreateMode m) {
  return m == CreateMode::kPersistentSequential || m == CreateMode::kEphemeralSequential ||
         m == CreateMode::kPersistentSequentialWithTtl;
}
constexpr bool is_container(CreateMode m) { return m == CreateMode::kContainer; }
constexpr bool has_ttl(CreateMode m) {
  return m == CreateMode::kPersistentWithTtl || m == CreateMode::kPersistentSequentialWithTtl;
}

// The ephemeralOwner values ZooKeeper's EphemeralType gives the extended types.
inline constexpr SessionId kContainerOwner{0x8000000000000000ull};
inline constexpr uint64_t kTtlOwnerMark = 0xFF00000000000000ull;  // | ttl in ms
// The largest TTL the encoding holds (EphemeralType.TTL's maximum: 2^40 - 1 ms).
inline constexpr Duration kMaxTtl{int64_t{0xFFFFFFFFFF} * 1000};
constexpr SessionId ttl_owner(Duration ttl) {
  return SessionId{kTtlOwnerMark | static_cast<uint64_t>(ttl.us / 1000)};
}
// Is `owner` (a Stat's ephemeral_owner) a session, not 0 nor a container's or TTL node's mark?
constexpr bool is_session_owner(SessionId owner) {
  return owner.valid() && owner != kContainerOwner && (owner.value >> 56) != 0xFF;
}

// The session's state as the client library sees it. Mirrors the C client's states:
// kConnecting is "disconnected, trying to reconnect" (the old session may still be alive on the
// server), kExpired and kClosed are final: every later operation fails with kInvalidState.
enum class SessionState : uint8_t {
  kConnecting,
  kConnected,
  kExpired,
  kClosed,
};

// What woke a watch.
enum class EventType : uint8_t {
  kCreated,          // exists() watch: the node was created
  kDeleted,          // any watch: the node was deleted
  kDataChanged,      // exists()/get_data() watch: set_data on the node
  kChildrenChanged,  // get_children() watch: a child was created or deleted
  kSession,          // a session event; `state` tells which (not a node event)
};

struct WatchEvent {
  EventType type = EventType::kSession;
  SessionState state = SessionState::kConnected;
  std::string path;  // the watched path; empty for session events on a session subscription
  Zxid zxid;         // the transaction that fired it (0 for session events)
  // Session events on a session subscription: the session the event is about (0 while it has
  // not connected). A handle that reopens gets a new session, and an event about the old one may
  // reach a subscriber only after that.
  SessionId session;
};

// Parses the suffix the server appended to a sequential node: exactly what follows the prefix
// the creator asked for ("0000000042" -> 42, "-2147483648" -> INT32_MIN, "-000000007" -> -7).
// The caller strips its own prefix first: a suffix cannot be found from the name alone, because
// a prefix ending in '-' (as in "lock-") makes "lock--1000000000" ambiguous. Returns false for
// anything the server could not have produced.
bool parse_sequence_suffix(std::string_view suffix, Sequence* out);

// Formats a sequence the way the server does: %010d.
std::string format_sequence(Sequence seq);

std::string to_string(SessionState s);
std::string to_string(EventType t);
std::string to_string(CreateMode m);
std::string to_string(Duration d);  // "1.250s", "12ms", "40us"

}  // namespace zk
