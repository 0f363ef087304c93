#pragma once

// The graph file that costs the most memory per byte: x (Placeholder), then
// layer{i}/add = AddV2(previous, x) for i < `adds`. These are TF's node records
// at their smallest, some 56 bytes each in a file. The memory tests and
// benchmarks/graph_memory write it.

#include <cstdint>
#include <string>

#include "runtime/errors.h"
#include "saving/saver/meta_graph_def.h"

namespace eager::testing {

inline MetaGraph ChainMetaGraph(int64_t adds) {
  MetaGraph meta;
  meta.tags = {"serve"};
  meta.nodes.push_back({.name = "x", .op = "Placeholder", .attrs = {{"dtype", MetaType{1}}}});
  for (int64_t i = 0; i < adds; ++i) {
    meta.nodes.push_back({.name = StrCat("layer", i, "/add"),
                          .op = "AddV2",
                          .inputs = {i == 0 ? "x" : StrCat("layer", i - 1, "/add"), "x"},
                          .attrs = {{"T", MetaType{1}}}});
  }
  return meta;
}

}  // namespace eager::testing
