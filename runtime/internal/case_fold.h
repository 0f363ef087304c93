#pragma once

// Case-insensitive comparison and hashing of names, for NameRegistry and the
// Graph's node index. Not part of the public API.
//
// TensorFlow's Graph.unique_name counts names lower-cased; eager folds ASCII
// letters only ('A'..'Z' -> 'a'..'z'), byte by byte, whatever the locale.
// Both work without making a lower-cased copy: a lookup costs no allocation.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace eager::internal {

inline char FoldCase(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
}

inline bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (FoldCase(a[i]) != FoldCase(b[i])) return false;
  }
  return true;
}

// FoldCase applied to the 8 bytes of `w` at once: a byte gets bit 0x20 when
// it is below 0x80 (ASCII), at least 'A' and at most 'Z'. Each test adds to
// a byte's low 7 bits, which cannot carry into the next byte.
inline uint64_t FoldCaseWord(uint64_t w) {
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  const uint64_t low7 = w & ~kHigh;
  const uint64_t at_least_a = low7 + 0x3f3f3f3f3f3f3f3fULL;  // 'A' + 0x3f == 0x80
  const uint64_t above_z = low7 + 0x2525252525252525ULL;     // 'Z' + 1 + 0x25 == 0x80
  const uint64_t upper = at_least_a & ~above_z & ~w & kHigh;
  return w | (upper >> 2);
}

// A 64-bit hash of `s` with ASCII case folded: names that differ only in
// case hash alike. Eight bytes per step; well mixed in every bit, so a table
// may take its low bits.
inline uint64_t HashIgnoringCase(std::string_view s) {
  constexpr uint64_t kMul = 0xbf58476d1ce4e5b9ULL;
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ FoldCaseWord(w)) * kMul;
    h ^= h >> 29;
  }
  if (i < s.size()) {
    uint64_t w = 0;  // the tail, zero-padded: the length in the seed tells "a" from "a\0"
    std::memcpy(&w, s.data() + i, s.size() - i);
    h = (h ^ FoldCaseWord(w)) * kMul;
    h ^= h >> 29;
  }
  // SplitMix64's finalizer.
  h ^= h >> 30;
  h *= kMul;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return h;
}

}  // namespace eager::internal
