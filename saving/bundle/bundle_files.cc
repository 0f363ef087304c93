#include "saving/bundle/bundle_files.h"

#include <cstdio>

#include "runtime/errors.h"

namespace eager {

std::string IndexFilename(const std::string& prefix) { return prefix + ".index"; }

std::string DataFilename(const std::string& prefix, int shard, int num_shards) {
  EAGER_CHECK(num_shards >= 1 && num_shards <= 99999 && shard >= 0 && shard < num_shards,
              "DataFilename(", prefix, "): shard ", shard, " of ", num_shards,
              " is not a valid shard (expected 0 <= shard < num_shards <= 99999)");
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), ".data-%05d-of-%05d", shard, num_shards);
  return prefix + suffix;
}

}  // namespace eager
