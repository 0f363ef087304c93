#pragma once

// Did-you-mean for name-based restores: which checkpoint keys a missing key
// most likely corresponds to, and a rename map that would restore every
// variable. Works from key strings, dtypes and shapes only (no files).
//
// Distance: keys are split into their scope parts ("dense_1/kernel" ->
// {"dense_1", "kernel"}) and compared by edit distance over those parts,
// where inserting or deleting a part costs 1 and replacing one costs its
// character edit distance divided by the longer part's length (so
// "dense_1" -> "dense" is cheap, "dense_1" -> "conv2d" is not). Among equally
// distant keys, those of equal dtype and shape come first, then the smaller
// character edit distance of the whole key, then the key itself.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/dtype.h"

namespace eager::internal {

struct KeySpec {
  std::string key;
  std::optional<DType> dtype;  // nullopt: a dtype eager does not support
  std::vector<int64_t> dims;
};

struct KeyCandidate {
  std::string key;
  double distance;  // scope-part distance (see the file comment)
  bool same_dtype_and_shape;
};

// Levenshtein distance of two byte strings.
int CharEditDistance(std::string_view a, std::string_view b);
// The scope-part distance of two keys.
double ScopeDistance(std::string_view a, std::string_view b);

// The `limit` keys of `present` closest to `wanted`, best first, skipping
// keys in `taken`.
std::vector<KeyCandidate> ClosestKeys(const KeySpec& wanted, const std::vector<KeySpec>& present,
                                      const std::set<std::string>& taken, size_t limit = 3);

// For each missing key, the closest present key of the same dtype and shape
// that is neither in `taken` nor proposed for another missing key; keys with
// no such candidate are absent from the result. Missing keys whose best
// candidate is closest are served first.
std::map<std::string, std::string> ProposeRenames(const std::vector<KeySpec>& missing,
                                                  const std::vector<KeySpec>& present,
                                                  const std::set<std::string>& taken);

}  // namespace eager::internal
