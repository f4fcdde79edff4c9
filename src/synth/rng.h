// A seeded random source whose every draw is specified here (splitmix64 and rejection
// sampling), unlike std::uniform_int_distribution, whose results differ between standard
// libraries: the same seed gives the same problems on every machine. Internal to synth.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kf::synth {

// splitmix64's finaliser: a bijective mix of 64 bits.
uint64_t Mix64(uint64_t z);

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  // Uniform in [lo, hi] (inclusive); lo when hi <= lo.
  int64_t Uniform(int64_t lo, int64_t hi);
  double Real();  // uniform in [0, 1), 53 bits
  bool Chance(double p) { return Real() < p; }
  template <class T>
  T Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Uniform(0, static_cast<int64_t>(v.size()) - 1))];
  }

 private:
  uint64_t state_;
};

}  // namespace kf::synth
