// TensorArrayV3 and its ops in a Session: graphs built node by node as
// tf.TensorArray builds them, against hand-computed values; TF's errors for
// bad indices, dtypes and reads, naming the node.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/session.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

void Add(Graph& g, std::string name, std::string op, std::vector<std::string> inputs,
         Attrs attrs = {}) {
  Node node{.name = std::move(name), .op = std::move(op), .inputs = std::move(inputs)};
  node.attrs = std::move(attrs);
  g.AddNode(std::move(node));
}

void Const(Graph& g, std::string name, const Tensor& value) {
  Add(g, std::move(name), "Const", {}, Attrs().Set("dtype", value.dtype()).Set("value", value));
}

Attrs Float() { return Attrs().Set("T", DType::kFloat32); }

// ta = TensorArray(float32, size, element_shape [2]); rows 0..2 written
// with [i, 10 i] (flow chained); "gather" stacks rows 0..2, "size" is its size.
void ThreeRows(Graph& g, int32_t size, bool clear_after_read = true) {
  Const(g, "size", Tensor(size));
  Add(g, "ta", "TensorArrayV3", {"size"},
      Attrs()
          .Set("dtype", DType::kFloat32)
          .Set("element_shape", Shape{2})
          .Set("clear_after_read", clear_after_read));
  std::string flow = "ta:1";
  for (int i = 0; i < 3; ++i) {
    const std::string n = std::to_string(i);
    Const(g, "i" + n, Tensor(int32_t{i}));
    Const(g, "v" + n,
          Tensor::FromVector<float>({static_cast<float>(i), 10.0f * static_cast<float>(i)},
                                    Shape{2}));
    Add(g, "write" + n, "TensorArrayWriteV3", {"ta", "i" + n, "v" + n, flow}, Float());
    flow = "write" + n;
  }
  Const(g, "all", Tensor::FromVector<int32_t>({0, 1, 2}, Shape{3}));
  Add(g, "gather", "TensorArrayGatherV3", {"ta", "all", flow},
      Attrs().Set("dtype", DType::kFloat32));
  Add(g, "size_of", "TensorArraySizeV3", {"ta", flow});
  Add(g, "read1", "TensorArrayReadV3", {"ta", "i1", flow}, Attrs().Set("dtype", DType::kFloat32));
  Add(g, "read1_again", "TensorArrayReadV3", {"ta", "i1", "read1"},
      Attrs().Set("dtype", DType::kFloat32));
}

std::vector<float> Floats(const Tensor& t) {
  const auto v = t.data<float>();
  return {v.begin(), v.end()};
}

void ExpectError(Session& sess, const char* fetch, const std::string& message) {
  try {
    sess.Run(fetch);
    FAIL() << "expected InvalidArgumentError with " << message;
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr(message));
  }
}

TEST(TensorArrayTest, WritesThenGathersTheRowsStacked) {
  Graph g;
  ThreeRows(g, 3);
  Session sess(g);
  const Tensor stacked = sess.Run("gather:0");
  EXPECT_EQ(stacked.shape(), (Shape{3, 2}));
  EXPECT_EQ(Floats(stacked), (std::vector<float>{0, 0, 1, 10, 2, 20}));
  EXPECT_EQ(sess.Run("size_of:0").data<int32_t>()[0], 3);
  // Each run makes a new array: the rows can be written again.
  EXPECT_EQ(Floats(sess.Run("read1:0")), (std::vector<float>{1, 10}));
}

TEST(TensorArrayTest, AReadClearsTheElementUnlessClearAfterReadIsFalse) {
  Graph g;
  ThreeRows(g, 3);
  Session sess(g);
  ExpectError(sess, "read1_again:0", "twice because it was cleared after a previous read");
  Graph keep;
  ThreeRows(keep, 3, /*clear_after_read=*/false);
  Session again(keep);
  EXPECT_EQ(Floats(again.Run("read1_again:0")), (std::vector<float>{1, 10}));
}

TEST(TensorArrayTest, AWritePastTheSizeOfAFixedArrayIsRefused) {
  Graph g;
  ThreeRows(g, 2);
  Session sess(g);
  ExpectError(sess, "gather:0", "tried to write to index 2 of TensorArray ta");
}

TEST(TensorArrayTest, AHugeSizeAllocatesNothingAndANegativeOneIsRefused) {
  Graph g;
  ThreeRows(g, 2147483647);
  Session sess(g);
  EXPECT_EQ(sess.Run("size_of:0").data<int32_t>()[0], 2147483647);
  EXPECT_EQ(sess.Run("gather:0").shape(), (Shape{3, 2}));
  Graph negative;
  ThreeRows(negative, -1);
  Session refused(negative);
  ExpectError(refused, "gather:0", "size must be >= 0, got -1");
}

TEST(TensorArrayTest, WrongDtypesShapesAndUnwrittenReadsAreRefused) {
  Graph g;
  ThreeRows(g, 5);
  Const(g, "i3", Tensor(int32_t{3}));
  Const(g, "int_value", Tensor::FromVector<int32_t>({1, 2}, Shape{2}));
  Const(g, "long_value", Tensor::FromVector<float>({1, 2, 3}, Shape{3}));
  Add(g, "write_int", "TensorArrayWriteV3", {"ta", "i3", "int_value", "ta:1"},
      Attrs().Set("T", DType::kInt32));
  Add(g, "write_long", "TensorArrayWriteV3", {"ta", "i3", "long_value", "ta:1"}, Float());
  Add(g, "write_twice", "TensorArrayWriteV3", {"ta", "i0", "v1", "write2"}, Float());
  Add(g, "read_unwritten", "TensorArrayReadV3", {"ta", "i3", "write2"},
      Attrs().Set("dtype", DType::kFloat32));
  Session sess(g);
  ExpectError(sess, "write_int:0", "has dtype float32, but the value written is int32");
  ExpectError(sess, "write_long:0", "its elements have shape [2], the value [3]");
  ExpectError(sess, "write_twice:0", "index 0 because it has already been written to");
  ExpectError(sess, "read_unwritten:0", "index 3 because it has not yet been written to");
}

TEST(TensorArrayTest, ScatterWritesRowsAndIndicesMustMatchThem) {
  Graph g;
  Const(g, "size", Tensor(int32_t{4}));
  Add(g, "ta", "TensorArrayV3", {"size"},
      Attrs().Set("dtype", DType::kFloat32).Set("clear_after_read", true));
  Const(g, "where", Tensor::FromVector<int32_t>({3, 0}, Shape{2}));
  Const(g, "rows", Tensor::FromVector<float>({1, 2, 3, 4}, Shape{2, 2}));
  Add(g, "scatter", "TensorArrayScatterV3", {"ta", "where", "rows", "ta:1"}, Float());
  Const(g, "back", Tensor::FromVector<int32_t>({0, 3}, Shape{2}));
  Add(g, "gather", "TensorArrayGatherV3", {"ta", "back", "scatter"},
      Attrs().Set("dtype", DType::kFloat32));
  Const(g, "three", Tensor::FromVector<int32_t>({0, 1, 2}, Shape{3}));
  Add(g, "bad_scatter", "TensorArrayScatterV3", {"ta", "three", "rows", "ta:1"}, Float());
  Session sess(g);
  EXPECT_EQ(Floats(sess.Run("gather:0")), (std::vector<float>{3, 4, 1, 2}));
  ExpectError(sess, "bad_scatter:0", "the value's first dimension must be the 3 indices'");
}

}  // namespace
}  // namespace eager
