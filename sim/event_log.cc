// The event log: a running hash over compact event encodings plus optional text lines.
#include <cstdio>
#include <cstring>
#include <string>

#include "sim/world.h"
#include "sim/words.h"

namespace lockstep::sim {
namespace {

uint64_t mix64(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 1099511628211ull;
}

// Word at a time: the log hashes every event, so this is on the simulator's hot path.
uint64_t mix_bytes(uint64_t h, std::string_view s) {
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = mix64(h, w);
  }
  const uint64_t tail = tail_word(s, i);
  return mix64(h, tail ^ (static_cast<uint64_t>(s.size()) << 56));
}

}  // namespace

void EventLog::mix(Time at, uint32_t client, std::string_view kind, uint64_t a, uint64_t b,
                   std::string_view s) {
  uint64_t h = mix64(hash_, static_cast<uint64_t>(at.us));
  h = mix64(h, client);
  h = mix_bytes(h, kind);
  h = mix64(h, a);
  h = mix64(h, b);
  hash_ = mix_bytes(h, s);
  ++count_;
}

void EventLog::add_decision(Time at, uint64_t packed, const char* kind_name, uint32_t chosen,
                            uint32_t n) {
  hash_ = mix64(mix64(hash_, static_cast<uint64_t>(at.us)), packed);
  ++count_;
  if (record_) {
    push(at, 0, "choose",
         std::string(kind_name) + " " + std::to_string(chosen) + "/" + std::to_string(n));
  }
}

void EventLog::push(Time at, uint32_t client, std::string_view kind, std::string text) {
  if (stopped_) return;  // strict replay already diverged: the divergent event is the last line
  events_.push_back(LoggedEvent{count_ - 1, at, client, std::string(kind), std::move(text)});
  if (expected_ == nullptr) return;
  const size_t i = events_.size() - 1;
  const LoggedEvent& e = events_.back();
  stopped_ = i >= expected_->size() || (*expected_)[i].at != e.at ||
             (*expected_)[i].client != e.client || (*expected_)[i].kind != e.kind ||
             (*expected_)[i].text != e.text;
}

void EventLog::add(Time at, uint32_t client, std::string_view kind, std::string_view text) {
  add_compact(at, client, kind, 0, 0, text, [&] { return std::string(text); });
}

std::string EventLog::to_text() const {
  std::string out;
  char head[64];
  for (const LoggedEvent& e : events_) {
    std::snprintf(head, sizeof head, "t=%lld.%06lld c%u ",
                  static_cast<long long>(e.at.us / 1000000),
                  static_cast<long long>(e.at.us % 1000000), e.client);
    out += head;
    out += e.kind;
    if (!e.text.empty()) {
      out += ' ';
      out += e.text;
    }
    out += '\n';
  }
  return out;
}

}  // namespace lockstep::sim
