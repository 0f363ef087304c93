// Conv2D and MaxPool: hand-computed small cases, and every stride / padding /
// dilation combination against naive loops written straight from TF's
// definition (independent of the im2col + GEMM kernels). Gradients are
// checked by finite differences in op_gradient_test.cc.

#include "ops/conv_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/array_ops.h"
#include "ops/pooling_ops.h"
#include "ops/random_generator.h"
#include "runtime/errors.h"
#include "runtime/threads.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

Tensor Iota(const Shape& shape, double start = 1.0) {
  std::vector<float> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(start + static_cast<double>(i));
  return Tensor::FromVector<float>(v, shape);
}

TEST(Conv2DTest, ValidTwoByTwoOnesSumsEachWindow) {
  const Tensor y =
      Conv2D(Iota(Shape{1, 3, 3, 1}), Tensor::FromVector<float>({1, 1, 1, 1}, Shape{2, 2, 1, 1}));
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2, 1}));
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{12, 16, 24, 28}));
}

// SAME, stride 1, a 2x2 filter: the one padding row/column goes after.
TEST(Conv2DTest, SamePadsAfterWhenThePaddingIsOdd) {
  const Tensor y =
      Conv2D(Iota(Shape{1, 3, 3, 1}), Tensor::FromVector<float>({1, 1, 1, 1}, Shape{2, 2, 1, 1}),
             {.padding = "SAME"});
  EXPECT_EQ(y.shape(), (Shape{1, 3, 3, 1}));
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{12, 16, 9, 24, 28, 15, 15, 17, 9}));
}

// Two input channels, two output channels, stride 2: out[c] = sum over the
// window of x[ch] * w[ch][c].
TEST(Conv2DTest, ChannelsMixThroughTheFilter) {
  // x: 1x2x2x2, channel 0 = 1,2,3,4; channel 1 = 10,20,30,40.
  const Tensor x = Tensor::FromVector<float>({1, 10, 2, 20, 3, 30, 4, 40}, Shape{1, 2, 2, 2});
  // w: 1x1x2x2 = [[1, 0], [0.5, -1]]: out0 = x0 + 0.5 x1, out1 = -x1.
  const Tensor w = Tensor::FromVector<float>({1, 0, 0.5f, -1}, Shape{1, 1, 2, 2});
  const Tensor y = Conv2D(x, w, {.strides = {1, 2, 2, 1}});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 2}));
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{6, -10}));
}

TEST(MaxPoolTest, TwoByTwoStrideTwo) {
  const Tensor y = MaxPool(Iota(Shape{1, 4, 4, 1}, 0.0));
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2, 1}));
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{5, 7, 13, 15}));
}

// SAME on 3x3 with 2x2 windows, stride 2: the last windows hang over the
// bottom/right edge, and the padding never wins (all values are negative).
TEST(MaxPoolTest, SamePaddingIsNeverTheMaximum) {
  const Tensor y = MaxPool(Iota(Shape{1, 3, 3, 1}, -20.0), {.padding = "SAME"});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2, 1}));
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{-16, -15, -13, -12}));
}

TEST(MaxPoolTest, GradientGoesToTheFirstMaximumOfATie) {
  const Tensor x = Tensor::FromVector<float>({3, 3, 3, 3}, Shape{1, 2, 2, 1});
  const Tensor y = MaxPool(x);
  const Tensor g = MaxPoolGrad(x, y, Tensor::FromVector<float>({5}, Shape{1, 1, 1, 1}));
  EXPECT_EQ(g.ToVector<float>(), (std::vector<float>{5, 0, 0, 0}));
}

