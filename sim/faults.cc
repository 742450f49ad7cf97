// Faults as data: inject() queues one; start_fault / end_fault carry it out.
#include "sim/client.h"
#include "sim/world_impl.h"
#include "zk/invariant.h"

namespace lockstep::sim {

const char* to_string(FaultKind k) { return zk::fault_name(k); }

std::string describe(const Fault& f) {
  std::string s = to_string(f.kind);
  if (f.client != 0) s += " c" + std::to_string(f.client);
  if (f.server != 0) s += " s" + std::to_string(f.server);
  if (f.duration.us != 0) s += " for " + zk::to_string(f.duration);
  if (f.extra.us != 0) s += " extra " + zk::to_string(f.extra);
  // The simulator's own parameters first, then the real driver's (kept in the text so that a
  // scenario's report says what each backend was asked to do).
  if (!f.task.empty()) s += " " + f.task;
  if (!f.path.empty()) s += " " + f.path;
  if (zk::takes(f.kind, zk::kParamCount)) s += " to " + std::to_string(f.count);
  if (f.target != zk::FaultTarget::kIndexed)
    s += std::string(" ") + zk::fault_target_name(f.target);
  if (f.requests != zk::FaultRequests::kAny) {
    s += std::string(" ") + zk::fault_requests_name(f.requests);
  }
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
  started_faults_.push_back(index);
  const std::string text = describe(f);
  log(f.client, "fault", static_cast<uint64_t>(f.kind), index, text, [&] { return text; });
  const bool needs_client = zk::takes(f.kind, zk::kParamClient);
  LOCKSTEP_ASSERT(!needs_client || (f.client >= 1 && f.client <= client_count()));
  if (needs_client && client(f.client).crashed()) return;
  switch (f.kind) {
    case FaultKind::kConnectionLoss: client(f.client).fault_connection_loss(); break;
    case FaultKind::kLoseNextReply: client(f.client).fault_lose_next_reply(f.requests); break;
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
    case FaultKind::kCancel: client(f.client).cancel_task(f.task); break;
    case FaultKind::kForeignChild: foreign_create(f.path); break;
    case FaultKind::kCrash: client(f.client).crash(); break;
    case FaultKind::kCloseSession: (void)client(f.client).close(); break;
    case FaultKind::kLoseNextRequest: client(f.client).fault_lose_next_request(); break;
    case FaultKind::kStall: client(f.client).arm_stall(f.task, f.duration); break;
    case FaultKind::kSetCapacity: foreign_set(f.path, std::to_string(f.count)); break;
    case FaultKind::kDeleteNode: foreign_delete_oldest(f.path); break;
    case FaultKind::kDeleteDir: foreign_delete_tree(f.path); break;
  }
  const bool timed = f.kind == FaultKind::kPause || f.kind == FaultKind::kPartition ||
                     f.kind == FaultKind::kServerRestart || f.kind == FaultKind::kStall;
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
    case FaultKind::kStall: client(f.client).disarm_stall(f.task); break;
    default: break;
  }
}

}  // namespace lockstep::sim
