#include "synth/rng.h"

namespace kf::synth {

uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t Rng::Next() {
  state_ += 0x9e3779b97f4a7c15ull;
  return Mix64(state_);
}

int64_t Rng::Uniform(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  // Rejection: draws at or above the largest multiple of span would favour small values.
  uint64_t limit = span == 0 ? 0 : (~uint64_t{0} / span) * span;
  uint64_t x = Next();
  while (limit != 0 && x >= limit) x = Next();
  return lo + static_cast<int64_t>(span == 0 ? x : x % span);
}

double Rng::Real() { return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0); }

}  // namespace kf::synth
