// DepthwiseConv2dNative: every stride / padding / dilation / multiplier
// against a naive loop, and its two backprop ops as the adjoints of the
// forward map (<y, g> = <x, dx> = <f, df>). Finite differences of the
// gradient: op_gradient_test.cc; TF's values: tests/tf_graphs/op_attrs_test.py.

#include "ops/depthwise_conv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ops/conv_ops.h"
#include "ops/random_generator.h"

namespace eager {
namespace {

std::vector<double> NaiveDepthwise(const Tensor& x, const Tensor& f, const Conv2DOptions& o,
                                   Shape* shape) {
  const std::vector<double> xv = x.ToVector<double>(), fv = f.ToVector<double>();
  const int64_t N = x.shape().dim(0), H = x.shape().dim(1), W = x.shape().dim(2),
                C = x.shape().dim(3);
  const int64_t KH = f.shape().dim(0), KW = f.shape().dim(1), M = f.shape().dim(3);
  auto out_pad = [&](int64_t in, int64_t k, int64_t s, int64_t d, int64_t* before) {
    const int64_t eff = (k - 1) * d + 1;
    if (o.padding == "VALID") {
      *before = 0;
      return (in - eff) / s + 1;
    }
    const int64_t out = (in + s - 1) / s;
    *before = std::max<int64_t>((out - 1) * s + eff - in, 0) / 2;
    return out;
  };
  int64_t ph, pw;
  const int64_t OH = out_pad(H, KH, o.strides[1], o.dilations[1], &ph);
  const int64_t OW = out_pad(W, KW, o.strides[2], o.dilations[2], &pw);
  *shape = Shape{N, OH, OW, C * M};
  std::vector<double> y;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < OH; ++i)
      for (int64_t j = 0; j < OW; ++j)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t m = 0; m < M; ++m) {
            double acc = 0;
            for (int64_t a = 0; a < KH; ++a)
              for (int64_t b = 0; b < KW; ++b) {
                const int64_t r = i * o.strides[1] - ph + a * o.dilations[1];
                const int64_t s = j * o.strides[2] - pw + b * o.dilations[2];
                if (r < 0 || r >= H || s < 0 || s >= W) continue;
                acc += xv[static_cast<size_t>(((n * H + r) * W + s) * C + c)] *
                       fv[static_cast<size_t>(((a * KW + b) * C + c) * M + m)];
              }
            y.push_back(acc);
          }
  return y;
}

double Dot(const Tensor& a, const Tensor& b) {
  const std::vector<double> av = a.ToVector<double>(), bv = b.ToVector<double>();
  double sum = 0;
  for (size_t i = 0; i < av.size(); ++i) sum += av[i] * bv[i];
  return sum;
}

TEST(DepthwiseConv2dNativeTest, MatchesNaiveLoopAndBackpropsAreAdjoints) {
  int cases = 0;
  for (const char* padding : {"VALID", "SAME"}) {
    for (int64_t s : {1, 2}) {
      for (int64_t d : {1, 2}) {
        if (s > 1 && d > 1) continue;
        for (int64_t m : {1, 3}) {
          SCOPED_TRACE(testing::Message() << padding << " s" << s << " d" << d << " m" << m);
          const uint64_t seed = 700 + static_cast<uint64_t>(cases) * 3;
          const Tensor x = RandomUniform(Shape{2, 7, 6, 3}, seed, -1, 1, DType::kFloat64);
          const Tensor f = RandomUniform(Shape{3, 2, 3, m}, seed + 1, -1, 1, DType::kFloat64);
          const Conv2DOptions o{
              .strides = {1, s, s, 1}, .padding = padding, .dilations = {1, d, d, 1}};
          Shape shape;
          const std::vector<double> want = NaiveDepthwise(x, f, o, &shape);
          const Tensor y = DepthwiseConv2dNative(x, f, o);
          ASSERT_EQ(y.shape(), shape);
          const std::vector<double> got = y.ToVector<double>();
          for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-12) << i;
          const Tensor g = RandomUniform(shape, seed + 2, -1, 1, DType::kFloat64);
          const Tensor dx =
              DepthwiseConv2dNativeBackpropInput(Tensor::Vector<int32_t>({2, 7, 6, 3}), f, g, o);
          const Tensor df = DepthwiseConv2dNativeBackpropFilter(
              x, Tensor::Vector<int32_t>({3, 2, 3, static_cast<int32_t>(m)}), g, o);
          const double yg = Dot(y, g);
          EXPECT_NEAR(Dot(x, dx), yg, 1e-10);
          EXPECT_NEAR(Dot(f, df), yg, 1e-10);
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 12);
}

TEST(DepthwiseConv2dNativeTest, FilterChannelsMustMatchTheInput) {
  try {
    DepthwiseConv2dNative(Tensor::Zeros(Shape{1, 4, 4, 3}, DType::kFloat32),
                          Tensor::Zeros(Shape{2, 2, 2, 1}, DType::kFloat32));
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("in_channels = the input's 3, got filter [2,2,2,1]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace eager

namespace eager {
namespace {

// The sizes inputs of both convolutions' backprops are read by one function
// (ops/internal/conv_backprop_sizes.h): the same checks and messages.
TEST(ConvBackpropSizes, BothConvolutionsNameTheBadSizes) {
  const Tensor filter = Tensor::Zeros(Shape{2, 2, 3, 1}, DType::kFloat32);
  const Tensor input = Tensor::Zeros(Shape{1, 4, 4, 3}, DType::kFloat32);
  const Tensor grad = Tensor::Zeros(Shape{1, 3, 3, 3}, DType::kFloat32);
  auto expect = [](auto&& call, const std::string& needle) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one containing: " << needle;
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const Tensor negative = Tensor::FromVector<int32_t>({1, -4, 4, 3}, Shape{4});
  const Tensor three = Tensor::FromVector<int32_t>({1, 4, 4}, Shape{3});
  expect([&] { DepthwiseConv2dNativeBackpropInput(negative, filter, grad); },
         "input_sizes has a negative size: [1,-4,4,3]");
  expect([&] { Conv2DBackpropInput(negative, filter, grad); },
         "input_sizes has a negative size: [1,-4,4,3]");
  expect([&] { DepthwiseConv2dNativeBackpropFilter(input, three, grad); },
         "filter_sizes must be a vector of 4 sizes, got shape [3]");
  expect([&] { Conv2DBackpropFilter(input, three, grad); },
         "filter_sizes must be a vector of 4 sizes, got shape [3]");
  // int64 sizes work for both, as int32 ones.
  const Tensor sizes64 = Tensor::FromVector<int64_t>({1, 4, 4, 3}, Shape{4});
  const Tensor sizes32 = Tensor::FromVector<int32_t>({1, 4, 4, 3}, Shape{4});
  EXPECT_EQ(DepthwiseConv2dNativeBackpropInput(sizes64, filter, grad).shape(), (Shape{1, 4, 4, 3}));
  EXPECT_EQ(DepthwiseConv2dNativeBackpropInput(sizes32, filter, grad).shape(), (Shape{1, 4, 4, 3}));
  // A gradient of the wrong shape names both shapes.
  expect(
      [&] {
        DepthwiseConv2dNativeBackpropInput(sizes32, filter,
                                           Tensor::Zeros(Shape{1, 2, 2, 3}, DType::kFloat32));
      },
      "out_backprop must have the forward output's shape [1,3,3,3], got [1,2,2,3]");
}

}  // namespace
}  // namespace eager
