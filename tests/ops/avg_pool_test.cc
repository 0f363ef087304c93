// AvgPool and AvgPoolGrad: a hand-computed SAME case (padding not counted),
// every ksize / stride / padding against a naive loop, and the gradient as
// AvgPool's adjoint. Finite differences: op_gradient_test.cc.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops/graph_ops.h"
#include "ops/pooling_ops.h"
#include "ops/random_generator.h"
#include "ops/shape_ops.h"
#include "runtime/graph.h"

namespace eager {
namespace {

TEST(AvgPoolTest, SamePaddingIsNotCounted) {
  // 0 1 2 / 3 4 5 / 6 7 8, 2x2 windows, stride 2: the last row and column
  // windows are cut by the padding and average only what they cover.
  std::vector<float> v(9);
  for (int i = 0; i < 9; ++i) v[i] = static_cast<float>(i);
  const Tensor x = Tensor::FromVector<float>(v, Shape{1, 3, 3, 1});
  const Tensor y = AvgPool(x, {.padding = "SAME"});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2, 1}));
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{2.0f, 3.5f, 6.5f, 8.0f}));
  const Tensor valid = AvgPool(x);
  EXPECT_EQ(valid.ToVector<float>(), (std::vector<float>{2.0f}));
  // Each input pixel gets its windows' gradients divided by their counts.
  const Tensor g =
      AvgPoolGrad(Tensor::Vector<int32_t>({1, 3, 3, 1}),
                  Tensor::FromVector<float>({4, 2, 2, 1}, Shape{1, 2, 2, 1}), {.padding = "SAME"});
  EXPECT_EQ(g.ToVector<float>(), (std::vector<float>{1, 1, 1, 1, 1, 1, 1, 1, 1}));
}

// mean over the window's in-range pixels; TF's SAME split (smaller half first).
std::vector<double> NaiveAvgPool(const std::vector<double>& x, const Shape& xs,
                                 const PoolOptions& o, Shape* shape) {
  const int64_t N = xs.dim(0), H = xs.dim(1), W = xs.dim(2), C = xs.dim(3);
  auto out_pad = [&](int64_t in, int64_t k, int64_t s, int64_t* before) {
    if (o.padding == "VALID") {
      *before = 0;
      return (in - k) / s + 1;
    }
    const int64_t out = (in + s - 1) / s;
    *before = std::max<int64_t>((out - 1) * s + k - in, 0) / 2;
    return out;
  };
  int64_t ph, pw;
  const int64_t oh = out_pad(H, o.ksize[1], o.strides[1], &ph);
  const int64_t ow = out_pad(W, o.ksize[2], o.strides[2], &pw);
  *shape = Shape{N, oh, ow, C};
  std::vector<double> y;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t c = 0; c < C; ++c) {
          double sum = 0;
          int count = 0;
          for (int64_t di = 0; di < o.ksize[1]; ++di)
            for (int64_t dj = 0; dj < o.ksize[2]; ++dj) {
              const int64_t r = i * o.strides[1] + di - ph, s = j * o.strides[2] + dj - pw;
              if (r < 0 || r >= H || s < 0 || s >= W) continue;
              sum += x[static_cast<size_t>(((n * H + r) * W + s) * C + c)];
              ++count;
            }
          y.push_back(sum / count);
        }
  return y;
}

TEST(AvgPoolTest, MatchesNaiveLoopsAndGradIsTheAdjoint) {
  int cases = 0;
  for (const char* padding : {"VALID", "SAME"}) {
    for (int64_t k : {1, 2, 3}) {
      for (int64_t s : {1, 2, 3}) {
        SCOPED_TRACE(testing::Message() << padding << " k" << k << " s" << s);
        const Tensor x = RandomUniform(Shape{2, 7, 5, 3}, 400 + cases, -1, 1, DType::kFloat64);
        const PoolOptions o{.ksize = {1, k, k + 1, 1}, .strides = {1, s, s, 1}, .padding = padding};
        Shape shape;
        const std::vector<double> want = NaiveAvgPool(x.ToVector<double>(), x.shape(), o, &shape);
        const Tensor y = AvgPool(x, o);
        ASSERT_EQ(y.shape(), shape);
        const std::vector<double> got = y.ToVector<double>();
        for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-14) << i;
        // <AvgPool(x), g> == <x, AvgPoolGrad(g)> for the linear map.
        const Tensor g = RandomUniform(shape, 500 + cases, -1, 1, DType::kFloat64);
        const Tensor dx = AvgPoolGrad(Tensor::Vector<int32_t>({2, 7, 5, 3}), g, o);
        ASSERT_EQ(dx.shape(), x.shape());
        double lhs = 0, rhs = 0;
        const std::vector<double> gv = g.ToVector<double>(), xv = x.ToVector<double>(),
                                  dxv = dx.ToVector<double>();
        for (size_t i = 0; i < gv.size(); ++i) lhs += got[i] * gv[i];
        for (size_t i = 0; i < xv.size(); ++i) rhs += xv[i] * dxv[i];
        EXPECT_NEAR(lhs, rhs, 1e-12);
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 18);
}

TEST(AvgPoolTest, GradRejectsAShapeThatDoesNotPool) {
  try {
    AvgPoolGrad(Tensor::Vector<int32_t>({1, 4, 4, 2}),
                Tensor::Zeros(Shape{1, 3, 3, 2}, DType::kFloat32));
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("grad must have the pooled shape [1,2,2,2]"),
              std::string::npos)
        << e.what();
  }
}

// In a graph with an unknown batch, AvgPoolGrad(Shape(x), ...) keeps x's
// known dimensions, as TF's shape function does (reading Shape(x)'s partial
// value); without that, the gradient's later broadcasts lose every dimension.
TEST(AvgPoolTest, GradOfAShapeNodeKeepsTheKnownDimensionsInAGraph) {
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 4, 4, 8}), "x");
  const PoolOptions o{.ksize = {1, 2, 2, 1}, .strides = {1, 1, 1, 1}, .padding = "SAME"};
  const Tensor y = AvgPool(x, o);
  EXPECT_EQ(AvgPoolGrad(ShapeOf(x), y, o).shape().ToString(), "[?,4,4,8]");
}

}  // namespace
}  // namespace eager
