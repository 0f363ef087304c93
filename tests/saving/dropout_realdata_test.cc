// A real TF 1.14 graph with tf.nn.dropout: the Udacity MLP of
// ../shared/realdata/tf1_saver_udacity_mlp, whose two dropout layers
// ("dropout", "dropout_1") are TF 1.14's form: RandomUniform on Shape(h),
// scaled by random_uniform's Mul/Add, GreaterEqual with rate = 1 - keep_prob
// (Placeholder_7 via "sub_1"), Cast, and h * (1 / keep_prob) * mask. Seeds
// are (0, 0): nondeterministic, so the checks are TF's semantics, not TF's
// numbers (tests/tf_graphs/dropout_test.py compares seeded graphs exactly).

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
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

}  // namespace
}  // namespace eager
