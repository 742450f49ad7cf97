// lockstep simulator: reading a string eight bytes at a time (the event log's hash, the path
// hash of the tree and watch tables).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace lockstep::sim {

// The bytes of `s` from `i` on, at most 7 of them (i = s.size() rounded down to a multiple of
// 8), as a little-endian word with zeros above them: from the word that ends the string when
// it is 8 bytes or longer, else from loads of fixed sizes (a memcpy of a length not known at
// compile time is a call into libc; a byte loop ran for every event's kind).
inline uint64_t tail_word(std::string_view s, size_t i) {
  const char* p = s.data();
  const size_t n = s.size();
  const size_t rest = n - i;
  uint64_t tail = 0;
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
    const auto byte = [&](size_t k) {
      return static_cast<uint64_t>(static_cast<unsigned char>(p[k]));
    };
    tail = byte(0) | byte(n / 2) << (8 * (n / 2)) | byte(n - 1) << (8 * (n - 1));
  }
  return tail;
}

}  // namespace lockstep::sim
