#pragma once

// The file names of a TensorBundle checkpoint with prefix P (FORMAT.md 2.1):
//   P.index                   the metadata table
//   P.data-SSSSS-of-NNNNN     the tensor bytes, shard S of N (zero-based)

#include <string>

namespace eager {

// "P.index".
std::string IndexFilename(const std::string& prefix);
// "P.data-00000-of-00001" for shard 0 of 1. Throws InvalidArgumentError
// unless 0 <= shard < num_shards <= 99999.
std::string DataFilename(const std::string& prefix, int shard, int num_shards);

}  // namespace eager
