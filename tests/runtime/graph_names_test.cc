// A Graph's node names in its NameRegistry: counted case-insensitively, as
// TensorFlow's Graph counts them, without copies (issue 27).

#include <gtest/gtest.h>

#include <cctype>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "runtime/errors.h"
#include "runtime/graph.h"
#include "tests/testing/memory_measurement.h"

namespace eager {
namespace {

Node NoOp(std::string name) { return Node{.name = std::move(name), .op = "NoOp"}; }

// TF 2.21: import_graph_def(name="") of NoOp nodes "A", "a", "b_1", "B"
// keeps all four; then unique_name gives "a_1", "A_2", "b_2", "b_3",
// "B_1_1".
TEST(GraphNamesTest, ImportedNamesThatDifferInCaseAreOneNameToUniqueName) {
  Graph graph;
  for (const char* name : {"A", "a", "b_1", "B"}) graph.AddNode(NoOp(name));
  ASSERT_EQ(graph.num_nodes(), 4);
  EXPECT_EQ(graph.FindNodeIndex("A"), 0);
  EXPECT_EQ(graph.FindNodeIndex("a"), 1);
  EXPECT_EQ(graph.FindNodeIndex("b"), -1);
  EXPECT_EQ(graph.FindNodeIndex("B_1"), -1);
  EXPECT_TRUE(graph.names().IsUsed("a"));
  EXPECT_TRUE(graph.names().IsUsed("B_1"));
  EXPECT_FALSE(graph.names().IsUsed("a_1"));
  EXPECT_EQ(graph.names().UniqueName("a"), "a_1");
  EXPECT_EQ(graph.names().UniqueName("A"), "A_2");
  EXPECT_EQ(graph.names().UniqueName("b"), "b_2");
  EXPECT_EQ(graph.names().UniqueName("b"), "b_3");
  EXPECT_EQ(graph.names().UniqueName("B_1"), "B_1_1");
  EXPECT_EQ(graph.names().UniqueName("c"), "c");
  // Names handed out need not become nodes, and nodes may be named later.
  graph.AddNode(NoOp("C"));
  EXPECT_EQ(graph.names().UniqueName("c"), "c_1");
  EXPECT_THROW(graph.AddNode(NoOp("a")), InvalidArgumentError);
}

// Building: UniqueName per op, then the node under that name.
TEST(GraphNamesTest, BuiltNodesCountOnceWhetherNamedFirstOrAdded) {
  Graph graph;
  for (int i = 0; i < 3; ++i) graph.AddNode(NoOp(graph.UniqueName("Add")));
  EXPECT_NE(graph.FindNode("Add_2"), nullptr);
  graph.AddNode(NoOp("add_3"));  // named by hand, like an import
  EXPECT_EQ(graph.UniqueName("add"), "add_4");
  EXPECT_EQ(graph.UniqueName("ADD_3"), "ADD_3_1");
}

// Many nodes: the node index grows through many sizes; every node stays
// findable exactly and counted case-insensitively.
TEST(GraphNamesTest, ManyNodesStayFindableAndCounted) {
  Graph graph;
  constexpr int kNodes = 20000;
  for (int i = 0; i < kNodes; ++i) graph.AddNode(NoOp(StrCat("Block", i, "/MatMul")));
  for (int i = 0; i < kNodes; i += 331) {
    EXPECT_EQ(graph.FindNodeIndex(StrCat("Block", i, "/MatMul")), i);
    EXPECT_EQ(graph.FindNodeIndex(StrCat("block", i, "/matmul")), -1);
    EXPECT_EQ(graph.names().UniqueName(StrCat("block", i, "/matmul")),
              StrCat("block", i, "/matmul_1"));
  }
  EXPECT_FALSE(graph.names().IsUsed(StrCat("block", kNodes, "/matmul")));
}

// Clear() forgets the nodes' names too (TF has no such call; eager's
// contract is the registry's); nodes added afterwards count again.
TEST(GraphNamesTest, ClearForgetsNodeNamesUntilNewNodes) {
  Graph graph;
  graph.AddNode(NoOp("x"));
  const uint64_t generation = graph.names().generation();
  graph.names().Clear();
  EXPECT_EQ(graph.names().generation(), generation + 1);
  EXPECT_FALSE(graph.names().IsUsed("x"));
  graph.AddNode(NoOp("Y"));
  EXPECT_TRUE(graph.names().IsUsed("y"));
  EXPECT_EQ(graph.names().UniqueName("y"), "y_1");
  EXPECT_EQ(graph.names().UniqueName("x"), "x");
  EXPECT_NE(graph.FindNode("x"), nullptr);  // the node itself stays
}

// TF's Graph.unique_name and node naming, as ops.py writes them: a dict of
// lower-cased names -> uses; a new node's name is set to 1 if absent.
class ReferenceNames {
 public:
  std::string UniqueName(const std::string& name) {
    std::string key = Lower(name);
    int i = uses_[key]++;
    if (i == 0) return name;
    const std::string base = key;
    while (uses_.count(key) != 0) key = StrCat(base, "_", i++);
    uses_[key] = 1;
    return StrCat(name, "_", i - 1);
  }
  void AddNode(const std::string& name) { uses_.emplace(Lower(name), 1); }
  bool IsUsed(const std::string& name) const { return uses_.count(Lower(name)) != 0; }

