#include "fidelity/shrink.h"

#include <algorithm>
#include <string>

namespace lockstep::fidelity {

ShrinkResult shrink(const Sequence& seq, size_t first_bad, int servers,
                    const std::function<bool(const Sequence&)>& differs, size_t budget) {
  ShrinkResult r;
  const zk::Duration timeout = GenerateOptions{}.session_timeout;
  auto test = [&](const Sequence& candidate) {
    std::string why;
    if (candidate.empty() || !valid(candidate, servers, timeout, &why)) return false;
    if (r.calls >= budget) return false;
    ++r.calls;
    return differs(candidate);
  };
  // The operations after the first difference cannot have caused it.
  Sequence best(seq.begin(),
                seq.begin() + static_cast<std::ptrdiff_t>(std::min(first_bad + 1, seq.size())));
  if (test(best)) {
    r.reproduced = true;
  } else if (best.size() < seq.size() && test(seq)) {
    r.reproduced = true;
    best = seq;
  } else {
    r.sequence = seq;
    return r;
  }
  for (size_t chunk = std::max<size_t>(1, best.size() / 2);;
       chunk = std::max<size_t>(1, chunk / 2)) {
    bool removed_any = false;
    for (size_t at = 0; at < best.size() && r.calls < budget;) {
      Sequence candidate = best;
      const size_t n = std::min(chunk, candidate.size() - at);
      candidate.erase(candidate.begin() + static_cast<std::ptrdiff_t>(at),
                      candidate.begin() + static_cast<std::ptrdiff_t>(at + n));
      if (test(candidate)) {
        best = std::move(candidate);
        removed_any = true;  // retry the same position: the next chunk moved into it
      } else {
        at += n;
      }
    }
    if (r.calls >= budget) break;
    if (chunk == 1 && !removed_any) break;
  }
  // Pairs: a close and its reopen (or an expiry and its reopen) can only go together, and
  // need not be next to each other.
  for (bool removed = true; removed && r.calls < budget;) {
    removed = false;
    for (size_t i = 0; i < best.size() && !removed && r.calls < budget; ++i) {
      for (size_t j = i + 1; j < best.size() && !removed && r.calls < budget; ++j) {
        Sequence candidate = best;
        candidate.erase(candidate.begin() + static_cast<std::ptrdiff_t>(j));
        candidate.erase(candidate.begin() + static_cast<std::ptrdiff_t>(i));
        if (test(candidate)) {
          best = std::move(candidate);
          removed = true;
        }
      }
    }
  }
  r.sequence = std::move(best);
  return r;
}

}  // namespace lockstep::fidelity
