// Connections and their two FIFO channels.
#include <algorithm>

#include "sim/client.h"
#include "sim/world_impl.h"

namespace lockstep::sim {

const char* op_name(Op op) {
  switch (op) {
    case Op::kCreate: return "create";
    case Op::kDelete: return "delete";
    case Op::kExists: return "exists";
    case Op::kGetData: return "get_data";
    case Op::kSetData: return "set_data";
    case Op::kGetChildren: return "get_children";
    case Op::kSync: return "sync";
    case Op::kClose: return "close";
  }
  return "?";
}

size_t Request::frame_bytes() const {
  const size_t header = 8;  // xid, type
  const size_t p = 4 + path.size();
  switch (op) {
    case Op::kCreate:  // acl world:anyone, flags; CreateTTLRequest adds the ttl
      return header + p + 4 + data.size() + 27 + 4 + (zk::has_ttl(mode) ? 8 : 0);
    case Op::kDelete: return header + p + 4;                         // version
    case Op::kSetData: return header + p + 4 + data.size() + 4;
    case Op::kExists:
    case Op::kGetData:
    case Op::kGetChildren: return header + p + 1;  // watch flag
    case Op::kSync: return header + p;
    case Op::kClose: return header;
  }
  return header + p;
}

size_t DownMsg::frame_bytes() const {
  const size_t header = 16;  // xid, zxid, err
  const size_t stat_bytes = 68;
  size_t n = header + 4 + path.size() + 4 + data.size() + stat_bytes + 4;
  n += children.wire_bytes();
  return n;
}

Duration World::Impl::latency(uint32_t client_index) {
  const uint32_t buckets = std::max<uint32_t>(opt_.latency_buckets, 1);
  const uint32_t b = choose(ChoiceKind::kLatency, buckets);
  const Duration span = opt_.latency_max - opt_.latency_min;
  Duration d = opt_.latency_min;
  if (buckets > 1) d = d + span * b / (buckets - 1);
  if (client_index == 0 || !delayed_) return d;  // between servers, or no delay ever added
  return d + client(client_index).extra_delay(now());
}

Connection* World::Impl::conn(uint64_t id) {
  return id < conns_.size() ? conns_[id].get() : nullptr;
}

Connection& World::Impl::open_connection(uint32_t client_index, uint32_t server_id) {
  auto c = std::make_unique<Connection>();
  if (conns_.empty()) conns_.emplace_back();  // id 0 means "no connection"
  c->id = conns_.size();
  c->client = client_index;
  c->server = server_id;
  Connection& ref = *c;
  conns_.push_back(std::move(c));
  return ref;
}

void World::Impl::push_delivery(Connection& c, bool up, Time at, uint64_t seq) {
  push(Event{at, 0, up ? EventTag::kToServer : EventTag::kToClient, up ? 0 : c.client, c.id, seq});
}

UpMsg& World::Impl::enqueue_up(Connection& c) {
  const Time at = std::max(now() + latency(c.client), c.up_last);
  c.up_last = at;
  UpMsg& m = c.up.emplace_back();
  m.seq = ++c.up_seq;
  m.arrival = at;
  push_delivery(c, true, at, c.up_seq);
  return m;
}

void World::Impl::send_up(Connection& c, UpMsg&& m) {
  if (!c.client_open || !c.server_open) return;
  UpMsg& slot = enqueue_up(c);
  m.seq = slot.seq;
  m.arrival = slot.arrival;
  slot = std::move(m);
}

void World::Impl::send_request(Connection& c, Request&& r) {
  if (!c.client_open || !c.server_open) return;
  UpMsg& slot = enqueue_up(c);
  slot.type = UpType::kRequest;
  slot.req = std::move(r);
}

void World::Impl::send_down(Connection& c, DownMsg&& m) {
  if (!c.client_open) return;
  dispatch_down(c, c.down.emplace_back(std::move(m)));
}

void World::Impl::dispatch_down(Connection& c, DownMsg& m) {
  LOCKSTEP_ASSERT(&m == &c.down.back());
  const Time at = std::max(now() + latency(c.client), c.down_last);
  c.down_last = at;
  m.seq = ++c.down_seq;
  m.arrival = at;
  push_delivery(c, false, at, c.down_seq);
}

void World::Impl::deliver_up(uint64_t conn_id, uint64_t seq) {
  Connection* c = conn(conn_id);
  while (c != nullptr && c->server_open && !c->up.empty() && c->up.front().seq <= seq) {
    // Received where it lies (no move of the message): nothing the server does pushes onto
    // this channel, and a close empties it only as server_receive's last act.
    UpMsg& m = c->up.front();
    const uint64_t received = m.seq;
    server_receive(*c, m);
    if (!c->up.empty() && c->up.front().seq == received) c->up.pop_front();
  }
}

void World::Impl::deliver_down(uint64_t conn_id, uint64_t seq) {
  Connection* c = conn(conn_id);
  while (c != nullptr && c->client_open && !c->down.empty() && c->down.front().seq <= seq) {
    DownMsg& front = c->down.front();
    if (front.type == DownType::kReply || front.type == DownType::kNotify) {
      // Received where it lies (no move of the message): a reply completes a request and a
      // notification fires watches, and either only queues what follows (a resumed coroutine,
      // a callback's work), so nothing is pushed onto this channel meanwhile. A reply over the
      // packet limit closes the connection, which empties the channel, as its last act.
      const uint64_t received = front.seq;
      client(c->client).on_message(*c, front);
      if (!c->down.empty() && c->down.front().seq == received) c->down.pop_front();
      continue;
    }
    DownMsg m = std::move(front);  // a connect, close or expiry: the connection may go with it
    c->down.pop_front();
    client(c->client).on_message(*c, m);
  }
}

void World::Impl::client_close(Connection& c, InFlight in_flight_fate) {
  if (!c.client_open) return;
  c.client_open = false;
  dispositions_changed(c.client);
  c.down.clear();
  if (c.server_open && in_flight_fate != InFlight::kLost) {
    RingQueue<UpMsg> in_flight = std::move(c.up);
    c.up.clear();
    for (UpMsg& m : in_flight) {
      const bool reaches =
          in_flight_fate == InFlight::kDelivered || choose(ChoiceKind::kAmbiguousOutcome, 2) == 1;
      log(c.client, "in-flight", m.req.xid, reaches, {}, [&] {
        return std::string(op_name(m.req.op)) + " " + m.req.path +
               (reaches ? " reaches the server" : " is lost");
      });
      if (reaches && c.server_open) server_receive(c, m);
    }
  }
  c.up.clear();
  if (c.server_open) server_close(c, false, "client closed the connection");
  graveyard_.push_back(c.id);
}

void World::Impl::server_close(Connection& c, bool tell_client, std::string_view why) {
  if (!c.server_open) return;
  log(0, "drop", c.id, c.client, why, [&] {
    return "s" + std::to_string(c.server) + " closes the connection of c" +
           std::to_string(c.client) + ": " + std::string(why);
  });
  c.server_open = false;
  dispositions_changed(c.client);
  c.pending.clear();
  c.up.clear();
  server(c.server).blocked.erase(c.id);
  detach(c);
  if (tell_client && c.client_open) {
    DownMsg m;
    m.type = DownType::kClose;
    send_down(c, std::move(m));
  }
  graveyard_.push_back(c.id);
}

void World::Impl::rearm_channels(uint32_t client_index) {
  for (auto& c : conns_) {
    if (c == nullptr || c->client != client_index) continue;
    if (c->server_open && !c->up.empty()) {
      c->up_last = std::max(c->up_last, now() + latency(client_index));
      push_delivery(*c, true, c->up_last, c->up.back().seq);
    }
    if (c->client_open && !c->down.empty()) {
      c->down_last = std::max(c->down_last, now() + latency(client_index));
      push_delivery(*c, false, c->down_last, c->down.back().seq);
    }
  }
}

}  // namespace lockstep::sim