// The first-maximum rule with NaNs, forward and gradient, on the 2x2
// stride-2 loops: a NaN first pixel stays the maximum (nothing compares
// greater) and takes the gradient, a later NaN never wins; the pixels no
// window covers (VALID leaves the last row and column of a 3x3) get 0.
TEST(MaxPoolTest, TwoByTwoKeepsTheFirstMaximumRuleWithNaNs) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Two channels: the window of channel 0 is [nan, 1; 2, 3], of channel 1
  // [1, nan; 3, 3].
  const Tensor x = Tensor::FromVector<float>({nan, 1, 1, nan, 7, 7,  //
                                              2, 3, 3, 3, 7, 7,      //
                                              7, 7, 7, 7, 7, 7},
                                             Shape{1, 3, 3, 2});
  const Tensor y = MaxPool(x);
  ASSERT_EQ(y.shape(), (Shape{1, 1, 1, 2}));
  EXPECT_TRUE(std::isnan(y.ToVector<float>()[0]));
  EXPECT_EQ(y.ToVector<float>()[1], 3);
  const Tensor g = MaxPoolGrad(x, y, Tensor::FromVector<float>({5, 6}, Shape{1, 1, 1, 2}));
  EXPECT_EQ(g.ToVector<float>(), (std::vector<float>{5, 0, 0, 0, 0, 0,  //
                                                     0, 6, 0, 0, 0, 0,  //
                                                     0, 0, 0, 0, 0, 0}));
}

TEST(MaxPoolTest, OverlappingWindowsAddTheirGradients) {
  // 1x3x1 row 1, 9, 2 pooled with width-2 windows, stride 1: 9 wins both.
  const Tensor x = Tensor::FromVector<float>({1, 9, 2}, Shape{1, 1, 3, 1});
  const PoolOptions o{.ksize = {1, 1, 2, 1}, .strides = {1, 1, 1, 1}};
  const Tensor y = MaxPool(x, o);
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{9, 9}));
  const Tensor g = MaxPoolGrad(x, y, Tensor::FromVector<float>({1, 2}, Shape{1, 1, 2, 1}), o);
  EXPECT_EQ(g.ToVector<float>(), (std::vector<float>{0, 3, 0}));
}

// ---- Naive references, from TF's definitions ----

struct Pads {
  int64_t out, before;
};

Pads OutAndPad(int64_t in, int64_t k, int64_t stride, int64_t dilation, const std::string& pad) {
  const int64_t eff = (k - 1) * dilation + 1;
  if (pad == "VALID") return {(in - eff + stride) / stride, 0};
  const int64_t out = (in + stride - 1) / stride;
  return {out, std::max<int64_t>((out - 1) * stride + eff - in, 0) / 2};
}

std::vector<double> NaiveConv(const Tensor& x, const Tensor& w, const Conv2DOptions& o,
                              Shape* shape) {
  const auto xs = x.shape(), ws = w.shape();
  const auto xv = x.ToVector<double>(), wv = w.ToVector<double>();
  const int64_t N = xs.dim(0), H = xs.dim(1), W = xs.dim(2), C = xs.dim(3);
  const int64_t KH = ws.dim(0), KW = ws.dim(1), OC = ws.dim(3);
  const Pads ph = OutAndPad(H, KH, o.strides[1], o.dilations[1], o.padding);
  const Pads pw = OutAndPad(W, KW, o.strides[2], o.dilations[2], o.padding);
  *shape = Shape{N, ph.out, pw.out, OC};
  std::vector<double> y;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < ph.out; ++i)
      for (int64_t j = 0; j < pw.out; ++j)
        for (int64_t oc = 0; oc < OC; ++oc) {
          double acc = 0;
          for (int64_t di = 0; di < KH; ++di)
            for (int64_t dj = 0; dj < KW; ++dj)
              for (int64_t c = 0; c < C; ++c) {
                const int64_t r = i * o.strides[1] + di * o.dilations[1] - ph.before;
                const int64_t s = j * o.strides[2] + dj * o.dilations[2] - pw.before;
                if (r < 0 || r >= H || s < 0 || s >= W) continue;
                acc += xv[static_cast<size_t>(((n * H + r) * W + s) * C + c)] *
                       wv[static_cast<size_t>(((di * KW + dj) * C + c) * OC + oc)];
              }
          y.push_back(acc);
        }
  return y;
}

