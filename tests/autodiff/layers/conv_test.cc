// Conv2D and Conv1D layers: Keras names and edges, lazy build, glorot
// bounds, the forward pass against a naive loop written here, gradients
// against central differences, and errors naming the layer and shape.

#include "autodiff/layers/conv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autodiff/gradient_tape.h"
#include "ops/binary_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "ops/unary_ops.h"
#include "runtime/names.h"

namespace eager::layers {
namespace {

class ConvLayersTest : public ::testing::Test {
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

// The naive definition: out[n, oh, ow, o] = bias[o] + sum over (i, j, c) of
// x[n, oh*s - pad + i*d, ow*s - pad + j*d, c] * k[i, j, c, o], out of range = 0.
// TF's SAME: out = ceil(in / s), total pad = max((out-1)*s + (k-1)*d + 1 - in, 0),
// the smaller half before.
std::vector<double> NaiveConv(const std::vector<double>& x, const std::vector<int64_t>& xs,
                              const std::vector<double>& k, const std::vector<int64_t>& ks,
                              const std::vector<double>& bias, std::array<int64_t, 2> s,
                              std::array<int64_t, 2> d, bool same,
                              std::vector<int64_t>* out_shape) {
  const int64_t n = xs[0], h = xs[1], w = xs[2], c = xs[3];
  const int64_t kh = ks[0], kw = ks[1], o = ks[3];
  auto dim = [&](int64_t in, int64_t kk, int64_t st, int64_t di, int64_t* pad) {
    const int64_t eff = (kk - 1) * di + 1;
    if (!same) {
      *pad = 0;
      return (in - eff) / st + 1;
    }
    const int64_t out = (in + st - 1) / st;
    *pad = std::max<int64_t>((out - 1) * st + eff - in, 0) / 2;
    return out;
  };
  int64_t ph, pw;
  const int64_t oh = dim(h, kh, s[0], d[0], &ph), ow = dim(w, kw, s[1], d[1], &pw);
  *out_shape = {n, oh, ow, o};
  std::vector<double> y(static_cast<size_t>(n * oh * ow * o));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t r = 0; r < oh; ++r)
      for (int64_t q = 0; q < ow; ++q)
        for (int64_t f = 0; f < o; ++f) {
          double acc = bias.empty() ? 0.0 : bias[f];
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j) {
              const int64_t ih = r * s[0] - ph + i * d[0], iw = q * s[1] - pw + j * d[1];
              if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
              for (int64_t ch = 0; ch < c; ++ch)
                acc += x[((b * h + ih) * w + iw) * c + ch] * k[((i * kw + j) * c + ch) * o + f];
            }
          y[((b * oh + r) * ow + q) * o + f] = acc;
        }
  return y;
}

struct Case {
  std::array<int64_t, 2> kernel, strides, dilation;
  std::string padding;
  int64_t h, w;
};

TEST_F(ConvLayersTest, Conv2DMatchesNaiveLoopOverStridesPaddingDilation) {
  const Case cases[] = {
      {{3, 3}, {1, 1}, {1, 1}, "valid", 6, 7}, {{3, 2}, {2, 2}, {1, 1}, "same", 7, 6},
      {{2, 3}, {1, 2}, {1, 1}, "SAME", 5, 8},  {{3, 3}, {1, 1}, {2, 2}, "valid", 8, 9},
      {{3, 2}, {1, 1}, {2, 3}, "same", 7, 7},  {{1, 1}, {3, 3}, {1, 1}, "valid", 7, 5},
  };
  for (DType dtype : {DType::kFloat64, DType::kFloat32}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(StrCat(dtype, " kernel ", c.kernel[0], "x", c.kernel[1], " strides ",
                          c.strides[0], ",", c.strides[1], " dilation ", c.dilation[0], ",",
                          c.dilation[1], " ", c.padding));
      Conv2D conv(4, c.kernel,
                  {.strides = c.strides, .padding = c.padding, .dilation_rate = c.dilation});
      const Tensor x = RandomNormal(Shape{2, c.h, c.w, 3}, 11, 0, 1, dtype);
      conv.Build(3, dtype);
      conv.bias()->Assign(RandomNormal(Shape{4}, 12, 0, 1, dtype));
      const Tensor y = conv(x);
      std::vector<int64_t> shape;
      const std::vector<double> want =
          NaiveConv(Doubles(x), x.shape().ToVector(), Doubles(conv.kernel().value()),
                    conv.kernel().shape().ToVector(), Doubles(conv.bias()->value()), c.strides,
                    c.dilation, c.padding != "valid", &shape);
      ASSERT_EQ(y.shape(), Shape(shape));
      const std::vector<double> got = Doubles(y);
      const double tol = dtype == DType::kFloat64 ? 1e-12 : 1e-5;
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << "at " << i;
    }
  }
}

