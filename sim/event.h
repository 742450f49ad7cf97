// lockstep simulator: what the scheduler queues (Event) and what it asks the world about each
// candidate before a choice (EventFilter). See scheduler.h.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/world.h"

namespace lockstep::sim {

enum class EventTag : uint8_t {
  kResume,       // client: resume the coroutine at address a
  kTimer,        // client: fire executor timer a
  kToServer,     // servers: deliver connection a's requests up to message seq b
  kToClient,     // client: deliver connection a's replies up to message seq b
  kApply,        // servers: server a applies committed transactions up to zxid b
  kExpire,       // servers: session a expires if its expiry token is still b
  kClientTimer,  // client: internal timer of kind a (ClientTimer) with token b
  kFault,        // world: fault a starts
  kFaultEnd,     // world: fault a ends (pause, partition, restart, ...)
  kReap,         // servers: the leader's container/TTL check (ContainerManager)
};

struct Event {
  Time at;
  uint64_t seq = 0;
  EventTag type = EventTag::kResume;
  uint32_t client = 0;  // the client process that runs it; 0 = servers / world
  uint64_t a = 0;
  uint64_t b = 0;
};  // 40 bytes: the heap moves these around

enum class Disposition : uint8_t { kRun, kDrop, kDefer };

class EventFilter {
 public:
  virtual Disposition classify(const Event& e) = 0;
  virtual void defer(const Event& e) = 0;
  // Whose state classify() reads for `e`: a client index, or 0 for the servers' own state.
  virtual uint32_t owner(const Event& e) = 0;
  // Moves into *owners the owners whose state classify() reads changed since the last call (a
  // timer cancelled or re-armed, a connection closed, a client paused, partitioned or crashed:
  // that client; a session's token, hearing or existence: 0). The scheduler classifies again
  // only their candidates and the ones that became due, not every candidate at every step.
  virtual void take_changes(std::vector<uint32_t>* owners) = 0;

 protected:
  ~EventFilter() = default;
};

}  // namespace lockstep::sim
