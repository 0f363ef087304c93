// Pooling layers: Keras names, the forward pass against naive loops written
// here (max and mean over each window's in-range pixels), input gradients
// against central differences, and errors naming the layer and shape.

#include "autodiff/layers/pooling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "autodiff/gradient_tape.h"
#include "ops/binary_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "runtime/names.h"

namespace eager::layers {
namespace {

class PoolingLayersTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetDefaultNames(); }
};

std::vector<double> Doubles(const Tensor& t) {
  std::vector<double> out;
  if (t.dtype() == DType::kFloat64) {
    for (double v : t.data<double>()) out.push_back(v);
  } else {
    for (float v : t.data<float>()) out.push_back(v);
  }
  return out;
}

// x [n, h, w, c]; TF's window rules, padding left out of both max and mean.
std::vector<double> NaivePool(const std::vector<double>& x, std::array<int64_t, 4> xs,
                              std::array<int64_t, 2> k, std::array<int64_t, 2> s, bool same,
                              bool max, std::vector<int64_t>* shape) {
  auto out_pad = [&](int64_t in, int64_t kk, int64_t st, int64_t* before) {
    if (!same) {
      *before = 0;
      return (in - kk) / st + 1;
    }
    const int64_t out = (in + st - 1) / st;
    *before = std::max<int64_t>((out - 1) * st + kk - in, 0) / 2;
    return out;
  };
  const int64_t N = xs[0], H = xs[1], W = xs[2], C = xs[3];
  int64_t ph, pw;
  const int64_t oh = out_pad(H, k[0], s[0], &ph), ow = out_pad(W, k[1], s[1], &pw);
  *shape = {N, oh, ow, C};
  std::vector<double> y;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t c = 0; c < C; ++c) {
          double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
          int count = 0;
          for (int64_t a = 0; a < k[0]; ++a)
            for (int64_t b = 0; b < k[1]; ++b) {
              const int64_t r = i * s[0] + a - ph, q = j * s[1] + b - pw;
              if (r < 0 || r >= H || q < 0 || q >= W) continue;
              const double v = x[static_cast<size_t>(((n * H + r) * W + q) * C + c)];
              acc = max ? std::max(acc, v) : acc + v;
              ++count;
            }
          y.push_back(max ? acc : acc / count);
        }
  return y;
}

void ExpectNear(const Tensor& got, const std::vector<double>& want, double tol) {
  const std::vector<double> g = Doubles(got);
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], want[i], tol) << "at " << i;
}

TEST_F(PoolingLayersTest, Pooling2DMatchesNaiveLoops) {
  struct Case {
    std::array<int64_t, 2> pool;
    std::optional<std::array<int64_t, 2>> strides;
    std::string padding;
  };
  const Case cases[] = {{{2, 2}, std::nullopt, "valid"},
                        {{3, 2}, std::array<int64_t, 2>{1, 2}, "same"},
                        {{2, 3}, std::array<int64_t, 2>{2, 1}, "SAME"},
                        {{3, 3}, std::nullopt, "valid"}};
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(StrCat(dtype, " pool ", c.pool[0], "x", c.pool[1], " ", c.padding));
      const Tensor x = RandomNormal(Shape{2, 7, 6, 3}, 3, 0, 1, dtype);
      MaxPooling2D max(c.pool, {.strides = c.strides, .padding = c.padding});
      AveragePooling2D avg(c.pool, {.strides = c.strides, .padding = c.padding});
      const std::array<int64_t, 2> s = c.strides ? *c.strides : c.pool;
      std::vector<int64_t> shape;
      const std::vector<double> want_max =
          NaivePool(Doubles(x), {2, 7, 6, 3}, c.pool, s, c.padding != "valid", true, &shape);
      const Tensor y_max = max(x);
      EXPECT_EQ(y_max.shape(), Shape(shape));
      ExpectNear(y_max, want_max, 0);
      const Tensor y_avg = avg(x);
      EXPECT_EQ(y_avg.shape(), Shape(shape));
      ExpectNear(
          y_avg,
          NaivePool(Doubles(x), {2, 7, 6, 3}, c.pool, s, c.padding != "valid", false, &shape),
          dtype == DType::kFloat64 ? 1e-14 : 1e-6);
    }
  }
}