TEST_F(ConvLayersTest, ActivationAndNoBias) {
  Conv2D relu(2, {2, 2}, {.activation = Relu, .seed = 3});
  Conv2D tanh_no_bias(2, {2, 2}, {.activation = Tanh, .use_bias = false, .seed = 3});
  const Tensor x = RandomNormal(Shape{1, 4, 4, 2}, 5, 0, 1, DType::kFloat64);
  const std::vector<double> a = Doubles(relu(x)), b = Doubles(tanh_no_bias(x));
  EXPECT_EQ(tanh_no_bias.bias(), nullptr);
  ASSERT_EQ(tanh_no_bias.Children().size(), 1u);
  std::vector<int64_t> shape;
  const std::vector<double> lin =
      NaiveConv(Doubles(x), {1, 4, 4, 2}, Doubles(relu.kernel().value()), {2, 2, 2, 2}, {}, {1, 1},
                {1, 1}, false, &shape);
  bool some_negative = false;
  for (size_t i = 0; i < lin.size(); ++i) {
    EXPECT_NEAR(a[i], std::max(lin[i], 0.0), 1e-12);
    EXPECT_NEAR(b[i], std::tanh(lin[i]), 1e-12);  // same seed: same kernel
    some_negative |= lin[i] < 0;
  }
  EXPECT_TRUE(some_negative);
}

TEST_F(ConvLayersTest, NamesEdgesShapesAndLazyBuildAsKeras) {
  Conv2D a(8, {3, 3}), b(4, {1, 1}), named(2, {2, 2}, {.name = "stem"});
  Conv1D c(5, 3);
  EXPECT_EQ(a.name(), "conv2d");
  EXPECT_EQ(b.name(), "conv2d_1");
  EXPECT_EQ(named.name(), "stem");
  EXPECT_EQ(c.name(), "conv1d");
  EXPECT_FALSE(a.built());
  EXPECT_TRUE(a.Children().empty());
  EXPECT_THROW(a.kernel(), FailedPreconditionError);
  a(Tensor::Zeros(Shape{1, 5, 5, 3}, DType::kFloat32));
  c(Tensor::Zeros(Shape{2, 6, 4}, DType::kFloat64));
  EXPECT_EQ(a.kernel().shape(), (Shape{3, 3, 3, 8}));
  EXPECT_EQ(a.bias()->shape(), (Shape{8}));
  EXPECT_EQ(a.kernel().name(), "conv2d/kernel:0");
  EXPECT_EQ(a.bias()->name(), "conv2d/bias:0");
  EXPECT_EQ(c.kernel().shape(), (Shape{3, 4, 5}));
  EXPECT_EQ(c.kernel().dtype(), DType::kFloat64);
  EXPECT_EQ(c.kernel().name(), "conv1d/kernel:0");
  EXPECT_EQ(a.bias()->value().ToVector<float>(), std::vector<float>(8, 0.0f));
  std::vector<Trackable::Child> edges = a.Children();
  ASSERT_EQ(edges.size(), 2u);
  EXPECT_EQ(edges[0].name, "kernel");
  EXPECT_EQ(edges[1].name, "bias");
  a.UseKerasLayout(KerasLayout::kKeras3);  // Keras 3's BaseConv: `_kernel`
  edges = a.Children();
  EXPECT_EQ(edges[0].name, "_kernel");
  EXPECT_EQ(edges[1].name, "bias");
  EXPECT_THROW(a.Build(3), FailedPreconditionError);
}