std::vector<double> NaiveMaxPool(const Tensor& x, const PoolOptions& o, Shape* shape) {
  const auto xs = x.shape();
  const auto xv = x.ToVector<double>();
  const int64_t N = xs.dim(0), H = xs.dim(1), W = xs.dim(2), C = xs.dim(3);
  const Pads ph = OutAndPad(H, o.ksize[1], o.strides[1], 1, o.padding);
  const Pads pw = OutAndPad(W, o.ksize[2], o.strides[2], 1, o.padding);
  *shape = Shape{N, ph.out, pw.out, C};
  std::vector<double> y;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < ph.out; ++i)
      for (int64_t j = 0; j < pw.out; ++j)
        for (int64_t c = 0; c < C; ++c) {
          double m = -std::numeric_limits<double>::infinity();
          for (int64_t di = 0; di < o.ksize[1]; ++di)
            for (int64_t dj = 0; dj < o.ksize[2]; ++dj) {
              const int64_t r = i * o.strides[1] + di - ph.before;
              const int64_t s = j * o.strides[2] + dj - pw.before;
              if (r < 0 || r >= H || s < 0 || s >= W) continue;
              m = std::max(m, xv[static_cast<size_t>(((n * H + r) * W + s) * C + c)]);
            }
          y.push_back(m);
        }
  return y;
}

void ExpectClose(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  EXPECT_LE(worst, tol);
}

