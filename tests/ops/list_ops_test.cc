// The TensorList ops (ops/list_ops.h) in a Session, against hand-computed
// values: lists made from tensors, reserved, pushed and popped, set and read
// item by item, gathered and scattered; value semantics (a SetItem leaves its
// input list as it was); a list carried through a StatelessWhile loop; and
// crafted nodes (wrong dtypes, indices out of range, mismatched shapes, huge
// sizes) refused naming the node. TF 2.21 judges real graphs in
// tests/tf_graphs/saved_model_tf2_test.py.

#include "ops/list_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ops/internal/list_copies.h"
#include "ops/session.h"
#include "runtime/function_library.h"
#include "runtime/graph.h"
#include "runtime/tensor_list.h"

namespace eager {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr DType kF = DType::kFloat32;

Node MakeNode(std::string name, std::string op, std::vector<std::string> inputs, Attrs attrs) {
  return Node{.name = std::move(name),
              .op = std::move(op),
              .inputs = std::move(inputs),
              .attrs = std::move(attrs)};
}

Node ConstNode(std::string name, const Tensor& value) {
  return MakeNode(std::move(name), "Const", {}, Attrs{{"value", value}, {"dtype", value.dtype()}});
}

Attrs ListAttrs(DType element_dtype = kF) {
  return Attrs{{"element_dtype", element_dtype}, {"shape_type", DType::kInt32}};
}

// A graph with a few constants the tests use:
//   rows = [[1,2],[3,4],[5,6]]  shape2 = [2]  any = -1 (unknown rank)
//   partial = [-1]  zero..two, five: int32 scalars  item = [7,8]
class ListGraph {
 public:
  ListGraph() {
    Add(ConstNode("rows", Tensor::Matrix<float>({{1, 2}, {3, 4}, {5, 6}})));
    Add(ConstNode("shape2", Tensor::Vector<int32_t>({2})));
    Add(ConstNode("any", Tensor(int32_t{-1})));
    Add(ConstNode("partial", Tensor::Vector<int32_t>({-1})));
    Add(ConstNode("zero", Tensor(int32_t{0})));
    Add(ConstNode("one", Tensor(int32_t{1})));
    Add(ConstNode("two", Tensor(int32_t{2})));
    Add(ConstNode("five", Tensor(int32_t{5})));
    Add(ConstNode("item", Tensor::Vector<float>({7, 8})));
  }
  void Add(Node node) { graph.AddNode(std::move(node)); }
  // The rows as a list: "from".
  void AddFromTensor() {
    Add(MakeNode("from", "TensorListFromTensor", {"rows", "shape2"}, ListAttrs()));
  }
  void AddStack(const std::string& name, const std::string& list,
                const std::string& shape = "any") {
    Add(MakeNode(name, "TensorListStack", {list, shape}, Attrs{{"element_dtype", kF}}));
  }
  // `fetch` is "node:port", or "node" for its output 0.
  Tensor Run(const std::string& fetch) {
    Session sess(graph);
    const std::string name = fetch.find(':') == std::string::npos ? fetch + ":0" : fetch;
    return sess.Run(name.c_str());
  }
  std::string Error(const std::string& fetch) {
    try {
      Run(fetch);
    } catch (const eager::Error& e) {
      return e.what();
    }
    return "(no error)";
  }
  Graph graph;
};

std::vector<float> Floats(const Tensor& t) { return t.ToVector<float>(); }

TEST(ListOpsTest, FromTensorThenStackGivesTheTensorBack) {
  ListGraph g;
  g.AddFromTensor();
  g.AddStack("stack", "from");
  g.Add(MakeNode("length", "TensorListLength", {"from"}, {}));
  const Tensor list = g.Run("from");
  EXPECT_EQ(list.dtype(), DType::kVariant);
  EXPECT_EQ(list.shape(), Shape{});
  EXPECT_THAT(list.DebugString(), HasSubstr("TensorList(float32, [2], 3 elements)"));
  const Tensor stacked = g.Run("stack");
  EXPECT_EQ(stacked.shape(), (Shape{3, 2}));
  EXPECT_EQ(Floats(stacked), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(g.Run("length").scalar<int32_t>(), 3);
}

TEST(ListOpsTest, GetItemAndGatherReadRows) {
  ListGraph g;
  g.AddFromTensor();
  g.Add(MakeNode("get", "TensorListGetItem", {"from", "two", "any"}, Attrs{{"element_dtype", kF}}));
  g.Add(ConstNode("indices", Tensor::Vector<int32_t>({2, 0, 2})));
  g.Add(MakeNode("gather", "TensorListGather", {"from", "indices", "any"},
                 Attrs{{"element_dtype", kF}}));
  EXPECT_EQ(Floats(g.Run("get")), (std::vector<float>{5, 6}));
  const Tensor gathered = g.Run("gather");
  EXPECT_EQ(gathered.shape(), (Shape{3, 2}));
  EXPECT_EQ(Floats(gathered), (std::vector<float>{5, 6, 1, 2, 5, 6}));
}

// TensorListSetItem makes a new list: the input list, fetched in the same
// run, still holds its old row.
TEST(ListOpsTest, SetItemLeavesItsInputListUnchanged) {
  ListGraph g;
  g.AddFromTensor();
  g.Add(
      MakeNode("set", "TensorListSetItem", {"from", "one", "item"}, Attrs{{"element_dtype", kF}}));
  // Stacked after the SetItem ran (a control input), so that changing the
  // list in place would show.
  g.Add(MakeNode("old", "TensorListStack", {"from", "any", "^set"}, Attrs{{"element_dtype", kF}}));
  g.AddStack("new", "set");
  Session sess(g.graph);
  const std::vector<std::optional<Tensor>> out = sess.Run(std::vector<Fetch>{"old:0", "new:0"});
  EXPECT_EQ(Floats(*out[0]), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Floats(*out[1]), (std::vector<float>{1, 2, 7, 8, 5, 6}));
}

// Unset elements read as zeros when the element shape is fully known, and
// are an error naming the node when it is not.
TEST(ListOpsTest, ReservedElementsReadAsZerosOnlyWithAKnownShape) {
  ListGraph g;
  g.Add(MakeNode("reserved", "TensorListReserve", {"shape2", "two"}, ListAttrs()));
  g.Add(MakeNode("set", "TensorListSetItem", {"reserved", "one", "item"},
                 Attrs{{"element_dtype", kF}}));
  g.AddStack("stack", "set");
  g.Add(MakeNode("vague", "TensorListReserve", {"partial", "two"}, ListAttrs()));
  g.AddStack("vague_stack", "vague");
  g.Add(MakeNode("vague_get", "TensorListGetItem", {"vague", "zero", "any"},
                 Attrs{{"element_dtype", kF}}));
  // A partial list whose set element tells the shape: zeros of that shape.
  g.Add(MakeNode("vague_set", "TensorListSetItem", {"vague", "one", "item"},
                 Attrs{{"element_dtype", kF}}));
  g.AddStack("vague_set_stack", "vague_set");
  EXPECT_EQ(Floats(g.Run("stack")), (std::vector<float>{0, 0, 7, 8}));
  EXPECT_EQ(Floats(g.Run("vague_set_stack")), (std::vector<float>{0, 0, 7, 8}));
  EXPECT_THAT(g.Error("vague_stack"),
              AllOf(HasSubstr("node 'vague_stack'"), HasSubstr("never set")));
  EXPECT_THAT(g.Error("vague_get"), AllOf(HasSubstr("node 'vague_get'"), HasSubstr("[?]")));
}

TEST(ListOpsTest, PushBackAndPopBackAreLastInFirstOut) {
  ListGraph g;
  g.Add(MakeNode("empty", "EmptyTensorList", {"shape2", "any"}, ListAttrs()));
  g.Add(MakeNode("push1", "TensorListPushBack", {"empty", "item"}, Attrs{{"element_dtype", kF}}));
  g.Add(ConstNode("item2", Tensor::Vector<float>({-1, -2})));
  g.Add(MakeNode("push2", "TensorListPushBack", {"push1", "item2"}, Attrs{{"element_dtype", kF}}));
  g.Add(MakeNode("pop", "TensorListPopBack", {"push2", "any"}, Attrs{{"element_dtype", kF}}));
  g.AddStack("rest", "pop:0");
  g.Add(MakeNode("pop_empty", "TensorListPopBack", {"empty", "any"}, Attrs{{"element_dtype", kF}}));
  g.AddStack("empty_stack", "empty", "shape2");
  EXPECT_EQ(Floats(g.Run("pop:1")), (std::vector<float>{-1, -2}));
  EXPECT_EQ(Floats(g.Run("rest")), (std::vector<float>{7, 8}));
  EXPECT_EQ(g.Run("empty_stack").shape(), (Shape{0, 2}));
  EXPECT_THAT(g.Error("pop_empty"), AllOf(HasSubstr("node 'pop_empty'"), HasSubstr("empty list")));
}

TEST(ListOpsTest, ScatterResizeAndElementShape) {
  ListGraph g;
  g.Add(ConstNode("at", Tensor::Vector<int32_t>({3, 0, 1})));
  g.Add(MakeNode("scattered", "TensorListScatterV2", {"rows", "at", "shape2", "any"}, ListAttrs()));
  g.AddStack("scattered_stack", "scattered");
  g.AddFromTensor();
  g.Add(ConstNode("at2", Tensor::Vector<int32_t>({4, 1})));
  g.Add(ConstNode("two_rows", Tensor::Matrix<float>({{9, 9}, {-3, -4}})));
  g.Add(MakeNode("into", "TensorListScatterIntoExistingList", {"from", "two_rows", "at2"},
                 Attrs{{"element_dtype", kF}}));
  g.AddStack("into_stack", "into");
  g.Add(MakeNode("resized", "TensorListResize", {"from", "one"}, {}));
  g.AddStack("resized_stack", "resized");
  g.Add(MakeNode("shape_of", "TensorListElementShape", {"from"},
                 Attrs{{"shape_type", DType::kInt64}}));
  g.Add(MakeNode("unknown", "EmptyTensorList", {"any", "any"}, ListAttrs()));
  g.Add(MakeNode("unknown_shape", "TensorListElementShape", {"unknown"},
                 Attrs{{"shape_type", DType::kInt32}}));
  // num_elements -1: one past the largest index (3); index 2 is unset.
  EXPECT_EQ(Floats(g.Run("scattered_stack")), (std::vector<float>{3, 4, 5, 6, 0, 0, 1, 2}));
  // Scattering past the end grows the list with unset (zero) elements.
  EXPECT_EQ(Floats(g.Run("into_stack")), (std::vector<float>{1, 2, -3, -4, 5, 6, 0, 0, 9, 9}));
  EXPECT_EQ(Floats(g.Run("resized_stack")), (std::vector<float>{1, 2}));
  EXPECT_EQ(g.Run("shape_of").ToVector<int64_t>(), (std::vector<int64_t>{2}));
  const Tensor unknown = g.Run("unknown_shape");
  EXPECT_EQ(unknown.shape(), Shape{});
  EXPECT_EQ(unknown.scalar<int32_t>(), -1);
}

// tf.TensorArray's split() and concat(): rows [0,1) and [1,3) as two
// elements, concatenated back with their lengths; an unset element takes its
// length from leading_dims.
TEST(ListOpsTest, SplitThenConcatGivesTheRowsAndLengths) {
  ListGraph g;
  g.Add(ConstNode("lengths", Tensor::Vector<int64_t>({1, 2})));
  g.Add(ConstNode("inner", Tensor::Vector<int32_t>({-1, 2})));
  g.Add(MakeNode("split", "TensorListSplit", {"rows", "inner", "lengths"}, ListAttrs()));
  g.Add(ConstNode("no_leading", Tensor::FromVector<int64_t>({}, Shape{0})));
  g.Add(MakeNode("concat", "TensorListConcatV2", {"split", "inner", "no_leading"}, ListAttrs()));
  g.Add(MakeNode("grown", "TensorListResize", {"split", "five"}, {}));
  g.Add(ConstNode("leading", Tensor::Vector<int64_t>({9, 9, 1, 0, 2})));
  g.Add(MakeNode("concat_grown", "TensorListConcatV2", {"grown", "inner", "leading"}, ListAttrs()));
  g.Add(ConstNode("bad_lengths", Tensor::Vector<int64_t>({2, 2})));
  g.Add(MakeNode("bad_split", "TensorListSplit", {"rows", "inner", "bad_lengths"}, ListAttrs()));
  const Tensor concat = g.Run("concat:0");
  EXPECT_EQ(concat.shape(), (Shape{3, 2}));
  EXPECT_EQ(Floats(concat), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(g.Run("concat:1").ToVector<int64_t>(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Floats(g.Run("concat_grown:0")),
            (std::vector<float>{1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(g.Run("concat_grown:1").ToVector<int64_t>(), (std::vector<int64_t>{1, 2, 1, 0, 2}));
  EXPECT_THAT(g.Error("bad_split"), AllOf(HasSubstr("node 'bad_split'"), HasSubstr("[2, 2]")));
}

// for i in range(n): out[i] = rows[i % 3] * i, in a StatelessWhile "loop"
// whose loop variables are (i, rows, out), rows and out lists, as TF 2
// writes a Keras RNN's time loop (GetItem of the inputs, SetItem of each
// step's output); out is reserved with `reserve` elements; "stack" stacks it.
void AddLoop(ListGraph& g, int32_t n, int32_t reserve) {
  constexpr int kInt = 3, kBool = 10, kVariantType = 21;
  const std::vector<FunctionArg> vars = {{.name = "i", .tf_type = kInt},
                                         {.name = "rows", .tf_type = kVariantType},
                                         {.name = "out", .tf_type = kVariantType}};
  FunctionDefinition cond{.name = "cond", .inputs = vars};
  cond.outputs = {{.name = "go", .tf_type = kBool}};
  cond.nodes.push_back(ConstNode("n", Tensor(n)));
  cond.nodes.push_back(MakeNode("less", "Less", {"i", "n:output:0"}, Attrs{{"T", DType::kInt32}}));
  cond.ret = {{"go", "less:z:0"}};

  FunctionDefinition body{.name = "body", .inputs = vars};
  body.outputs = {{.name = "next_i", .tf_type = kInt},
                  {.name = "next_rows", .tf_type = kVariantType},
                  {.name = "next_out", .tf_type = kVariantType}};
  body.nodes.push_back(ConstNode("one", Tensor(int32_t{1})));
  body.nodes.push_back(ConstNode("three", Tensor(int32_t{3})));
  body.nodes.push_back(ConstNode("any", Tensor(int32_t{-1})));
  body.nodes.push_back(
      MakeNode("at", "FloorMod", {"i", "three:output:0"}, Attrs{{"T", DType::kInt32}}));
  body.nodes.push_back(MakeNode("row", "TensorListGetItem", {"rows", "at:z:0", "any:output:0"},
                                Attrs{{"element_dtype", kF}}));
  body.nodes.push_back(MakeNode("fi", "Cast", {"i"}, Attrs{{"SrcT", DType::kInt32}, {"DstT", kF}}));
  body.nodes.push_back(MakeNode("scaled", "Mul", {"row:item:0", "fi:y:0"}, Attrs{{"T", kF}}));
  body.nodes.push_back(MakeNode("set", "TensorListSetItem", {"out", "i", "scaled:z:0"},
                                Attrs{{"element_dtype", kF}}));
  body.nodes.push_back(
      MakeNode("inc", "AddV2", {"i", "one:output:0"}, Attrs{{"T", DType::kInt32}}));
  body.ret = {{"next_i", "inc:z:0"}, {"next_rows", "rows"}, {"next_out", "set:output_handle:0"}};

  auto library = std::make_shared<FunctionLibrary>();
  library->Add(std::move(cond));
  library->Add(std::move(body));
  g.graph.SetFunctionLibrary(library);
  g.AddFromTensor();
  g.Add(ConstNode("reserve", Tensor(reserve)));
  g.Add(MakeNode("reserved", "TensorListReserve", {"shape2", "reserve"}, ListAttrs()));
  g.Add(
      MakeNode("loop", "StatelessWhile", {"zero", "from", "reserved"},
               Attrs{{"cond", std::string("cond")},
                     {"body", std::string("body")},
                     {"T", std::vector<DType>{DType::kInt32, DType::kVariant, DType::kVariant}}}));
  g.AddStack("stack", "loop:2");
}

TEST(ListOpsTest, ListsAreCarriedThroughAWhileLoop) {
  ListGraph g;
  AddLoop(g, 4, 5);
  EXPECT_EQ(g.Run("loop:0").scalar<int32_t>(), 4);
  EXPECT_EQ(Floats(g.Run("stack")), (std::vector<float>{0, 0, 3, 4, 10, 12, 3, 6, 0, 0}));
}

// Setting item i of a list each iteration costs O(1), not a copy of the
// list: the Session hands a value's last reader the value itself, the While
// its body the loop variables, so SetItem holds the only reference and
// changes the list in place (ops/list_ops.h). Counted, not timed: the lists
// copied do not grow with the iterations (at most the one the loop starts
// from), where copying on every SetItem would copy 1000 of them (and make
// the loop quadratic).
TEST(ListOpsTest, SettingAnItemEachIterationChangesTheListInPlace) {
  const auto copies = [](int32_t n) {
    ListGraph g;
    AddLoop(g, n, n);
    Session sess(g.graph);
    const int64_t before = internal::TensorListCopies();
    EXPECT_EQ(sess.Run("stack:0").shape(), (Shape{n, 2}));
    return internal::TensorListCopies() - before;
  };
  const int64_t few = copies(10);
  EXPECT_LE(few, 1);
  EXPECT_EQ(copies(1000), few);
}

// ---- Crafted nodes: clear errors naming the node ------------------------------------------

TEST(ListOpsTest, ElementDTypeOtherThanTheListsIsRefused) {
  ListGraph g;
  g.AddFromTensor();
  g.Add(MakeNode("get", "TensorListGetItem", {"from", "zero", "any"},
                 Attrs{{"element_dtype", DType::kInt32}}));
  g.Add(ConstNode("ints", Tensor::Vector<int32_t>({1, 2})));
  g.Add(MakeNode("push", "TensorListPushBack", {"from", "ints"},
                 Attrs{{"element_dtype", DType::kInt32}}));
  EXPECT_THAT(g.Error("get"), AllOf(HasSubstr("node 'get'"), HasSubstr("int32"),
                                    HasSubstr("list elements float32")));
  EXPECT_THAT(g.Error("push"), HasSubstr("node 'push'"));
}

TEST(ListOpsTest, IndicesOutOfRangeAreRefused) {
  ListGraph g;
  g.AddFromTensor();
  g.Add(
      MakeNode("get", "TensorListGetItem", {"from", "five", "any"}, Attrs{{"element_dtype", kF}}));
  g.Add(
      MakeNode("set", "TensorListSetItem", {"from", "five", "item"}, Attrs{{"element_dtype", kF}}));
  g.Add(ConstNode("minus", Tensor::Vector<int32_t>({0, -1})));
  g.Add(MakeNode("gather", "TensorListGather", {"from", "minus", "any"},
                 Attrs{{"element_dtype", kF}}));
  EXPECT_THAT(g.Error("get"), AllOf(HasSubstr("node 'get'"), HasSubstr("index 5 is out of range"),
                                    HasSubstr("3 elements")));
  EXPECT_THAT(g.Error("set"), AllOf(HasSubstr("node 'set'"), HasSubstr("element 5")));
  EXPECT_THAT(g.Error("gather"), AllOf(HasSubstr("node 'gather'"), HasSubstr("index -1")));
}

TEST(ListOpsTest, ElementsOfAnotherShapeAreRefused) {
  ListGraph g;
  g.AddFromTensor();
  g.Add(ConstNode("long", Tensor::Vector<float>({1, 2, 3})));
  g.Add(
      MakeNode("set", "TensorListSetItem", {"from", "zero", "long"}, Attrs{{"element_dtype", kF}}));
  g.Add(ConstNode("shape3", Tensor::Vector<int32_t>({3})));
  g.Add(MakeNode("bad_from", "TensorListFromTensor", {"rows", "shape3"}, ListAttrs()));
  // A list of unknown element shape holding elements of two shapes.
  g.Add(MakeNode("loose", "EmptyTensorList", {"any", "any"}, ListAttrs()));
  g.Add(MakeNode("p1", "TensorListPushBack", {"loose", "item"}, Attrs{{"element_dtype", kF}}));
  g.Add(MakeNode("p2", "TensorListPushBack", {"p1", "long"}, Attrs{{"element_dtype", kF}}));
  g.AddStack("ragged", "p2");
  EXPECT_THAT(g.Error("set"), AllOf(HasSubstr("node 'set'"), HasSubstr("[2]"), HasSubstr("[3]")));
  EXPECT_THAT(g.Error("bad_from"), AllOf(HasSubstr("node 'bad_from'"), HasSubstr("[3,2]")));
  EXPECT_THAT(g.Error("ragged"), AllOf(HasSubstr("node 'ragged'"), HasSubstr("one shape")));
}

TEST(ListOpsTest, HugeSizesAreRefusedBeforeAllocating) {
  ListGraph g;
  g.Add(ConstNode("huge", Tensor(int32_t{2147483647})));
  g.Add(ConstNode("negative", Tensor(int32_t{-4})));
  g.Add(MakeNode("reserve", "TensorListReserve", {"shape2", "huge"}, ListAttrs()));
  g.Add(MakeNode("reserve_neg", "TensorListReserve", {"shape2", "negative"}, ListAttrs()));
  g.AddFromTensor();
  g.Add(MakeNode("resize", "TensorListResize", {"from", "huge"}, {}));
  g.Add(MakeNode("grow", "TensorListSetItem", {"from", "huge", "item"},
                 Attrs{{"element_dtype", kF}, {"resize_if_index_out_of_bounds", true}}));
  g.Add(ConstNode("far", Tensor::Vector<int32_t>({2147483647})));
  g.Add(ConstNode("one_row", Tensor::Matrix<float>({{1, 2}})));
  g.Add(MakeNode("scatter", "TensorListScatterIntoExistingList", {"from", "one_row", "far"},
                 Attrs{{"element_dtype", kF}}));
  g.Add(ConstNode("bad_shape", Tensor(int32_t{3})));
  g.Add(MakeNode("scalar_shape", "TensorListReserve", {"bad_shape", "two"}, ListAttrs()));
  for (const char* node : {"reserve", "reserve_neg", "resize", "grow", "scatter"}) {
    EXPECT_THAT(g.Error(node), AllOf(HasSubstr(StrCat("node '", node, "'")),
                                     HasSubstr(StrCat("expected 0 to ", kMaxListElements))));
  }
  // Unset elements of a shape too large for memory: stacking them (their
  // zeros) is refused before allocating, naming the node.
  g.Add(ConstNode("vast", Tensor::Vector<int32_t>({1 << 30, 1 << 30})));
  g.Add(MakeNode("vast_list", "TensorListReserve", {"vast", "two"}, ListAttrs()));
  g.AddStack("vast_stack", "vast_list");
  g.Add(MakeNode("vast_get", "TensorListGetItem", {"vast_list", "zero", "any"},
                 Attrs{{"element_dtype", kF}}));
  for (const char* node : {"vast_stack", "vast_get"}) {
    try {
      g.Run(node);
      ADD_FAILURE() << node << ": expected ResourceExhaustedError";
    } catch (const ResourceExhaustedError& e) {
      EXPECT_THAT(e.what(), HasSubstr(StrCat("{{node ", node, "}}"))) << node;
    }
  }
  EXPECT_THAT(g.Error("scalar_shape"),
              AllOf(HasSubstr("node 'scalar_shape'"), HasSubstr("must be -1 (unknown rank)")));
}

TEST(ListOpsTest, StackOfAnotherSizeThanNumElementsIsRefused) {
  ListGraph g;
  g.AddFromTensor();
  g.Add(MakeNode("stack", "TensorListStack", {"from", "any"},
                 Attrs{{"element_dtype", kF}, {"num_elements", int64_t{4}}}));
  g.Add(MakeNode("not_a_list", "TensorListLength", {"rows"}, {}));
  EXPECT_THAT(g.Error("stack"),
              AllOf(HasSubstr("node 'stack'"), HasSubstr("expected a list with 4"),
                    HasSubstr("3 elements")));
  EXPECT_THAT(g.Error("not_a_list"), AllOf(HasSubstr("not_a_list"), HasSubstr("variant")));
}

}  // namespace
}  // namespace eager
