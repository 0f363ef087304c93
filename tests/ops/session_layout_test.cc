// Imported nodes whose attributes ask for what eager's kernels do not
// compute fail by name instead of computing something else.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ops/session.h"
#include "runtime/errors.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

// x [1, 2, 2, 1] + bias [1] with `data_format`, as ImportMetaGraph adds it.
void AddBiasAdd(Graph& graph, const char* data_format) {
  Node x{.name = "x", .op = "Const"};
  x.attrs = {{"dtype", DType::kFloat32}, {"value", Tensor::Zeros(Shape{1, 2, 2, 1})}};
  x.output_specs = {{Shape{1, 2, 2, 1}, DType::kFloat32}};
  graph.AddNode(x);
  Node bias{.name = "bias", .op = "Const"};
  bias.attrs = {{"dtype", DType::kFloat32}, {"value", Tensor::Vector<float>({0.5f})}};
  bias.output_specs = {{Shape{1}, DType::kFloat32}};
  graph.AddNode(bias);
  Node add{.name = "BiasAdd", .op = "BiasAdd", .inputs = {"x", "bias"}};
  add.attrs = {{"T", DType::kFloat32}, {"data_format", std::string(data_format)}};
  graph.AddNode(add);
}

TEST(SessionLayoutTest, NhwcRunsAndNchwIsUnimplementedNamingTheNode) {
  Graph nhwc;
  AddBiasAdd(nhwc, "NHWC");
  EXPECT_EQ(Session(nhwc).Run(nhwc.TensorByName("BiasAdd:0")).ToVector<float>(),
            (std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f}));
  Graph nchw;
  AddBiasAdd(nchw, "NCHW");
  Session sess(nchw);
  try {
    sess.Run(nchw.TensorByName("BiasAdd:0"));
    ADD_FAILURE() << "an NCHW BiasAdd ran as NHWC";
  } catch (const UnimplementedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("node 'BiasAdd' (BiasAdd) has data_format 'NCHW'"));
  }
}

}  // namespace
}  // namespace eager