TEST(Conv2DTest, MatchesNaiveLoopsOverStridesPaddingsAndDilations) {
  int cases = 0;
  for (const char* padding : {"VALID", "SAME"}) {
    for (int64_t sh : {1, 2, 3}) {
      for (int64_t sw : {1, 2}) {
        for (int64_t dil : {1, 2}) {
          if (dil > 1 && (sh > 1 || sw > 1)) continue;  // TF rejects the mix
          for (int64_t k : {1, 2, 3}) {
            SCOPED_TRACE(testing::Message()
                         << padding << " s" << sh << "x" << sw << " d" << dil << " k" << k);
            const uint64_t seed = uint64_t{100} + static_cast<uint64_t>(cases);
            const Tensor x = RandomUniform(Shape{2, 7, 9, 3}, seed, -1, 1, DType::kFloat64);
            const Tensor w = RandomUniform(Shape{k, k + 1, 3, 4}, seed + 1, -1, 1, DType::kFloat64);
            const Conv2DOptions o{
                .strides = {1, sh, sw, 1}, .padding = padding, .dilations = {1, dil, dil, 1}};
            Shape shape;
            const std::vector<double> want = NaiveConv(x, w, o, &shape);
            const Tensor y = Conv2D(x, w, o);
            EXPECT_EQ(y.shape(), shape);
            ExpectClose(y.ToVector<double>(), want, 1e-12);
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 42);
}

TEST(Conv2DTest, Float32MatchesTheFloat64Reference) {
  const Tensor x = RandomUniform(Shape{4, 32, 32, 1}, 7, 0, 1, DType::kFloat32);
  const Tensor w = RandomUniform(Shape{5, 5, 1, 6}, 8, -0.3, 0.3, DType::kFloat32);
  Shape shape;
  const std::vector<double> want =
      NaiveConv(Cast(x, DType::kFloat64), Cast(w, DType::kFloat64), {}, &shape);
  const Tensor y = Conv2D(x, w);
  EXPECT_EQ(y.shape(), (Shape{4, 28, 28, 6}));
  std::vector<double> got;
  for (float v : y.ToVector<float>()) got.push_back(v);
  ExpectClose(got, want, 1e-5);
}

TEST(MaxPoolTest, MatchesNaiveLoops) {
  int cases = 0;
  for (const char* padding : {"VALID", "SAME"}) {
    for (int64_t k : {1, 2, 3}) {
      for (int64_t s : {1, 2, 3}) {
        SCOPED_TRACE(testing::Message() << padding << " k" << k << " s" << s);
        const Tensor x =
            RandomUniform(Shape{2, 7, 5, 3}, uint64_t{300} + static_cast<uint64_t>(cases), -1, 1,
                          DType::kFloat64);
        const PoolOptions o{.ksize = {1, k, k + 1, 1}, .strides = {1, s, s, 1}, .padding = padding};
        Shape shape;
        const std::vector<double> want = NaiveMaxPool(x, o, &shape);
        const Tensor y = MaxPool(x, o);
        EXPECT_EQ(y.shape(), shape);
        EXPECT_EQ(y.ToVector<double>(), want);
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 18);
}

// The 2x2 window with stride 2 (MaxPoolKernel's own loop when every window
// is whole: VALID, or SAME on even sizes) on even and odd sizes.
TEST(MaxPoolTest, TwoByTwoStrideTwoMatchesNaiveLoops) {
  int cases = 0;
  for (const char* padding : {"VALID", "SAME"}) {
    for (int64_t h : {6, 7}) {
      for (int64_t w : {4, 5}) {
        SCOPED_TRACE(testing::Message() << padding << " " << h << "x" << w);
        const Tensor x =
            RandomUniform(Shape{2, h, w, 17}, uint64_t{350} + static_cast<uint64_t>(cases), -1, 1,
                          DType::kFloat64);
        const PoolOptions o{.padding = padding};
        Shape shape;
        const std::vector<double> want = NaiveMaxPool(x, o, &shape);
        const Tensor y = MaxPool(x, o);
        EXPECT_EQ(y.shape(), shape);
        EXPECT_EQ(y.ToVector<double>(), want);
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 8);
}

// Both gradients of Conv2D by the same loops as NaiveConv: each product
// x * w that made an output adds grad * w to dx and grad * x to dw.
void NaiveConvGrads(const Tensor& x, const Tensor& w, const Tensor& g, const Conv2DOptions& o,
                    std::vector<double>* dx, std::vector<double>* dw) {
  const auto xs = x.shape(), ws = w.shape();
  const auto xv = x.ToVector<double>(), wv = w.ToVector<double>(), gv = g.ToVector<double>();
  const int64_t N = xs.dim(0), H = xs.dim(1), W = xs.dim(2), C = xs.dim(3);
  const int64_t KH = ws.dim(0), KW = ws.dim(1), OC = ws.dim(3);
  const Pads ph = OutAndPad(H, KH, o.strides[1], o.dilations[1], o.padding);
  const Pads pw = OutAndPad(W, KW, o.strides[2], o.dilations[2], o.padding);
  dx->assign(xv.size(), 0.0);
  dw->assign(wv.size(), 0.0);
  size_t out = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < ph.out; ++i)
      for (int64_t j = 0; j < pw.out; ++j)
        for (int64_t oc = 0; oc < OC; ++oc, ++out)
          for (int64_t di = 0; di < KH; ++di)
            for (int64_t dj = 0; dj < KW; ++dj)
              for (int64_t c = 0; c < C; ++c) {
                const int64_t r = i * o.strides[1] + di * o.dilations[1] - ph.before;
                const int64_t s = j * o.strides[2] + dj * o.dilations[2] - pw.before;
                if (r < 0 || r >= H || s < 0 || s >= W) continue;
                const auto xi = static_cast<size_t>(((n * H + r) * W + s) * C + c);
                const auto wi = static_cast<size_t>(((di * KW + dj) * C + c) * OC + oc);
                (*dx)[xi] += gv[out] * wv[wi];
                (*dw)[wi] += gv[out] * xv[xi];
              }
}

Tensor Sizes(const Shape& shape) {
  std::vector<int32_t> dims;
  for (int64_t d : shape.dims()) dims.push_back(static_cast<int32_t>(d));
  return Tensor::FromVector<int32_t>(dims);
}

std::vector<double> AsDoubles(const Tensor& t) {
  return Cast(t, DType::kFloat64).ToVector<double>();
}

// float32 runs its own kernel (oneDNN when eager is built with it, in batch
// chunks whose last one may be shorter): the op and both gradient ops
// against the float64 loops, over paddings, strides, dilations, odd batches
// and channel counts that oneDNN's vector kernels take (multiples of 16).
TEST(Conv2DTest, Float32AndItsGradientsMatchNaiveLoops) {
  int cases = 0;
  for (const char* padding : {"VALID", "SAME"}) {
    for (int64_t stride : {1, 2}) {
      for (int64_t dil : {1, 2}) {
        if (dil > 1 && stride > 1) continue;
        for (int64_t channels : {1, 3, 16}) {
          SCOPED_TRACE(testing::Message()
                       << padding << " s" << stride << " d" << dil << " c" << channels);
          const uint64_t seed = uint64_t{500} + static_cast<uint64_t>(cases);
          const int64_t out_c = channels == 16 ? 32 : 4;
          const Tensor x = RandomUniform(Shape{3, 11, 11, channels}, seed, -1, 1);
          const Tensor w = RandomUniform(Shape{5, 4, channels, out_c}, seed + 1, -1, 1);
          const Conv2DOptions o{
              .strides = {1, stride, stride, 1}, .padding = padding, .dilations = {1, dil, dil, 1}};
          Shape shape;
          const std::vector<double> want =
              NaiveConv(Cast(x, DType::kFloat64), Cast(w, DType::kFloat64), o, &shape);
          const Tensor y = Conv2D(x, w, o);
          ASSERT_EQ(y.shape(), shape);
          ExpectClose(AsDoubles(y), want, 1e-4);
          const Tensor g = RandomUniform(shape, seed + 2, -1, 1);
          std::vector<double> dx, dw;
          NaiveConvGrads(Cast(x, DType::kFloat64), Cast(w, DType::kFloat64),
                         Cast(g, DType::kFloat64), o, &dx, &dw);
          const Tensor got_dx = Conv2DBackpropInput(Sizes(x.shape()), w, g, o);
          const Tensor got_dw = Conv2DBackpropFilter(x, Sizes(w.shape()), g, o);
          ASSERT_EQ(got_dx.shape(), x.shape());
          ASSERT_EQ(got_dw.shape(), w.shape());
          ExpectClose(AsDoubles(got_dx), dx, 1e-4);
          ExpectClose(AsDoubles(got_dw), dw, 1e-3);  // sums of up to 330 products
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 18);
}

// runtime/threads.h: results do not depend on the thread count, for the
// float32 kernels too (the filter gradient sums over the batch).
TEST(Conv2DTest, Float32ResultsDoNotDependOnTheThreadCount) {
  const Tensor x = RandomUniform(Shape{5, 14, 14, 16}, 41, -1, 1);
  const Tensor w = RandomUniform(Shape{5, 5, 16, 32}, 42, -1, 1);
  const Conv2DOptions o{.padding = "SAME"};
  const Tensor g = RandomUniform(Shape{5, 14, 14, 32}, 43, -1, 1);
  const PoolOptions pool{.padding = "SAME"};
  std::vector<std::vector<float>> runs[2];
  const int threads_before = GetNumThreads();
  for (int t : {1, 2}) {
    SetNumThreads(t);
    const Tensor y = MaxPool(x, pool);
    runs[t - 1] = {Conv2D(x, w, o).ToVector<float>(),
                   Conv2DBackpropInput(Sizes(x.shape()), w, g, o).ToVector<float>(),
                   Conv2DBackpropFilter(x, Sizes(w.shape()), g, o).ToVector<float>(),
                   y.ToVector<float>(),
                   MaxPoolGrad(x, y, Cast(y, DType::kFloat32), pool).ToVector<float>()};
  }
  SetNumThreads(threads_before);
  EXPECT_EQ(runs[0], runs[1]);
}

// The gradient of each window goes to its first maximum (row-major), as
// TF's CPU kernel; overlapping windows add up.
TEST(MaxPoolTest, GradMatchesNaiveLoops) {
  int cases = 0;
  for (const char* padding : {"VALID", "SAME"}) {
    for (int64_t k : {2, 3}) {
      for (int64_t s : {1, 2}) {
        SCOPED_TRACE(testing::Message() << padding << " k" << k << " s" << s);
        // Values from a few levels, so that windows hold ties; 21 channels:
        // a vector of 16 and a remainder in the 2x2 stride-2 loops.
        RandomGenerator rng(uint64_t{700} + static_cast<uint64_t>(cases));
        std::vector<float> levels(2 * 7 * 6 * 21);
        for (float& v : levels) v = static_cast<float>(rng.NextBelow(4));
        const Tensor x = Tensor::FromVector<float>(levels, Shape{2, 7, 6, 21});
        const PoolOptions o{.ksize = {1, k, k, 1}, .strides = {1, s, s, 1}, .padding = padding};
        const Tensor y = MaxPool(x, o);
        const Tensor g =
            RandomUniform(y.shape(), uint64_t{800} + static_cast<uint64_t>(cases), -1, 1);
        const auto xv = x.ToVector<float>();
        const auto gv = g.ToVector<float>();
        const Shape& xs = x.shape();
        const int64_t H = xs.dim(1), W = xs.dim(2), C = xs.dim(3);
        const Pads ph = OutAndPad(H, k, s, 1, padding);
        const Pads pw = OutAndPad(W, k, s, 1, padding);
        std::vector<float> want(xv.size(), 0.0f);
        size_t out = 0;
        for (int64_t n = 0; n < xs.dim(0); ++n)
          for (int64_t i = 0; i < ph.out; ++i)
            for (int64_t j = 0; j < pw.out; ++j)
              for (int64_t c = 0; c < C; ++c, ++out) {
                int64_t best = -1;
                for (int64_t di = 0; di < k; ++di)
                  for (int64_t dj = 0; dj < k; ++dj) {
                    const int64_t r = i * s + di - ph.before, q = j * s + dj - pw.before;
                    if (r < 0 || r >= H || q < 0 || q >= W) continue;
                    const int64_t at = ((n * H + r) * W + q) * C + c;
                    if (best < 0 || xv[static_cast<size_t>(at)] > xv[static_cast<size_t>(best)]) {
                      best = at;
                    }
                  }
                want[static_cast<size_t>(best)] += gv[out];
              }
        EXPECT_EQ(MaxPoolGrad(x, y, g, o).ToVector<float>(), want);
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 8);
}

TEST(Conv2DTest, BadArgumentsNameWhatIsWrong) {
  const Tensor x = Tensor::Zeros(Shape{1, 4, 4, 2});
  const Tensor w = Tensor::Zeros(Shape{2, 2, 2, 3});
  try {
    Conv2D(x, Tensor::Zeros(Shape{2, 2, 3, 3}));
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Conv2D: filter must be [height, width, in_channels"));
    EXPECT_THAT(e.what(), HasSubstr("[2,2,3,3]"));
  }
  try {
    Conv2D(x, w, {.padding = "FULL"});
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("padding must be \"VALID\" or \"SAME\", got \"FULL\""));
  }
  try {
    Conv2D(x, w, {.strides = {2, 1, 1, 1}});
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'strides' must be 4 values [1, h, w, 1]"));
  }
  try {
    Conv2D(x, Tensor::Zeros(Shape{5, 1, 2, 3}));
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("height of the input (4) is smaller than the window's (5)"));
  }
  EXPECT_THROW(Conv2D(Tensor::Zeros(Shape{4, 4, 2}), w), InvalidArgumentError);
  EXPECT_THROW(MaxPool(x, {.ksize = {1, 2, 2, 2}}), InvalidArgumentError);
  EXPECT_THROW(
      Conv2DBackpropInput(Tensor::Vector<int32_t>({1, 4, 4}), w, Tensor::Zeros(Shape{1, 3, 3, 3})),
      InvalidArgumentError);
  // out_backprop must have the forward output's shape.
  try {
    Conv2DBackpropInput(Tensor::Vector<int32_t>({1, 4, 4, 2}), w, Tensor::Zeros(Shape{1, 2, 3, 3}));
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("out_backprop must have the forward output's shape [1,3,3,3]"));
  }
}

}  // namespace
}  // namespace eager
