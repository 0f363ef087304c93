// Lookup tables in a Session (ops/lookup_ops.h): a HashTableV2 handle reaches
// its table through InitializeTableV2, LookupTableFindV2, LookupTableSizeV2
// and LookupTableImportV2, for each key -> value dtype pair, with TF's
// errors. TF 2.21 judges a TF1 SavedModel with a table in
// tests/tf_graphs/lookup_table_test.py.

#include "ops/lookup_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/session.h"
#include "runtime/graph.h"
#include "runtime/variable.h"

namespace eager {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A graph built from node records as an importer makes them: one table
// "table" of key_dtype -> value_dtype, init ops, lookups.
class TableGraph {
 public:
  TableGraph(DType key_dtype, DType value_dtype) {
    Table("table", key_dtype, value_dtype, "vocab");
  }
  // Another HashTableV2 node.
  void Table(const std::string& name, DType key_dtype, DType value_dtype,
             const std::string& shared_name, bool use_node_name_sharing = false,
             const std::string& container = "") {
    Node node{.name = name, .op = "HashTableV2"};
    node.attrs = {{"key_dtype", key_dtype},
                  {"value_dtype", value_dtype},
                  {"container", container},
                  {"shared_name", shared_name},
                  {"use_node_name_sharing", use_node_name_sharing}};
    graph.AddNode(std::move(node));
  }
  std::string Const(const std::string& name, const Tensor& value) {
    Node node{.name = name, .op = "Const"};
    node.attrs = {{"value", value}, {"dtype", value.dtype()}};
    graph.AddNode(std::move(node));
    return name;
  }
  // An InitializeTableV2 (or LookupTableImportV2) node `name` from constants.
  std::string Init(const std::string& name, const Tensor& keys, const Tensor& values,
                   const std::string& op = "InitializeTableV2",
                   const std::string& table = "table") {
    const std::string k = Const(name + "/keys", keys);
    const std::string v = Const(name + "/values", values);
    const bool import = op == "LookupTableImportV2";
    Node node{.name = name, .op = op, .inputs = {table, k, v}};
    node.attrs = {{import ? "Tin" : "Tkey", keys.dtype()},
                  {import ? "Tout" : "Tval", values.dtype()}};
    graph.AddNode(std::move(node));
    return name;
  }
  std::string Find(const std::string& name, const Tensor& keys, const Tensor& fallback,
                   const std::string& table = "table") {
    const std::string k = Const(name + "/keys", keys);
    const std::string d = Const(name + "/default", fallback);
    Node node{.name = name, .op = "LookupTableFindV2", .inputs = {table, k, d}};
    node.attrs = {{"Tin", keys.dtype()}, {"Tout", fallback.dtype()}};
    graph.AddNode(std::move(node));
    return name;
  }
  std::string Size(const std::string& name) {
    graph.AddNode(Node{.name = name, .op = "LookupTableSizeV2", .inputs = {"table"}});
    return name;
  }

