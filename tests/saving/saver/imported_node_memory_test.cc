// What one imported graph node costs on the heap (issue 27): the chain of
// large_graph_memory_test (x, then layer{i}/add = AddV2(previous, x) with
// attribute T), imported into a Graph, measured in-process with mallinfo2()
// (glibc's count of bytes in use, chunk headers included), so it runs in
// milliseconds and names the bytes per node rather than a peak.

#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "runtime/graph.h"
#include "saving/saver/meta_graph_def.h"
#include "saving/saver/meta_graph_import_export.h"
#include "tests/saving/saver/chain_meta_graph.h"
#include "tests/testing/memory_measurement.h"

namespace eager {
namespace {

constexpr int kNodes = 20000;

size_t HeapInUse() { return static_cast<size_t>(testing::HeapInUseBytes()); }

// Measured in Release, glibc malloc, for this chain (names of 12 to 15
// characters, in the string's own buffer): 686 bytes per node when an
// AttrValue held its Shape and Tensor kinds inline (152 bytes), a Node kept
// its output dtypes and shapes in two vectors and the Graph a slot of
// symbolic outputs per node; 501 now (a 168-byte Node, 80 for its two
// input names, 80 for its one attribute, 96 for its one output spec, the
// rest the Graph's name index and registry). The bound fails the old size.
constexpr double kBytesPerNodeBound = 560;

// AddressSanitizer's allocator is not glibc's (its redzones and quarantine
// are not eager's memory): the sanitized pass checks the import only.
constexpr bool kHeapIsGlibcs = testing::kMemoryIsMeasurable;

TEST(ImportedNodeMemoryTest, AChainNodeCostsAFewHundredBytes) {
  const size_t before = HeapInUse();
  Graph graph;
  {
    MetaGraph meta = testing::ChainMetaGraph(kNodes);
    ImportIntoGraphMovingNodes(meta, graph);
  }
  const double per_node = static_cast<double>(HeapInUse() - before) / (kNodes + 1);
  ASSERT_EQ(graph.num_nodes(), kNodes + 1);
  const Node& last = graph.node(kNodes);
  EXPECT_EQ(last.op, "AddV2");
  EXPECT_EQ(last.output_specs.size(), 1u);
  EXPECT_EQ(last.Attr<DType>("T"), DType::kFloat32);
  std::cout << "an imported chain node: " << per_node << " heap bytes\n";
  if (kHeapIsGlibcs) {
    EXPECT_LT(per_node, kBytesPerNodeBound);
  }
}

}  // namespace
}  // namespace eager