TEST_F(ConvLayersTest, KernelIsGlorotUniformAndSeeded) {
  Conv2D a(16, {3, 3}, {.seed = 9}), b(16, {3, 3}, {.seed = 9}), c(16, {3, 3});
  a.Build(8);
  b.Build(8);
  c.Build(8);
  const double limit = std::sqrt(6.0 / (9 * 8 + 9 * 16));
  const std::vector<float> k = a.kernel().value().ToVector<float>();
  double sum_sq = 0;
  for (float v : k) {
    ASSERT_GE(v, -limit);
    ASSERT_LT(v, limit);
    sum_sq += double(v) * v;
  }
  EXPECT_NEAR(sum_sq / k.size(), limit * limit / 3.0, 0.05 * limit * limit);
  EXPECT_EQ(k, b.kernel().value().ToVector<float>());
  EXPECT_NE(k, c.kernel().value().ToVector<float>());
  const std::vector<float> first = c.kernel().value().ToVector<float>();
  ResetDefaultNames();
  Conv2D d0(16, {3, 3}), d1(16, {3, 3}), d2(16, {3, 3});  // conv2d_2 again: c's name
  d2.Build(8);
  EXPECT_EQ(d2.kernel().value().ToVector<float>(), first);
}

// sum(layer(x) * w) differentiated by the tape against central differences,
// for the input and the kernel (float64). REQUIRES: the layer is built.
void CheckLayerGradients(Layer& layer, const Tensor& x0, Variable& kernel) {
  const Tensor y0 = layer(x0);
  const Tensor w = RandomNormal(y0.shape(), 21, 0, 1, DType::kFloat64);
  auto loss = [&](const Tensor& x) { return Doubles(ReduceSum(Mul(layer(x), w)))[0]; };
  GradientTape tape;
  tape.Watch(x0);
  const std::optional<Tensor> g = tape.Gradient(ReduceSum(Mul(layer(x0), w)), {x0})[0];
  ASSERT_TRUE(g.has_value());
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
    ASSERT_NEAR(dx[i], (up - down) / (2 * eps), 1e-6) << "d/dx at " << i;
  }
  GradientTape kernel_tape;
  const std::optional<Tensor> gk = kernel_tape.Gradient(ReduceSum(Mul(layer(x0), w)), {&kernel})[0];
  ASSERT_TRUE(gk.has_value());
  const std::vector<double> dk = Doubles(*gk);
  std::vector<double> k = Doubles(kernel.value());
  const Tensor saved = kernel.value();
  for (size_t i = 0; i < k.size(); ++i) {
    const double keep = k[i];
    k[i] = keep + eps;
    kernel.Assign(Tensor::FromVector<double>(k, saved.shape()));
    const double up = loss(x0);
    k[i] = keep - eps;
    kernel.Assign(Tensor::FromVector<double>(k, saved.shape()));
    const double down = loss(x0);
    k[i] = keep;
    ASSERT_NEAR(dk[i], (up - down) / (2 * eps), 1e-6) << "d/dkernel at " << i;
  }
  kernel.Assign(saved);
}

TEST_F(ConvLayersTest, Conv2DGradientsMatchFiniteDifferences) {
  Conv2D same(3, {3, 2}, {.strides = {2, 1}, .padding = "same", .activation = Tanh});
  same.Build(2, DType::kFloat64);
  same.bias()->Assign(RandomNormal(Shape{3}, 4, 0, 1, DType::kFloat64));
  CheckLayerGradients(same, RandomNormal(Shape{2, 5, 4, 2}, 1, 0, 1, DType::kFloat64),
                      same.kernel());
  Conv2D dilated(2, {2, 2}, {.padding = "valid", .dilation_rate = {2, 1}});  // fused, with bias
  dilated.Build(3, DType::kFloat64);
  CheckLayerGradients(dilated, RandomNormal(Shape{1, 5, 4, 3}, 2, 0, 1, DType::kFloat64),
                      dilated.kernel());
}

