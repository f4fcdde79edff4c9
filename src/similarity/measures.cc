// Shingles, Jaccard, MinHash and edit distance: fixed hash functions (no std::hash, whose values
// differ between library versions), so every result is the same on every machine.
#include <algorithm>
#include <limits>

#include "similarity/similarity.h"

namespace kf::similarity {
namespace {

uint64_t Fnv1a(uint64_t h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t Mix(uint64_t z) {  // splitmix64's finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<uint64_t> Shingles(const std::vector<std::string>& tokens, int n) {
  std::vector<uint64_t> out;
  if (tokens.empty()) return out;
  size_t w = std::max(1, n);
  if (tokens.size() < w) w = tokens.size();
  for (size_t i = 0; i + w <= tokens.size(); ++i) {
    uint64_t h = 14695981039346656037ull;
    for (size_t j = i; j < i + w; ++j) {
      h = Fnv1a(h, tokens[j]);
      h = Fnv1a(h, std::string_view("\x1f", 1));  // a separator no token holds
    }
    out.push_back(h);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double Jaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  if (a.empty() && b.empty()) return 1.0;
  size_t i = 0, j = 0, common = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == b[j]) {
      ++common, ++i, ++j;
    } else if (a[i] < b[j]) {
      ++i;
    } else {
      ++j;
    }
  }
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

std::vector<uint64_t> MinHash(const std::vector<uint64_t>& shingles, int num_hashes) {
  std::vector<uint64_t> sig(std::max(0, num_hashes), std::numeric_limits<uint64_t>::max());
  uint64_t seed = 0x6b666f7267650001ull;  // "kforge" and a version
  for (auto& m : sig) {
    seed += 0x9e3779b97f4a7c15ull;
    uint64_t s = Mix(seed);
    for (uint64_t x : shingles) m = std::min(m, Mix(x ^ s));
  }
  return sig;
}

double EstimatedJaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  size_t n = std::min(a.size(), b.size());
  if (n == 0) return 1.0;
  size_t same = 0;
  for (size_t i = 0; i < n; ++i) same += a[i] == b[i] ? 1 : 0;
  return static_cast<double>(same) / static_cast<double>(n);
}

double NormalizedEditDistance(const std::vector<std::string>& a,
                              const std::vector<std::string>& b) {
  size_t longer = std::max(a.size(), b.size());
  if (longer == 0) return 0.0;
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return static_cast<double>(prev[b.size()]) / static_cast<double>(longer);
}

}  // namespace kf::similarity
