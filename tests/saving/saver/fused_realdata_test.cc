// The graph fusion of a Session (ops/internal/graph_fusion.h) on real TF1
// graphs: ../shared/realdata's LeNet (TF 1.0.1: Conv2D + Add of the bias
// variable + Relu, MatMul + Add + Relu) restored from its checkpoint runs
// with its convolutions and dense layers fused, and gives the unfused
// Session's logits; the ELU MLP with batch norm (TF 1.12), where nothing
// follows the fused patterns, runs as before.

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "ops/session.h"
#include "runtime/graph.h"
#include "runtime/names.h"
#include "saving/saver/meta_graph_import_export.h"
#include "saving/saver/saver.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::RealdataDir;

Tensor Inputs(const Shape& shape) {
  std::vector<float> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>((i * 7919) % 1000) / 1000.f - 0.5f;
  return Tensor::FromVector<float>(std::move(v), shape);
}

// The fetch's value from a fused and an unfused Session, and the fused
// Session's count of fused nodes.
struct Runs {
  std::vector<float> fused, unfused;
  int64_t fused_nodes = 0;
};

Runs RunBoth(const std::string& prefix, const char* fetch, const Feeds& feeds) {
  ResetDefaultNames();
  Graph graph;
  std::unique_ptr<Saver> saver;
  {
    Graph::AsDefault in(graph);
    saver = ImportMetaGraph(prefix + ".meta");
  }
  Runs r;
  Session fused(graph);
  saver->Restore(fused, prefix);
  r.fused = fused.Run(fetch, feeds).ToVector<float>();
  r.fused_nodes = fused.last_run_fused_nodes();
  SessionOptions off;
  off.fuse_ops = false;
  Session unfused(graph, off);
  r.unfused = unfused.Run(fetch, feeds).ToVector<float>();
  EXPECT_EQ(unfused.last_run_fused_nodes(), 0);
  return r;
}

TEST(FusedRealdataTest, LenetRunsFusedWithTheUnfusedLogits) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const Runs r = RunBoth(RealdataDir() + "/tf1_saver_lenet_adam/lenet", "add_4:0",
                         {{"Placeholder:0", Inputs(Shape{8, 32, 32, 1})}});
  // Two convolutions and two hidden dense layers (+ bias + Relu), the
  // logits' MatMul + bias.
  EXPECT_EQ(r.fused_nodes, 14);
  ASSERT_EQ(r.fused.size(), 80u);
  for (size_t i = 0; i < r.fused.size(); ++i) {
    // oneDNN adds the convolution's bias inside its kernel: float32 rounding.
    EXPECT_NEAR(r.fused[i], r.unfused[i], 1e-5 * (1 + std::abs(r.unfused[i]))) << "logit " << i;
  }
}

TEST(FusedRealdataTest, EluMlpWithBatchNormHasNothingToFuse) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const Runs r =
      RunBoth(RealdataDir() + "/tf1_saver_handson_bn_partial_adam/dnn11_0_to_4.ckpt",
              "dnn/y_prob:0", {{"X:0", Inputs(Shape{4, 784})}, {"dnn/training:0", Tensor(false)}});
  EXPECT_EQ(r.fused_nodes, 0);
  EXPECT_EQ(r.fused, r.unfused);
}

}  // namespace
}  // namespace eager