// Conv1D against Conv2D's naive loop on [batch, 1, steps, channels].
TEST_F(ConvLayersTest, Conv1DMatchesNaiveLoopIncludingCausal) {
  for (const std::string padding : {"valid", "same", "causal"}) {
    SCOPED_TRACE(padding);
    Conv1D conv(3, 3, {.padding = padding, .dilation_rate = 2});
    conv.Build(2, DType::kFloat64);
    conv.bias()->Assign(RandomNormal(Shape{3}, 4, 0, 1, DType::kFloat64));
    const Tensor x = RandomNormal(Shape{2, 9, 2}, 6, 0, 1, DType::kFloat64);
    const Tensor y = conv(x);
    std::vector<double> xs = Doubles(x);
    int64_t steps = 9;
    if (padding == "causal") {  // 2 * (3 - 1) zeros before each sequence
      std::vector<double> padded;
      for (int b = 0; b < 2; ++b) {
        padded.insert(padded.end(), 4 * 2, 0.0);
        padded.insert(padded.end(), xs.begin() + b * 18, xs.begin() + (b + 1) * 18);
      }
      xs = padded;
      steps = 13;
    }
    std::vector<int64_t> shape;
    const std::vector<double> want =
        NaiveConv(xs, {2, 1, steps, 2}, Doubles(conv.kernel().value()), {1, 3, 2, 3},
                  Doubles(conv.bias()->value()), {1, 1}, {1, 2}, padding == "same", &shape);
    ASSERT_EQ(y.shape(), (Shape{2, shape[2], 3}));
    EXPECT_EQ(y.shape().dim(1), padding == "valid" ? 5 : 9);
    const std::vector<double> got = Doubles(y);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-12) << i;
    if (padding == "causal") {
      CheckLayerGradients(conv, x, conv.kernel());
    }
  }
}

std::string MessageOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no exception";
}

TEST_F(ConvLayersTest, ErrorsNameTheLayerAndShape) {
  Conv2D conv(4, {3, 3});
  EXPECT_EQ(MessageOf([&] {
              conv(Tensor::Zeros(Shape{5, 5, 3}, DType::kFloat32));
            }),
            "Conv2D 'conv2d': expected an input of rank 4 [batch, height, width, channels], got "
            "shape [5,5,3]");
  EXPECT_FALSE(conv.built());
  conv(Tensor::Zeros(Shape{1, 5, 5, 3}, DType::kFloat32));
  const std::string wrong_channels = MessageOf([&] {
    conv(Tensor::Zeros(Shape{1, 5, 5, 2}, DType::kFloat32));
  });
  EXPECT_NE(wrong_channels.find("Conv2D 'conv2d': built for float32 inputs with 3 channels"),
            std::string::npos)
      << wrong_channels;
  const std::string too_small = MessageOf([&] {
    conv(Tensor::Zeros(Shape{1, 2, 5, 3}, DType::kFloat32));
  });
  EXPECT_NE(too_small.find("Conv2D 'conv2d' on input of shape [1,2,5,3]"), std::string::npos)
      << too_small;
  Conv1D c1(2, 2);
  const std::string c1_rank = MessageOf([&] {
    c1(Tensor::Zeros(Shape{1, 5, 5, 3}, DType::kFloat32));
  });
  EXPECT_NE(c1_rank.find("Conv1D 'conv1d': expected an input of rank 3"), std::string::npos)
      << c1_rank;
  EXPECT_THROW(Conv2D(0, {3, 3}), InvalidArgumentError);
  EXPECT_THROW(Conv2D(1, {3, 3}, {.padding = "full"}), InvalidArgumentError);
  EXPECT_THROW(Conv2D(1, {3, 3}, {.strides = {2, 2}, .dilation_rate = {2, 2}}),
               InvalidArgumentError);
  EXPECT_THROW(Conv2D(1, {0, 3}), InvalidArgumentError);
}

