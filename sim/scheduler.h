// lockstep simulator: the event queue and the one choice function.
//
// The Scheduler owns the queue of pending events, ordered by (time, insertion number), and the
// Strategy that answers every nondeterministic decision of a run. Each step takes the events
// due at the earliest instant (in insertion order) as candidates; when there are several,
// choose(kNextEvent, n) picks the one that runs. Events pushed for the current instant join
// the candidates. Before a choice, every candidate is classified by the EventFilter: dead ones
// (cancelled timers, messages of a closed connection) are dropped, events of a paused client
// are handed back for deferral. Every decision with n >= 2 is recorded and hashed into the log.
// An event alone at its instant (most are) is classified the same way without passing through
// the ready queue.
//
// Event-aware strategies (Strategy::observes_events) see each kNextEvent choice as a list of
// EventInfo and are told what every event did once it ran. The scheduler derives that from
// what passes through it: the event's tag and client, the events it queued and the choices it
// asked for while it ran (see observe_push / record). A client event that asks for a server
// choice (ambiguous outcome, ping phase, server), queues a server-side event, an event of
// another client, a delivery on a connection not seen before (a new connection) or a client
// timer (reconnect, connect timeout, detect: a connection opened or closed) is marked
// kTouchesServer. That catches every path by which client code reaches the ensemble's shared
// state except closing a connection of a session the server already no longer hears (a
// partitioned client): search code must treat scopes with partitions conservatively. When such a
// strategy says stopped(), next() drops every pending event and returns false from then on.
//
// Invariants: now() never decreases; an event is never run before its time; candidates are
// kept in insertion order, so the same strategy answers reproduce the same run.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/event.h"
#include "sim/ready_queue.h"
#include "sim/world.h"

namespace lockstep::sim {

class Scheduler {
 public:
  Scheduler(Strategy* strategy, EventLog* log);

  Time now() const { return now_; }
  // Queues `e` (at is clamped to now). Returns its insertion number.
  uint64_t push(Event e);
  // The one choice function. Returns 0 without asking when n < 2.
  uint32_t choose(ChoiceKind kind, uint32_t n);
  // Takes the next event to run if one is due at or before `limit`; false otherwise.
  bool next(EventFilter& filter, Time limit, Event* out);
  // Moves the clock to t when nothing is due before it. REQUIRES: t >= now().
  void advance_to(Time t);
  bool idle() const { return pending_.empty() && ready_.empty() && !has_lone_; }
  // The strategy ended the run early and every pending event was dropped (expiries included):
  // from then on the world is frozen, not a run whose timing invariants can be checked.
  bool stopped_by_strategy() const { return stopped_by_strategy_; }
  // REQUIRES: the list is kept (set_keep_decisions, on unless WorldOptions::audit is off).
  const std::vector<Decision>& decisions() const {
    LOCKSTEP_ASSERT_MSG(keep_decisions_,
                        "the decision list was asked of a run that does not keep "
                        "it (WorldOptions::audit is off)");
    return decisions_;
  }
  // Off: choices are made and logged but not listed (WorldOptions::audit). Set before the first.
  void set_keep_decisions(bool on) { keep_decisions_ = on; }
  // The events still to run, as a multiset of (time from now, tag, client, operands): a resume's
  // coroutine address is left out, and so is every insertion number (World::state_digest).
  uint64_t pending_digest() const;

 private:
  // The pending events (pending_, queue_sorted_; see scheduler.cc): the earliest, taking it,
  // adding.
  const Event& queue_front() const { return queue_sorted_ ? pending_.back() : pending_.front(); }
  void queue_pop();
  void queue_push(const Event& e);
  bool alone_at_front() const;
  void collect_due();
  void filter_ready(EventFilter& filter);
  void flush_lone();
  // Classifies `e`, the only candidate at now_ (no choice to make), as ready_ would: true and
  // *out = e when it runs; false when it was dropped or deferred.
  bool take_alone(EventFilter& filter, const Event& e, Event* out);
  void record(ChoiceKind kind, uint32_t n, uint32_t chosen);
  // Event-aware strategies only.
  uint32_t choose_event();
  EventInfo info(const Event& e) const;
  void observe_push(const Event& e);
  void finish_running();

  Strategy* strategy_;
  EventLog* log_;
  const bool observing_;  // strategy_->observes_events()
  bool stopped_by_strategy_ = false;
  bool running_ = false;               // observing_ and an event returned by next() is running
  EventInfo current_;                  // that event, with the footprint observed so far
  std::vector<EventInfo> candidates_;  // scratch for choose_event
  std::vector<uint32_t> conn_client_;  // connection id -> the client seen using it (0 unknown)
  Time now_{};
  uint64_t seq_ = 0;
  // The events not yet due at now_: sorted latest first while there are few, else a 4-ary
  // min-heap on (at, seq) (scheduler.cc).
  std::vector<Event> pending_;
  bool queue_sorted_ = true;  // pending_'s layout: sorted (true) or a heap
  ReadyQueue ready_;         // candidates due at now_, in insertion order
  // A candidate due at now_ queued when there was no other (a coroutine resumed by what just
  // ran, most often): kept out of ready_ until a second one comes, and then put in it first.
  // When set, ready_ is empty and nothing in pending_ is due at now_.
  Event lone_;
  bool has_lone_ = false;
  std::vector<uint32_t> changes_;  // scratch for EventFilter::take_changes
  std::vector<Decision> decisions_;
  bool keep_decisions_ = true;
};

}  // namespace lockstep::sim