 private:
  static std::string Lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }
  std::map<std::string, int> uses_;
};

// A random mix of UniqueName, nodes added under names it gave, nodes added
// under names of their own (some in use, some differing in case), against
// the reference: the registry drops and compacts its copies of node names
// all along, and every answer stays TF's.
TEST(GraphNamesTest, RandomBuildingMatchesTensorFlowsRules) {
  std::mt19937 random(27);
  const std::vector<std::string> bases = {"add", "Add", "ADD",          "add_1",          "add_2",
                                          "x",   "X_1", "dense/MatMul", "dense/matmul_3", "Relu"};
  Graph graph;
  ReferenceNames reference;
  std::vector<std::string> pending;  // names handed out, not yet nodes
  for (int step = 0; step < 20000; ++step) {
    const std::string& base = bases[random() % bases.size()];
    switch (random() % 4) {
      case 0:
      case 1: {
        const std::string got = graph.names().UniqueName(base);
        ASSERT_EQ(got, reference.UniqueName(base)) << "step " << step;
        if (random() % 4 != 0) pending.push_back(got);  // some never become nodes
        break;
      }
      case 2:
        if (!pending.empty()) {
          const size_t k = random() % pending.size();
          if (graph.FindNode(pending[k]) == nullptr) {  // else added by hand meanwhile
            graph.AddNode(NoOp(pending[k]));
            reference.AddNode(pending[k]);
          }
          pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
        }
        break;
      default: {
        const std::string name = StrCat(base, "_", random() % 64);
        if (graph.FindNode(name) == nullptr) {
          graph.AddNode(NoOp(name));
          reference.AddNode(name);
        }
        break;
      }
    }
    const std::string probe = StrCat(bases[random() % bases.size()], "_", random() % 64);
    ASSERT_EQ(graph.names().IsUsed(probe), reference.IsUsed(probe)) << probe << " step " << step;
  }
}

#ifndef EAGER_ASAN
size_t HeapInUse() { return static_cast<size_t>(testing::HeapInUseBytes()); }

// The heap a Graph takes to add `nodes`, made beforehand (their names are
// the nodes' own), to a graph whose registry was or was not cleared.
size_t AddNodesHeap(int nodes, bool clear_names_first) {
  std::vector<Node> records;
  records.reserve(static_cast<size_t>(nodes));
  for (int i = 0; i < nodes; ++i) {
    records.push_back({.name = StrCat("block", 100000 + i, "/dense/MatMul"),
                       .op = "NoOp",
                       .output_specs = {{Shape{}, DType::kFloat32}}});
  }
  Graph graph;
  if (clear_names_first) graph.names().Clear();
  const size_t before = HeapInUse();
  for (Node& node : records) graph.AddNode(std::move(node));
  return HeapInUse() - before;
}

// Imported names cost the registry nothing: against a cleared registry,
// which keeps its own copy of each (some 60 bytes for these 25-byte names,
// 118 in the unordered_map it was), adding the nodes takes at least 40
// bytes a node less. Measured: 237 and 295 bytes a node (Release, glibc).
TEST(GraphNamesTest, NodeNamesAreNotCopiedIntoTheRegistry) {
  constexpr int kNodes = 100000;
  const size_t counted = AddNodesHeap(kNodes, false);
  const size_t copied = AddNodesHeap(kNodes, true);
  std::cout << "AddNode: " << static_cast<double>(counted) / kNodes << " bytes a node, "
            << static_cast<double>(copied) / kNodes << " with copied names\n";
  EXPECT_LT(counted + size_t{40} * kNodes, copied);
}

// The heap a Graph takes to build `nodes` nodes named by UniqueName ("add",
// "add_1", ...), with its registry cleared first or not.
size_t BuildNodesHeap(int nodes, bool clear_names_first) {
  Graph graph;
  if (clear_names_first) graph.names().Clear();
  const size_t before = HeapInUse();
  for (int i = 0; i < nodes; ++i) {
    graph.AddNode({.name = graph.UniqueName(i % 2 == 0 ? "dense/MatMul" : "dense/BiasAdd"),
                   .op = "NoOp",
                   .output_specs = {{Shape{}, DType::kFloat32}}});
  }
  return HeapInUse() - before;
}

// Names a graph's builder got from UniqueName are not kept twice either
// once they are nodes' names: the registry keeps "dense/MatMul" and
// "dense/BiasAdd" with their counts, not "dense/MatMul_1234".
TEST(GraphNamesTest, BuiltNodeNamesAreNotKeptTwice) {
  constexpr int kNodes = 100000;
  const size_t counted = BuildNodesHeap(kNodes, false);
  const size_t copied = BuildNodesHeap(kNodes, true);
  std::cout << "UniqueName + AddNode: " << static_cast<double>(counted) / kNodes
            << " bytes a node, " << static_cast<double>(copied) / kNodes << " with copied names\n";
  EXPECT_LT(counted + size_t{30} * kNodes, copied);
}
#endif

}  // namespace
}  // namespace eager
