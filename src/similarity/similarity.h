// similarity: how alike two pieces of code are, for `kforge synth` (is a synthesized problem a
// near-copy of a benchmark problem?) and `kforge data rft` (are two correct kernels one
// solution repeated?). Token streams come from our own Python tokenizer (src/extract) and, for
// kernel sources inside load_inline strings, the C++ lexer of src/legality; the measures are
// exact Jaccard over token n-grams, a MinHash estimate of it, and a normalised edit distance.
//
// Thread-safety: pure functions, any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kf::similarity {

// Python source as tokens with what does not change the computation taken out: comments and
// docstrings dropped; identifiers become "ID" except keywords, attribute names after '.'
// (API names: `nn.Conv2d`, `x.sum`) and the module aliases torch/nn/F/math; numbers become
// "NUM" and string literals "STR"; NEWLINE/INDENT/DEDENT are kept as "\n", ">" and "<".
// Source our tokenizer rejects gives the tokens read before the error.
std::vector<std::string> NormalizedPythonTokens(std::string_view source);

// A candidate kernel (a kernelbench-format file or a model reply) as tokens: the Python part as
// above, each statically resolved load_inline C++/CUDA source lexed as C++ (comments dropped,
// identifiers "ID" unless a keyword, a `::`-qualified or `__` name or a CUDA built-in;
// numbers "NUM", strings "STR"). A string literal is taken for kernel source when its value has
// at least three lines and a '{' or ';'; it is lexed where it stands, whatever name holds it.
std::vector<std::string> KernelTokens(std::string_view candidate);

// The distinct 64-bit hashes (FNV-1a over the joined tokens) of every run of `n` consecutive
// tokens, sorted; a stream shorter than n gives one shingle of the whole stream (none if empty).
std::vector<uint64_t> Shingles(const std::vector<std::string>& tokens, int n);

// |A ∩ B| / |A ∪ B| of two sorted, distinct shingle sets; 1 when both are empty.
double Jaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b);

// MinHash: per hash function i, the minimum over the set of mix(shingle ^ seed_i) (the
// splitmix64 finaliser, seeds drawn from a fixed splitmix64 sequence, so signatures are the same
// on every machine and run). The share of equal minima estimates the Jaccard similarity with
// standard error sqrt(J(1-J)/num_hashes).
std::vector<uint64_t> MinHash(const std::vector<uint64_t>& shingles, int num_hashes);
double EstimatedJaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b);

// Levenshtein distance (insert, delete, substitute: cost 1 each) divided by the longer length:
// 0 for equal sequences, 1 for sequences with nothing in common at any position; 0 for two
// empty sequences.
double NormalizedEditDistance(const std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace kf::similarity