TEST_F(PoolingLayersTest, Pooling1DIsThe2DPoolOnOneRow) {
  const Tensor x = RandomNormal(Shape{2, 9, 3}, 4, 0, 1, DType::kFloat64);
  MaxPooling1D max(3, {.strides = 2, .padding = "same"});
  AveragePooling1D avg(2);
  std::vector<int64_t> shape;
  const Tensor y_max = max(x);
  EXPECT_EQ(y_max.shape(), (Shape{2, 5, 3}));
  ExpectNear(y_max, NaivePool(Doubles(x), {2, 1, 9, 3}, {1, 3}, {1, 2}, true, true, &shape), 0);
  const Tensor y_avg = avg(x);
  EXPECT_EQ(y_avg.shape(), (Shape{2, 4, 3}));
  ExpectNear(y_avg, NaivePool(Doubles(x), {2, 1, 9, 3}, {1, 2}, {1, 2}, false, false, &shape),
             1e-14);
}

TEST_F(PoolingLayersTest, GlobalPoolingsReduceTheSpatialAxes) {
  const Tensor x = RandomNormal(Shape{2, 3, 4, 5}, 5, 0, 1, DType::kFloat64);
  const std::vector<double> xv = Doubles(x);
  std::vector<double> mean(10, 0.0), max(10, -INFINITY);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t p = 0; p < 12; ++p)
      for (int64_t c = 0; c < 5; ++c) {
        const double v = xv[static_cast<size_t>((n * 12 + p) * 5 + c)];
        mean[n * 5 + c] += v / 12;
        max[n * 5 + c] = std::max(max[n * 5 + c], v);
      }
  GlobalAveragePooling2D gap;
  GlobalMaxPooling2D gmp(/*keepdims=*/true);
  const Tensor a = gap(x), m = gmp(x);
  EXPECT_EQ(a.shape(), (Shape{2, 5}));
  EXPECT_EQ(m.shape(), (Shape{2, 1, 1, 5}));
  ExpectNear(a, mean, 1e-14);
  ExpectNear(m, max, 0);
  // 1D: [batch, steps, channels], here the 12 pixels as steps.
  const Tensor x1 = Tensor::FromVector<double>(xv, Shape{2, 12, 5});
  GlobalAveragePooling1D gap1;
  GlobalMaxPooling1D gmp1;
  EXPECT_EQ(gap1(x1).shape(), (Shape{2, 5}));
  ExpectNear(gap1(x1), mean, 1e-14);
  ExpectNear(gmp1(x1), max, 0);
}

TEST_F(PoolingLayersTest, NamesAreKerasAndUniquePerClass) {
  MaxPooling2D a, b;
  AveragePooling2D c;
  GlobalAveragePooling2D d;
  GlobalMaxPooling2D e;
  MaxPooling1D f;
  AveragePooling1D g;
  GlobalAveragePooling1D h;
  GlobalMaxPooling1D i;
  MaxPooling2D named({2, 2}, {.name = "pool"});
  EXPECT_EQ(a.name(), "max_pooling2d");
  EXPECT_EQ(b.name(), "max_pooling2d_1");
  EXPECT_EQ(c.name(), "average_pooling2d");
  EXPECT_EQ(d.name(), "global_average_pooling2d");
  EXPECT_EQ(e.name(), "global_max_pooling2d");
  EXPECT_EQ(f.name(), "max_pooling1d");
  EXPECT_EQ(g.name(), "average_pooling1d");
  EXPECT_EQ(h.name(), "global_average_pooling1d");
  EXPECT_EQ(i.name(), "global_max_pooling1d");
  EXPECT_EQ(named.name(), "pool");
  EXPECT_EQ(a.strides(), (std::array<int64_t, 2>{2, 2}));  // default: the pool size
  a(Tensor::Zeros(Shape{1, 4, 4, 1}, DType::kFloat32));
  EXPECT_TRUE(a.Children().empty());  // nothing to save
  EXPECT_TRUE(a.Variables().empty());
}