  Graph graph;
};

void Do(Session& sess, const std::string& op) { sess.Run(std::vector<Fetch>{op}); }

TEST(LookupOpsTest, StringToInt64FindsKeysAndDefaults) {
  TableGraph g(DType::kString, DType::kInt64);
  g.Init("init", Tensor::Vector<std::string>({"cat", "dog", "emu"}),
         Tensor::Vector<int64_t>({7, 8, 9}));
  g.Find("find", Tensor::FromVector<std::string>({"emu", "owl", "cat", "dog"}, Shape{2, 2}),
         Tensor(int64_t{-1}));
  g.Size("size");
  Session sess(g.graph);
  EXPECT_EQ(sess.Run("size:0").ToVector<int64_t>(), (std::vector<int64_t>{0}));
  Do(sess, "init");
  const Tensor found = sess.Run("find:0");
  EXPECT_EQ(found.shape(), (Shape{2, 2}));
  EXPECT_EQ(found.ToVector<int64_t>(), (std::vector<int64_t>{9, -1, 7, 8}));
  EXPECT_EQ(sess.Run("size:0").ToVector<int64_t>(), (std::vector<int64_t>{3}));
}

TEST(LookupOpsTest, EveryKeyValueDTypePair) {
  {
    TableGraph g(DType::kInt64, DType::kString);
    g.Init("init", Tensor::Vector<int64_t>({3, -5}), Tensor::Vector<std::string>({"a", "b"}));
    g.Find("find", Tensor::Vector<int64_t>({-5, 4, 3}), Tensor(std::string("?")));
    Session sess(g.graph);
    Do(sess, "init");
    EXPECT_EQ(sess.Run("find:0").ToVector<std::string>(),
              (std::vector<std::string>{"b", "?", "a"}));
  }
  {
    TableGraph g(DType::kString, DType::kString);
    g.Init("init", Tensor::Vector<std::string>({"x"}), Tensor::Vector<std::string>({"y"}));
    g.Find("find", Tensor::Vector<std::string>({"x", ""}), Tensor(std::string("none")));
    Session sess(g.graph);
    Do(sess, "init");
    EXPECT_EQ(sess.Run("find:0").ToVector<std::string>(), (std::vector<std::string>{"y", "none"}));
  }
  {
    TableGraph g(DType::kInt64, DType::kInt64);
    g.Init("init", Tensor::Vector<int64_t>({1, 2}), Tensor::Vector<int64_t>({10, 20}),
           "LookupTableImportV2");
    g.Find("find", Tensor::Vector<int64_t>({2, 1, 0}), Tensor(int64_t{0}));
    Session sess(g.graph);
    Do(sess, "init");
    EXPECT_EQ(sess.Run("find:0").ToVector<int64_t>(), (std::vector<int64_t>{20, 10, 0}));
  }
  {
    TableGraph g(DType::kInt64, DType::kFloat32);
    g.Init("init", Tensor::Vector<int64_t>({4}), Tensor::Vector<float>({0.5f}));
    g.Find("find", Tensor::Vector<int64_t>({4, 5}), Tensor(-1.0f));
    Session sess(g.graph);
    Do(sess, "init");
    EXPECT_EQ(sess.Run("find:0").ToVector<float>(), (std::vector<float>{0.5f, -1.0f}));
  }
}

TEST(LookupOpsTest, EachSessionHasItsOwnTable) {
  TableGraph g(DType::kString, DType::kInt64);
  g.Init("init", Tensor::Vector<std::string>({"a"}), Tensor::Vector<int64_t>({1}));
  g.Find("find", Tensor::Vector<std::string>({"a"}), Tensor(int64_t{0}));
  Session first(g.graph);
  Do(first, "init");
  EXPECT_EQ(first.Run("find:0").ToVector<int64_t>(), (std::vector<int64_t>{1}));
  Session second(g.graph);  // TF: a new Session's resource manager starts empty
  EXPECT_THROW(second.Run("find:0"), FailedPreconditionError);
}

template <typename E>
void ExpectError(Session& sess, const std::string& fetch, const std::vector<std::string>& parts) {
  try {
    sess.Run(std::vector<Fetch>{fetch});
    ADD_FAILURE() << fetch << " ran";
  } catch (const E& e) {
    for (const std::string& part : parts) EXPECT_THAT(e.what(), HasSubstr(part)) << fetch;
  }
}

TEST(LookupOpsTest, TFErrorsNameTheNodeAndTable) {
  TableGraph g(DType::kString, DType::kInt64);
  g.Init("init", Tensor::Vector<std::string>({"a", "b"}), Tensor::Vector<int64_t>({1, 2}));
  g.Init("init_same", Tensor::Vector<std::string>({"b", "a"}), Tensor::Vector<int64_t>({2, 1}));
  g.Init("init_other", Tensor::Vector<std::string>({"a"}), Tensor::Vector<int64_t>({5}));
  g.Init("init_int_keys", Tensor::Vector<int64_t>({1}), Tensor::Vector<int64_t>({5}));
  g.Init("init_two_values", Tensor::Vector<std::string>({"a", "a"}),
         Tensor::Vector<int64_t>({1, 2}));
  g.Init("init_sizes", Tensor::Vector<std::string>({"a", "b"}), Tensor::Vector<int64_t>({1}));
  g.Find("find", Tensor::Vector<std::string>({"a"}), Tensor(int64_t{0}));
  g.Find("find_int", Tensor::Vector<int64_t>({1}), Tensor(int64_t{0}));
  g.Find("find_float_default", Tensor::Vector<std::string>({"a"}), Tensor(0.0f));
  g.Find("find_vector_default", Tensor::Vector<std::string>({"a"}),
         Tensor::Vector<int64_t>({0, 0}));
  Session sess(g.graph);
  ExpectError<FailedPreconditionError>(sess, "find",
                                       {"Table not initialized.", "node 'find'", "'vocab'"});
  ExpectError<InvalidArgumentError>(sess, "init_two_values",
                                    {"HashTable has different value for same key. Key a"});
  ExpectError<InvalidArgumentError>(sess, "init_sizes", {"node 'init_sizes'", "one size"});
  Do(sess, "init");
  Do(sess, "init_same");  // the entries it holds: TF's no-op
  ExpectError<FailedPreconditionError>(
      sess, "init_other", {"Table was already initialized with different data.", "init_other"});
  ExpectError<InvalidArgumentError>(
      sess, "init_int_keys", {"keys are int64 but table 'vocab' (string -> int64) takes string"});
  ExpectError<InvalidArgumentError>(sess, "find_int",
                                    {"node 'find_int'", "keys are int64", "takes string keys"});
  ExpectError<InvalidArgumentError>(sess, "find_float_default",
                                    {"default_value are float32", "takes int64"});
  ExpectError<InvalidArgumentError>(sess, "find_vector_default", {"must be a scalar"});
  EXPECT_EQ(sess.Run("find:0").ToVector<int64_t>(), (std::vector<int64_t>{1}));
}

// TF's resource manager: nodes naming one (container, shared_name) reach one
// table; another shared_name or container is another table; without a
// shared_name, use_node_name_sharing names the table by its node.
TEST(LookupOpsTest, NodesWithOneSharedNameAreOneTable) {
  TableGraph g(DType::kString, DType::kInt64);  // "table", shared_name "vocab"
  g.Table("same", DType::kString, DType::kInt64, "vocab");
  g.Table("other", DType::kString, DType::kInt64, "words");
  g.Table("boxed", DType::kString, DType::kInt64, "vocab", false, "box");
  g.Table("words", DType::kString, DType::kInt64, "", true);  // named "words" too
  g.Table("private", DType::kString, DType::kInt64, "");
  g.Table("vocab", DType::kString, DType::kInt64, "");  // its node name is not its name
  const Tensor keys = Tensor::Vector<std::string>({"a", "b"});
  g.Init("init", keys, Tensor::Vector<int64_t>({1, 2}));
  g.Init("init_other", keys, Tensor::Vector<int64_t>({3, 4}), "InitializeTableV2", "other");
  for (const char* table : {"same", "other", "boxed", "words", "private", "vocab"}) {
    g.Find(StrCat("find_", table), keys, Tensor(int64_t{0}), table);
  }
  Session sess(g.graph);
  Do(sess, "init");
  Do(sess, "init_other");
  EXPECT_EQ(sess.Run("find_same:0").ToVector<int64_t>(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(sess.Run("find_other:0").ToVector<int64_t>(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(sess.Run("find_words:0").ToVector<int64_t>(), (std::vector<int64_t>{3, 4}));
  for (const char* table : {"boxed", "private", "vocab"}) {
    ExpectError<FailedPreconditionError>(sess, StrCat("find_", table), {"Table not initialized."});
  }
  // Initializing through one node is initializing the shared table.
  g.Init("init_same_again", keys, Tensor::Vector<int64_t>({9, 9}), "InitializeTableV2", "same");
  ExpectError<FailedPreconditionError>(sess, "init_same_again",
                                       {"Table was already initialized with different data."});
  // Another Session has its own tables, shared among its nodes.
  Session fresh(g.graph);
  ExpectError<FailedPreconditionError>(fresh, "find_same", {"Table not initialized."});
}

TEST(LookupOpsTest, SharingATableOfOtherDTypesIsAnError) {
  TableGraph g(DType::kString, DType::kInt64);
  g.Table("floats", DType::kString, DType::kFloat32, "vocab");
  g.Find("find", Tensor::Vector<std::string>({"a"}), Tensor(int64_t{0}));
  g.Find("find_floats", Tensor::Vector<std::string>({"a"}), Tensor(0.0f), "floats");
  Session sess(g.graph);
  ExpectError<FailedPreconditionError>(sess, "find", {"Table not initialized."});
  ExpectError<InvalidArgumentError>(
      sess, "find_floats",
      {"Conflicting key/value dtypes string->float32 with string-int64 for table vocab",
       "node 'floats'"});
}

TEST(LookupOpsTest, ATableHandleIsNoVariableNorAValue) {
  TableGraph g(DType::kString, DType::kInt64);
  g.graph.AddNode(Node{.name = "read",
                       .op = "ReadVariableOp",
                       .inputs = {"table"},
                       .attrs = Attrs{{"dtype", DType::kInt64}}});
  g.graph.AddNode(Node{.name = "ident",
                       .op = "Identity",
                       .inputs = {"table"},
                       .attrs = Attrs{{"T", DType::kInt64}}});
  Session sess(g.graph);
  ExpectError<InvalidArgumentError>(sess, "read",
                                    {"node 'read'", "must be a variable", "lookup table 'vocab'"});
  ExpectError<InvalidArgumentError>(sess, "ident", {"node 'ident'", "lookup table 'vocab'"});
}

}  // namespace
}  // namespace eager