// DepthwiseConv2D as the naive loop on each channel: Conv2D's loop with a
// one-channel input and kernel [kh, kw, 1, m], channel by channel.
TEST_F(ConvLayersTest, DepthwiseConv2DMatchesPerChannelNaiveLoop) {
  DepthwiseConv2D dw({3, 2}, {.strides = {2, 1}, .padding = "same", .depth_multiplier = 2});
  EXPECT_EQ(dw.name(), "depthwise_conv2d");
  dw.Build(3, DType::kFloat64);
  dw.bias()->Assign(RandomNormal(Shape{6}, 4, 0, 1, DType::kFloat64));
  const Tensor x = RandomNormal(Shape{2, 7, 5, 3}, 13, 0, 1, DType::kFloat64);
  const Tensor y = dw(x);
  const std::vector<double> xv = Doubles(x), kv = Doubles(dw.depthwise_kernel().value()),
                            bv = Doubles(dw.bias()->value()), got = Doubles(y);
  for (int64_t c = 0; c < 3; ++c) {
    std::vector<double> xc, kc;
    for (size_t i = static_cast<size_t>(c); i < xv.size(); i += 3) xc.push_back(xv[i]);
    for (size_t tap = 0; tap < 6; ++tap) {
      for (int64_t j = 0; j < 2; ++j) kc.push_back(kv[tap * 6 + static_cast<size_t>(c * 2 + j)]);
    }
    std::vector<int64_t> shape;
    const std::vector<double> want =
        NaiveConv(xc, {2, 7, 5, 1}, kc, {3, 2, 1, 2}, {bv[c * 2], bv[c * 2 + 1]}, {2, 1}, {1, 1},
                  true, &shape);
    ASSERT_EQ(y.shape(), (Shape{shape[0], shape[1], shape[2], 6}));
    for (size_t p = 0; p < want.size() / 2; ++p) {
      for (size_t j = 0; j < 2; ++j) {
        ASSERT_NEAR(got[p * 6 + static_cast<size_t>(c) * 2 + j], want[p * 2 + j], 1e-12);
      }
    }
  }
  DepthwiseConv2D dilated({2, 2}, {.dilation_rate = {2, 2}, .activation = Tanh});
  dilated.Build(2, DType::kFloat64);
  CheckLayerGradients(dilated, RandomNormal(Shape{1, 5, 6, 2}, 14, 0, 1, DType::kFloat64),
                      dilated.depthwise_kernel());
  CheckLayerGradients(dw, x, dw.depthwise_kernel());
}

TEST_F(ConvLayersTest, DepthwiseConv2DNamesEdgesAndErrors) {
  DepthwiseConv2D a({3, 3}, {.depth_multiplier = 4}), b({1, 1});
  EXPECT_EQ(b.name(), "depthwise_conv2d_1");
  EXPECT_THROW(a.depthwise_kernel(), FailedPreconditionError);
  a(Tensor::Zeros(Shape{1, 5, 5, 2}, DType::kFloat32));
  EXPECT_EQ(a.depthwise_kernel().shape(), (Shape{3, 3, 2, 4}));
  EXPECT_EQ(a.depthwise_kernel().name(), "depthwise_conv2d/depthwise_kernel:0");
  EXPECT_EQ(a.bias()->shape(), (Shape{8}));
  const double limit = std::sqrt(6.0 / (9 * 2 + 9 * 4));
  for (float v : a.depthwise_kernel().value().ToVector<float>()) {
    ASSERT_GE(v, -limit);
    ASSERT_LT(v, limit);
  }
  std::vector<Trackable::Child> edges = a.Children();
  ASSERT_EQ(edges.size(), 2u);
  EXPECT_EQ(edges[0].name, "depthwise_kernel");  // tf_keras
  EXPECT_EQ(edges[1].name, "bias");
  a.UseKerasLayout(KerasLayout::kKeras3);  // Keras 3: `kernel`
  EXPECT_EQ(a.Children()[0].name, "kernel");
  EXPECT_EQ(MessageOf([&] {
              a(Tensor::Zeros(Shape{5, 5, 2}, DType::kFloat32));
            }),
            "DepthwiseConv2D 'depthwise_conv2d': expected an input of rank 4 [batch, height, "
            "width, channels], got shape [5,5,2]");
  const std::string channels = MessageOf([&] {
    a(Tensor::Zeros(Shape{1, 5, 5, 3}, DType::kFloat32));
  });
  EXPECT_NE(channels.find("built for float32 inputs with 2 channels"), std::string::npos)
      << channels;
  EXPECT_THROW(DepthwiseConv2D({2, 2}, {.depth_multiplier = 0}), InvalidArgumentError);
}

