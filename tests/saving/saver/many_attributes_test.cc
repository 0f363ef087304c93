// A node with 100,000 attributes (issue 37: a 1.8 MB file took ~17 s CPU):
// reading placed each attribute into a sorted vector in the protobuf map's
// order, and importing searched the node's attributes before adding each,
// both quadratic. Both are n log n now; the bound below is some five times
// what 100k attributes take in Release and a fraction of the quadratic time.

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "runtime/graph.h"
#include "saving/saver/meta_graph_def.h"
#include "saving/saver/meta_graph_import_export.h"
#include "saving/saver/saver.h"
#include "tests/saving/saving_test_util.h"
#include "tests/testing/protobuf_wire.h"

namespace eager {
namespace {

using ::eager::testing::wire::MessageField;
using ::eager::testing::wire::VarintField;

TEST(ManyAttributesTest, OneHundredThousandAttributesReadAndImportInLinearishTime) {
  constexpr int kAttrs = 100000;
  std::string node = MessageField(1, "n") + MessageField(2, "NoOp");
  for (int i = kAttrs - 1; i >= 0; --i) {  // descending: the worst order for a sorted insert
    node += MessageField(5, MessageField(1, StrCat("_a", i)) + MessageField(2, VarintField(3, 1)));
  }
  const std::string path = testing::TempDir() + "/many.meta";
  testing::WriteFile(path, MessageField(2, MessageField(1, node)));  // graph_def.node
  const auto start = std::chrono::steady_clock::now();
  const MetaGraph meta = ReadMetaGraph(path);
  ASSERT_EQ(meta.nodes.size(), 1u);
  EXPECT_EQ(meta.nodes[0].attrs.size(), static_cast<size_t>(kAttrs));
  EXPECT_TRUE(meta.nodes[0].attrs.contains("_a99999"));
  Graph graph;
  Graph::AsDefault in(graph);
  ImportMetaGraph(path);
  EXPECT_EQ(graph.node(0).attrs.size(), static_cast<size_t>(kAttrs));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0) << "100k attributes took " << seconds << " s";
}

}  // namespace
}  // namespace eager
