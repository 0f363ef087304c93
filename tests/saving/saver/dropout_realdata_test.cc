// A real TF 1.14 graph with tf.nn.dropout: the Udacity MLP of
// ../shared/realdata/tf1_saver_udacity_mlp, whose two dropout layers
// ("dropout", "dropout_1") are TF 1.14's form: RandomUniform on Shape(h),
// scaled by random_uniform's Mul/Add, GreaterEqual with rate = 1 - keep_prob
// (Placeholder_7 via "sub_1"), Cast, and h * (1 / keep_prob) * mask. Seeds
// are (0, 0): nondeterministic, so the checks are TF's semantics, not TF's
// numbers (tests/tf_graphs/dropout_test.py compares seeded graphs exactly),
// and eager's graph Minimize trains through the mask.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "autodiff/sgd.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/names.h"
#include "saving/saver/meta_graph_import_export.h"
#include "saving/saver/saver.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::RealdataDir;

// 20 images [20, 28, 28, 1] with values in [0, 1).
Tensor Images() {
  std::vector<float> v(20 * 28 * 28);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::fmod(static_cast<float>(i) * 0.618f, 1.0f);
  return Tensor::FromVector<float>(std::move(v), Shape{20, 28, 28, 1});
}

TEST(DropoutRealdataTest, UdacityMlpRunsItsTf114DropoutLayers) {
  EAGER_SKIP_WITHOUT_REALDATA();
  ResetDefaultNames();
  const std::string prefix = RealdataDir() + "/tf1_saver_udacity_mlp/model.ckpt";
  Graph graph;
  Graph::AsDefault in(graph);
  const std::unique_ptr<Saver> saver = ImportMetaGraph(prefix + ".meta");
  ASSERT_NE(saver, nullptr);
  Session sess(graph);
  saver->Restore(sess, prefix);
  const Tensor images = Images();
  const auto run = [&](float keep_prob) {
    const auto out =
        sess.Run(std::vector<Fetch>{"Relu_3:0", "dropout_1/mul_1:0"},
                 {{"Placeholder_5:0", images}, {"Placeholder_7:0", Tensor(keep_prob)}});
    return std::pair{out[0]->ToVector<float>(), out[1]->ToVector<float>()};
  };

  // keep_prob 1: rate 0, scale 1: the layer passes h through exactly.
  const auto [h, kept_all] = run(1.0f);
  ASSERT_EQ(h.size(), 20u * 256u);
  EXPECT_EQ(kept_all, h);

  // keep_prob 0.5: about half of the positive activations dropped, the rest
  // doubled exactly (1 / 0.5 is exact), and each run draws another mask.
  std::vector<bool> previous;
  for (int r = 0; r < 2; ++r) {
    const auto [h2, y] = run(0.5f);
    ASSERT_EQ(h2, h);  // the forward up to the layer is deterministic
    int positive = 0;
    int dropped = 0;
    std::vector<bool> mask;
    for (size_t i = 0; i < h.size(); ++i) {
      if (h[i] == 0.0f) {
        EXPECT_EQ(y[i], 0.0f);
        continue;
      }
      ++positive;
      mask.push_back(y[i] != 0.0f);
      if (y[i] == 0.0f) {
        ++dropped;
      } else {
        EXPECT_EQ(y[i], 2.0f * h[i]) << i;
      }
    }
    ASSERT_GT(positive, 1000);
    // Binomial(positive, 0.5): 5 standard deviations.
    EXPECT_NEAR(dropped, positive / 2.0, 5 * std::sqrt(positive * 0.25));
    if (r == 1) {
      EXPECT_NE(mask, previous);
    }
    previous = mask;
  }
}

// eager's TF1 Minimize (GradientDescent, lr 0.5) on the imported graph,
// through its dropout layer: loss = sum(y^2) with y = "dropout_1/mul_1", so
// dL/dy = 2y, the mask passes it where kept, the 1 / keep_prob = 2 doubles it
// and Relu passes it where h > 0 (y is 0 elsewhere). One step is then
// W -= 0.5 * 4 x^T y, with y fetched in the same run as the step: the
// gradient uses the mask that run drew. The layer's bias b (Variable_2) is
// added with "Add" to a tensor whose shape the file leaves unknown, so its
// gradient's broadcast axes come at run time (BroadcastGradientArgs):
// b -= 0.5 * sum over rows of 4y.
TEST(DropoutRealdataTest, MinimizeTrainsThroughTheDropoutMaskOfTheRun) {
  EAGER_SKIP_WITHOUT_REALDATA();
  ResetDefaultNames();
  const std::string prefix = RealdataDir() + "/tf1_saver_udacity_mlp/model.ckpt";
  Graph graph;
  Graph::AsDefault in(graph);
  const std::unique_ptr<Saver> saver = ImportMetaGraph(prefix + ".meta");
  ASSERT_NE(saver, nullptr);
  Variable* w = graph.VariableForNode("Variable");
  ASSERT_NE(w, nullptr);
  const Tensor y = graph.TensorByName("dropout_1/mul_1:0");
  const Tensor loss = ReduceSum(Square(y));
  SGD sgd(SGDOptions{.learning_rate = 0.5, .tf1_compatible = true});
  Variable* b = graph.VariableForNode("Variable_2");
  ASSERT_NE(b, nullptr);
  const Operation train = sgd.Minimize(loss, {w, b});
  Session sess(graph);
  saver->Restore(sess, prefix);
  const Tensor images = Images();
  const std::vector<float> x = images.ToVector<float>();  // rows of 784
  for (int step = 0; step < 2; ++step) {
    const std::vector<float> w0 = sess.Run(w->value()).ToVector<float>();
    const std::vector<float> b0 = sess.Run(b->value()).ToVector<float>();
    const auto out = sess.Run(std::vector<Fetch>{train, y},
                              {{"Placeholder_5:0", images}, {"Placeholder_7:0", Tensor(0.5f)}});
    const std::vector<float> ys = out[1]->ToVector<float>();
    const auto dropped = std::count(ys.begin(), ys.end(), 0.0f);
    ASSERT_GT(dropped, 1000);  // the step ran with a real mask
    const std::vector<float> w1 = sess.Run(w->value()).ToVector<float>();
    const std::vector<float> b1 = sess.Run(b->value()).ToVector<float>();
    for (size_t j = 0; j < 256; ++j) {
      double g = 0;
      for (size_t r = 0; r < 20; ++r) g += ys[r * 256 + j];
      const double want = b0[j] - 2.0 * g;
      EXPECT_NEAR(b1[j], want, 1e-5 * (1 + std::abs(want))) << "bias " << j;
    }
    for (size_t k = 0; k < 784; k += 13) {  // every 13th input row of W
      for (size_t j = 0; j < 256; ++j) {
        double g = 0;
        for (size_t r = 0; r < 20; ++r) g += double{x[r * 784 + k]} * ys[r * 256 + j];
        const double want = w0[k * 256 + j] - 2.0 * g;
        EXPECT_NEAR(w1[k * 256 + j], want, 1e-5 * (1 + std::abs(want))) << k << "," << j;
      }
    }
  }
}

}  // namespace
}  // namespace eager