// The naive depthwise convolution: each channel c through NaiveConv with
// its own [kh, kw, 1, m] kernel, output channel c * m + j.
std::vector<double> NaiveDepthwise(const std::vector<double>& x, std::array<int64_t, 4> xs,
                                   const std::vector<double>& k, std::array<int64_t, 4> ks,
                                   std::array<int64_t, 2> s, std::array<int64_t, 2> d, bool same,
                                   std::vector<int64_t>* shape) {
  const int64_t c_in = xs[3], m = ks[3], taps = ks[0] * ks[1];
  std::vector<double> y;
  for (int64_t c = 0; c < c_in; ++c) {
    std::vector<double> xc, kc;
    for (size_t i = static_cast<size_t>(c); i < x.size(); i += static_cast<size_t>(c_in)) {
      xc.push_back(x[i]);
    }
    for (int64_t tap = 0; tap < taps; ++tap) {
      for (int64_t j = 0; j < m; ++j)
        kc.push_back(k[static_cast<size_t>((tap * c_in + c) * m + j)]);
    }
    const std::vector<double> yc =
        NaiveConv(xc, {xs[0], xs[1], xs[2], 1}, kc, {ks[0], ks[1], 1, m}, {}, s, d, same, shape);
    if (y.empty()) y.resize(yc.size() * static_cast<size_t>(c_in));
    for (size_t p = 0; p < yc.size() / static_cast<size_t>(m); ++p) {
      for (int64_t j = 0; j < m; ++j) {
        y[p * static_cast<size_t>(c_in * m) + static_cast<size_t>(c * m + j)] =
            yc[p * static_cast<size_t>(m) + static_cast<size_t>(j)];
      }
    }
  }
  (*shape)[3] = c_in * m;
  return y;
}

// SeparableConv2D as the naive depthwise loop, then a naive 1x1 convolution.
TEST_F(ConvLayersTest, SeparableConv2DIsDepthwiseThenPointwise) {
  SeparableConv2D sep(4, {3, 2}, {.strides = {2, 1}, .padding = "same", .depth_multiplier = 2});
  EXPECT_EQ(sep.name(), "separable_conv2d");
  sep.Build(3, DType::kFloat64);
  EXPECT_EQ(sep.depthwise_kernel().shape(), (Shape{3, 2, 3, 2}));
  EXPECT_EQ(sep.pointwise_kernel().shape(), (Shape{1, 1, 6, 4}));
  EXPECT_EQ(sep.pointwise_kernel().name(), "separable_conv2d/pointwise_kernel:0");
  std::vector<Trackable::Child> edges = sep.Children();
  ASSERT_EQ(edges.size(), 3u);
  EXPECT_EQ(edges[0].name, "depthwise_kernel");
  EXPECT_EQ(edges[1].name, "pointwise_kernel");
  EXPECT_EQ(edges[2].name, "bias");
  sep.bias()->Assign(RandomNormal(Shape{4}, 4, 0, 1, DType::kFloat64));
  const Tensor x = RandomNormal(Shape{2, 7, 5, 3}, 15, 0, 1, DType::kFloat64);
  std::vector<int64_t> shape;
  const std::vector<double> mid =
      NaiveDepthwise(Doubles(x), {2, 7, 5, 3}, Doubles(sep.depthwise_kernel().value()),
                     {3, 2, 3, 2}, {2, 1}, {1, 1}, true, &shape);
  const std::vector<double> want =
      NaiveConv(mid, shape, Doubles(sep.pointwise_kernel().value()), {1, 1, 6, 4},
                Doubles(sep.bias()->value()), {1, 1}, {1, 1}, false, &shape);
  const Tensor y = sep(x);
  ASSERT_EQ(y.shape(), Shape(shape));
  const std::vector<double> got = Doubles(y);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-12) << i;
  CheckLayerGradients(sep, x, sep.depthwise_kernel());
  CheckLayerGradients(sep, x, sep.pointwise_kernel());
  SeparableConv2D tanh(2, {2, 2}, {.dilation_rate = {2, 2}, .activation = Tanh});
  tanh.Build(2, DType::kFloat64);
  CheckLayerGradients(tanh, RandomNormal(Shape{1, 5, 5, 2}, 16, 0, 1, DType::kFloat64),
                      tanh.depthwise_kernel());
  EXPECT_EQ(MessageOf([&] {
              tanh(Tensor::Zeros(Shape{5, 5, 2}, DType::kFloat64));
            }),
            "SeparableConv2D 'separable_conv2d_1': expected an input of rank 4 [batch, height, "
            "width, channels], got shape [5,5,2]");
}

