// The event log: a running hash over compact event encodings plus optional text lines.
#include <cstdio>
#include <cstring>
#include <string>

#include "sim/world.h"

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
  // The last 0..7 bytes as a little-endian word (zero above them): the top of the word that
  // ends the string when it is 8 bytes or longer, else from loads of fixed sizes (a memcpy of
  // a length not known at compile time is a call into libc, made for every event; a byte loop
  // ran for every event's kind).
  uint64_t tail = 0;
  const size_t rest = s.size() - i;
  const char* p = s.data();
  const size_t n = s.size();
  if (n >= 8) {
    if (rest > 0) {
      std::memcpy(&tail, p + n - 8, 8);
      tail >>= 8 * (8 - rest);
    }
  } else if (n >= 4) {  // 4..7 bytes: two 4-byte loads that overlap (the same bytes in both)
    uint32_t lo;
    uint32_t hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + n - 4, 4);
    tail = lo | (static_cast<uint64_t>(hi) << (8 * (n - 4)));
  } else if (n > 0) {  // 1..3 bytes: the first, the middle and the last cover them
    const auto byte = [&](size_t k) { return static_cast<uint64_t>(static_cast<unsigned char>(p[k])); };
    tail = byte(0) | byte(n / 2) << (8 * (n / 2)) | byte(n - 1) << (8 * (n - 1));
  }
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