// sum(layer(x) * w) through the tape against central differences.
void CheckInputGradient(Layer& layer, const Tensor& x0) {
  const Tensor w = RandomNormal(layer(x0).shape(), 21, 0, 1, DType::kFloat64);
  auto loss = [&](const Tensor& x) { return Doubles(ReduceSum(Mul(layer(x), w)))[0]; };
  GradientTape tape;
  tape.Watch(x0);
  const std::optional<Tensor> g = tape.Gradient(ReduceSum(Mul(layer(x0), w)), {x0})[0];
  ASSERT_TRUE(g.has_value());
  ASSERT_EQ(g->shape(), x0.shape());
  const std::vector<double> dx = Doubles(*g);
  std::vector<double> x = Doubles(x0);
  const double eps = 1e-6;
  for (size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + eps;
    const double up = loss(Tensor::FromVector<double>(x, x0.shape()));
    x[i] = keep - eps;
    const double down = loss(Tensor::FromVector<double>(x, x0.shape()));
    x[i] = keep;
    ASSERT_NEAR(dx[i], (up - down) / (2 * eps), 1e-7) << layer.name() << " d/dx at " << i;
  }
}

TEST_F(PoolingLayersTest, InputGradientsMatchFiniteDifferences) {
  // Normal draws: distinct values, so no max is tied within eps.
  const Tensor x4 = RandomNormal(Shape{2, 5, 4, 2}, 8, 0, 1, DType::kFloat64);
  const Tensor x3 = RandomNormal(Shape{2, 7, 2}, 9, 0, 1, DType::kFloat64);
  MaxPooling2D max2({3, 2}, {.strides = std::array<int64_t, 2>{2, 1}, .padding = "same"});
  AveragePooling2D avg2({3, 2}, {.strides = std::array<int64_t, 2>{2, 1}, .padding = "same"});
  MaxPooling1D max1(3, {.strides = 2});
  AveragePooling1D avg1(2, {.strides = 1, .padding = "same"});
  GlobalAveragePooling2D gap;
  GlobalMaxPooling2D gmp;
  GlobalAveragePooling1D gap1;
  GlobalMaxPooling1D gmp1;
  for (Layer* l : std::vector<Layer*>{&max2, &avg2, &gap, &gmp}) CheckInputGradient(*l, x4);
  for (Layer* l : std::vector<Layer*>{&max1, &avg1, &gap1, &gmp1}) CheckInputGradient(*l, x3);
}

std::string MessageOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no exception";
}

TEST_F(PoolingLayersTest, ErrorsNameTheLayerAndShape) {
  MaxPooling2D pool;
  EXPECT_EQ(MessageOf([&] {
              pool(Tensor::Zeros(Shape{4, 4, 1}, DType::kFloat32));
            }),
            "MaxPooling2D 'max_pooling2d': expected an input of rank 4 [batch, height, width, "
            "channels], got shape [4,4,1]");
  const std::string small = MessageOf([&] {
    pool(Tensor::Zeros(Shape{1, 1, 4, 1}, DType::kFloat32));
  });
  EXPECT_NE(small.find("MaxPooling2D 'max_pooling2d' on input of shape [1,1,4,1] (pool_size "
                       "[2,2], strides [2,2], valid): "),
            std::string::npos)
      << small;
  GlobalAveragePooling1D gap1;
  EXPECT_EQ(MessageOf([&] {
              gap1(Tensor::Zeros(Shape{2, 3, 4, 1}, DType::kFloat32));
            }),
            "GlobalAveragePooling1D 'global_average_pooling1d': expected an input of rank 3 "
            "[batch, steps, channels], got shape [2,3,4,1]");
  EXPECT_THROW(AveragePooling2D({0, 2}), InvalidArgumentError);
  EXPECT_THROW(MaxPooling1D(2, {.padding = "causal"}), InvalidArgumentError);
}

}  // namespace
}  // namespace eager::layers