// Conv2DTranspose is the adjoint of the naive convolution with its kernel:
// <ConvT(x), g> = <x, NaiveConv(g)>, with Keras's output sizes.
TEST_F(ConvLayersTest, Conv2DTransposeIsTheAdjointOfTheNaiveConvolution) {
  struct Case {
    std::array<int64_t, 2> kernel, strides, dilation;
    std::string padding;
    std::array<int64_t, 2> out;  // from a [2, 4, 3, 3] input
  };
  const Case cases[] = {{{3, 3}, {2, 2}, {1, 1}, "same", {8, 6}},
                        {{3, 2}, {2, 1}, {1, 1}, "valid", {9, 4}},
                        {{2, 2}, {1, 1}, {2, 1}, "valid", {6, 4}},
                        {{1, 3}, {3, 2}, {1, 1}, "valid", {12, 7}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(StrCat(c.padding, " strides ", c.strides[0], ",", c.strides[1]));
    Conv2DTranspose t(5, c.kernel,
                      {.strides = c.strides, .padding = c.padding, .dilation_rate = c.dilation});
    const Tensor x = RandomNormal(Shape{2, 4, 3, 3}, 17, 0, 1, DType::kFloat64);
    const Tensor y = t(x);
    ASSERT_EQ(y.shape(), (Shape{2, c.out[0], c.out[1], 5}));
    EXPECT_EQ(t.kernel().shape(), (Shape{c.kernel[0], c.kernel[1], 5, 3}));
    const Tensor g = RandomNormal(y.shape(), 18, 0, 1, DType::kFloat64);
    std::vector<int64_t> shape;
    const std::vector<double> back = NaiveConv(
        Doubles(g), g.shape().ToVector(), Doubles(t.kernel().value()),
        t.kernel().shape().ToVector(), {}, c.strides, c.dilation, c.padding == "same", &shape);
    ASSERT_EQ(shape, x.shape().ToVector());
    double lhs = 0, rhs = 0;
    const std::vector<double> yv = Doubles(y), gv = Doubles(g), xv = Doubles(x);
    for (size_t i = 0; i < yv.size(); ++i) lhs += yv[i] * gv[i];  // the bias is zero
    for (size_t i = 0; i < xv.size(); ++i) rhs += xv[i] * back[i];
    EXPECT_NEAR(lhs, rhs, 1e-10);
  }
  Conv2DTranspose relu(3, {3, 2}, {.strides = {2, 1}, .padding = "same", .activation = Tanh});
  relu.Build(2, DType::kFloat64);
  relu.bias()->Assign(RandomNormal(Shape{3}, 19, 0, 1, DType::kFloat64));
  EXPECT_EQ(relu.name(), "conv2d_transpose_4");
  EXPECT_EQ(relu.kernel().name(), "conv2d_transpose_4/kernel:0");
  EXPECT_EQ(relu.Children()[0].name, "kernel");
  CheckLayerGradients(relu, RandomNormal(Shape{1, 3, 3, 2}, 20, 0, 1, DType::kFloat64),
                      relu.kernel());
}

}  // namespace
}  // namespace eager::layers
