// Faults as data: inject() queues one; start_fault / end_fault carry it out.
#include "sim/client.h"
#include "sim/world_impl.h"
#include "zk/invariant.h"

namespace lockstep::sim {

const char* to_string(FaultKind k) {
  switch (k) {
    case FaultKind::kConnectionLoss: return "connection-loss";
    case FaultKind::kLoseNextReply: return "lose-next-reply";
    case FaultKind::kExpireSession: return "expire-session";
    case FaultKind::kAbandonSession: return "abandon-session";
    case FaultKind::kPause: return "pause";
    case FaultKind::kPartition: return "partition";
    case FaultKind::kDelay: return "delay";
    case FaultKind::kLaggingFollower: return "lagging-follower";
    case FaultKind::kServerRestart: return "server-restart";
    case FaultKind::kCancel: return "cancel";
    case FaultKind::kForeignChild: return "foreign-child";
    case FaultKind::kCrash: return "crash";
    case FaultKind::kCloseSession: return "close-session";
    case FaultKind::kLoseNextRequest: return "lose-next-request";
  }
  return "?";
}

std::string describe(const Fault& f) {
  std::string s = to_string(f.kind);
  if (f.client != 0) s += " c" + std::to_string(f.client);
  if (f.server != 0) s += " s" + std::to_string(f.server);
  if (f.duration.us != 0) s += " for " + zk::to_string(f.duration);
  if (f.extra.us != 0) s += " extra " + zk::to_string(f.extra);
  if (!f.name.empty()) s += " " + f.name;
  return s;
}

void World::Impl::inject(Fault f) {
  LOCKSTEP_ASSERT(f.at >= now());
  faults_.push_back(std::move(f));
  const Fault& g = faults_.back();
  push(Event{g.at, 0, EventTag::kFault, 0, faults_.size() - 1, 0});
}

void World::Impl::start_fault(size_t index) {
  const Fault f = faults_[index];
  const std::string text = describe(f);
  log(f.client, "fault", static_cast<uint64_t>(f.kind), index, text, [&] { return text; });
  const bool needs_client = f.kind != FaultKind::kLaggingFollower &&
                            f.kind != FaultKind::kServerRestart &&
                            f.kind != FaultKind::kForeignChild;
  LOCKSTEP_ASSERT(!needs_client || (f.client >= 1 && f.client <= client_count()));
  if (needs_client && client(f.client).crashed()) return;
  switch (f.kind) {
    case FaultKind::kConnectionLoss: client(f.client).fault_connection_loss(); break;
    case FaultKind::kLoseNextReply: client(f.client).fault_lose_next_reply(); break;
    case FaultKind::kExpireSession: expire(client(f.client).id(), "injected"); break;
    case FaultKind::kAbandonSession: client(f.client).fault_abandon(); break;
    case FaultKind::kPause: client(f.client).set_paused(true); break;
    case FaultKind::kPartition: client(f.client).set_partitioned(true); break;
    case FaultKind::kDelay: client(f.client).add_delay(f.extra, now() + f.duration); break;
    case FaultKind::kLaggingFollower:
      LOCKSTEP_ASSERT(f.server >= 1 && f.server <= servers_.size());
      server(f.server).lag = f.extra;
      server(f.server).lag_until = now() + f.duration;
      break;
    case FaultKind::kServerRestart:
      LOCKSTEP_ASSERT(f.server >= 1 && f.server <= servers_.size());
      server_restart_begin(f.server);
      break;
    case FaultKind::kCancel: client(f.client).cancel_task(f.name); break;
    case FaultKind::kForeignChild: foreign_create(f.name); break;
    case FaultKind::kCrash: client(f.client).crash(); break;
    case FaultKind::kCloseSession: (void)client(f.client).close(); break;
    case FaultKind::kLoseNextRequest: client(f.client).fault_lose_next_request(); break;
  }
  const bool timed = f.kind == FaultKind::kPause || f.kind == FaultKind::kPartition ||
                     f.kind == FaultKind::kServerRestart;
  if (timed) push(Event{now() + f.duration, 0, EventTag::kFaultEnd, 0, index, 0});
}

void World::Impl::end_fault(size_t index) {
  const Fault& f = faults_[index];
  log(f.client, "fault-end", static_cast<uint64_t>(f.kind), index, {}, [&] { return describe(f); });
  switch (f.kind) {
    case FaultKind::kPause:
      if (!client(f.client).crashed()) client(f.client).set_paused(false);
      break;
    case FaultKind::kPartition:
      if (!client(f.client).crashed()) client(f.client).set_partitioned(false);
      break;
    case FaultKind::kServerRestart: server_restart_end(f.server); break;
    default: break;
  }
}

}  // namespace lockstep::sim
