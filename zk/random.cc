#include "zk/random.h"

#include <bit>
#include <cstring>

#include "zk/invariant.h"

namespace zk {

uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t fnv1a(std::string_view bytes, uint64_t h) {
  constexpr uint64_t kPrime = 1099511628211ull;
  // Byte by byte, as FNV-1a is defined, but loaded eight at a time (the simulator hashes every
  // child name it adds or removes): the same value as the plain loop.
  const char* p = bytes.data();
  size_t n = bytes.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
    for (int k = 0; k < 8; ++k, w >>= 8) h = (h ^ (w & 0xff)) * kPrime;
  }
  for (; n > 0; ++p, --n) h = (h ^ static_cast<unsigned char>(*p)) * kPrime;
  return h;
}

Prng::Prng(uint64_t seed) : seed_(seed) {
  uint64_t st = seed;
  for (uint64_t& w : s_) w = splitmix64(&st);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t Prng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint64_t Prng::below(uint64_t bound) {
  LOCKSTEP_ASSERT(bound > 0);
  // Lemire: multiply into 128 bits, reject the biased low region.
  unsigned __int128 m = static_cast<unsigned __int128>(next()) * bound;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < bound) {
    const uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next()) * bound;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

int64_t Prng::between(int64_t lo, int64_t hi) {
  LOCKSTEP_ASSERT(lo <= hi);
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == UINT64_MAX) return static_cast<int64_t>(next());
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + below(span + 1));
}

bool Prng::chance(uint64_t num, uint64_t den) {
  LOCKSTEP_ASSERT(den > 0);
  if (num == 0) return false;
  if (num >= den) return true;
  return below(den) < num;
}

Prng Prng::split(std::string_view label) const {
  uint64_t st = seed_ ^ fnv1a(label);
  return Prng(splitmix64(&st));
}

}  // namespace zk
