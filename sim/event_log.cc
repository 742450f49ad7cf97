// The event log: a running hash over compact event encodings plus optional text lines.
#include <cstdio>
#include <cstring>
#include <string>

#include "sim/world.h"

namespace lockstep::sim {

void EventLog::push_decision(Time at, ChoiceKind kind, uint32_t chosen, uint32_t n) {
  push(at, 0, "choose",
       std::string(to_string(kind)) + " " + std::to_string(chosen) + "/" + std::to_string(n));
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
