// Gradients through many slices of one tensor: the tape adds each
// StridedSlice's (Unpack's, Split's) gradient into the input's sum in place
// (OpDef::add_input0_gradient) when nothing records the backward pass, and
// runs the gradient function (StridedSliceGrad, Pack, Pad) otherwise. Both must give the gradient
// computed here by hand, element by element.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "autodiff/gradient_tape.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "ops/split_ops.h"
#include "ops/unary_ops.h"

namespace eager {
namespace {

constexpr int64_t kA = 4, kB = 7, kC = 6;

int64_t At(int64_t a, int64_t b, int64_t c) { return (a * kB + b) * kC + c; }

Tensor SumOfSquares(const Tensor& t) { return ReduceSum(Square(t)); }

// loss = sum_t (t + 1) * sum(x[:, t, :]^2)     (a shrunk middle axis, per step)
//      + 3 * sum(x[::-1, 1:6:2, 1:5]^2)       (reversed and strided)
//      + sum(x[1:3, ..., 2:4]^2)               (an ellipsis; overlaps the others)
//      + sum(x[..., -1])                        (linear in the last column)
Tensor Loss(const Tensor& x) {
  Tensor loss = Tensor::Zeros(Shape{}, x.dtype());
  for (int64_t t = 0; t < kB; ++t) {
    const Tensor step = StridedSlice(x, {0, t, 0}, {0, t + 1, 0}, {1, 1, 1},
                                     {.begin = 5, .end = 5, .shrink_axis = 2});
    loss = Add(loss, Mul(SumOfSquares(step), Cast(Tensor::Scalar<float>(t + 1.0f), x.dtype())));
  }
  const Tensor reversed = StridedSlice(x, {-1, 1, 1}, {0, 6, 5}, {-1, 2, 1}, {.end = 1});
  loss = Add(loss, Mul(SumOfSquares(reversed), Cast(Tensor::Scalar<float>(3), x.dtype())));
  const Tensor ellipsis = StridedSlice(x, {1, 0, 2}, {3, 0, 4}, {1, 1, 1}, {.ellipsis = 2});
  loss = Add(loss, SumOfSquares(ellipsis));
  const Tensor last = StridedSlice(x, {0, -1}, {0, 0}, {1, 1}, {.ellipsis = 1, .shrink_axis = 2});
  return Add(loss, ReduceSum(last));
}

// d loss / dx, element by element from the definition above.
std::vector<double> Expected(const std::vector<double>& x) {
  std::vector<double> g(x.size(), 0.0);
  for (int64_t a = 0; a < kA; ++a) {
    for (int64_t b = 0; b < kB; ++b) {
      for (int64_t c = 0; c < kC; ++c) {
        const int64_t i = At(a, b, c);
        g[i] += 2.0 * static_cast<double>(b + 1) * x[i];
        // x[::-1] from the last row down covers every a; b in {1, 3, 5}.
        if (b >= 1 && b < 6 && (b - 1) % 2 == 0 && c >= 1 && c < 5) g[i] += 6.0 * x[i];
        if (a >= 1 && a < 3 && c >= 2 && c < 4) g[i] += 2.0 * x[i];
        if (c == kC - 1) g[i] += 1.0;
      }
    }
  }
  return g;
}

template <typename T>
std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> out;
  for (T v : t.data<T>()) out.push_back(static_cast<double>(v));
  return out;
}

template <typename T>
void ExpectNear(const Tensor& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size()));
  const std::vector<double> g = AsDoubles<T>(got);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(g[i], want[i], tol * (1.0 + std::abs(want[i]))) << "element " << i;
  }
}

TEST(GradientTapeSlicesTest, ManySlicesSumToTheHandGradientFloat32) {
  const Tensor x = RandomUniform(Shape{kA, kB, kC}, 11, -1.0, 1.0, DType::kFloat32);
  GradientTape tape;
  tape.Watch(x);
  const Tensor loss = Loss(x);
  const std::optional<Tensor> g = tape.Gradient(loss, {x})[0];
  ASSERT_TRUE(g.has_value());
  ExpectNear<float>(*g, Expected(AsDoubles<float>(x)), 1e-6);
}

TEST(GradientTapeSlicesTest, ManySlicesSumToTheHandGradientFloat64) {
  const Tensor x = RandomUniform(Shape{kA, kB, kC}, 12, -1.0, 1.0, DType::kFloat64);
  GradientTape tape;
  tape.Watch(x);
  const std::optional<Tensor> g = tape.Gradient(Loss(x), {x})[0];
  ASSERT_TRUE(g.has_value());
  ExpectNear<double>(*g, Expected(AsDoubles<double>(x)), 1e-13);
}

// An outer tape sees the backward pass: the slices' gradients must then be
// StridedSliceGrad ops it can differentiate. d/dx of sum(dloss/dx) is the
// diagonal of the Hessian summed per element: 2(b+1) + 6 + 2 where sliced.
TEST(GradientTapeSlicesTest, UnderAnOuterTapeTheSecondDerivativeIsRight) {
  const Tensor x = RandomUniform(Shape{kA, kB, kC}, 13, -1.0, 1.0, DType::kFloat64);
  GradientTape outer;
  outer.Watch(x);
  std::optional<Tensor> g;
  {
    GradientTape inner;
    inner.Watch(x);
    g = inner.Gradient(Loss(x), {x})[0];
  }
  ASSERT_TRUE(g.has_value());
  ExpectNear<double>(*g, Expected(AsDoubles<double>(x)), 1e-13);
  const std::optional<Tensor> h = outer.Gradient(ReduceSum(*g), {x})[0];
  ASSERT_TRUE(h.has_value());
  // Expected() is linear in x plus a constant: its derivative is Expected(1)
  // minus the constant column's 1.
  std::vector<double> want = Expected(std::vector<double>(kA * kB * kC, 1.0));
  for (int64_t a = 0; a < kA; ++a) {
    for (int64_t b = 0; b < kB; ++b) want[At(a, b, kC - 1)] -= 1.0;
  }
  ExpectNear<double>(*h, want, 1e-13);
}

// The sum a slice adds into may be shared: here x's first gradient is the
// Reshape of the gradient of s, a source the tape returns too. Adding in
// place must not change s's gradient.
TEST(GradientTapeSlicesTest, ASharedSumIsCopiedBeforeTheSliceAddsIntoIt) {
  const Tensor x = RandomUniform(Shape{kA, kB, kC}, 14, -1.0, 1.0, DType::kFloat32);
  const Tensor c = RandomUniform(Shape{kA * kB * kC}, 15, -1.0, 1.0, DType::kFloat32);
  for (bool slices_first : {true, false}) {
    GradientTape tape;
    tape.Watch(x);
    Tensor loss;
    Tensor s;
    if (slices_first) {
      loss = Loss(x);
      s = Reshape(x, {-1});
      tape.Watch(s);
      loss = Add(loss, ReduceSum(Mul(s, c)));
    } else {
      s = Reshape(x, {-1});
      tape.Watch(s);
      loss = Add(ReduceSum(Mul(s, c)), Loss(x));
    }
    const std::vector<std::optional<Tensor>> g = tape.Gradient(loss, {x, s});
    ASSERT_TRUE(g[0].has_value() && g[1].has_value());
    ExpectNear<float>(*g[1], AsDoubles<float>(c), 0.0);
    std::vector<double> want = Expected(AsDoubles<float>(x));
    const std::vector<double> cs = AsDoubles<float>(c);
    for (size_t i = 0; i < want.size(); ++i) want[i] += cs[i];
    ExpectNear<float>(*g[0], want, 1e-6);
  }
}

// loss = sum_t (t + 1) * sum(unstack(x, axis 1)[t]^2)
//      + sum_k (k + 2) * sum(split(x, 3, axis 2)[k]^2)
Tensor PiecesLoss(const Tensor& x) {
  Tensor loss = Tensor::Zeros(Shape{}, x.dtype());
  const std::vector<Tensor> steps = Unpack(x, 1);
  for (size_t t = 0; t < steps.size(); ++t) {
    loss = Add(loss, Mul(SumOfSquares(steps[t]), Cast(Tensor::Scalar<float>(t + 1.0f), x.dtype())));
  }
  const std::vector<Tensor> pieces = Split(x, 3, 2);
  for (size_t k = 0; k < pieces.size(); ++k) {
    loss =
        Add(loss, Mul(SumOfSquares(pieces[k]), Cast(Tensor::Scalar<float>(k + 2.0f), x.dtype())));
  }
  return loss;
}

std::vector<double> PiecesExpected(const std::vector<double>& x) {
  std::vector<double> g(x.size(), 0.0);
  for (int64_t a = 0; a < kA; ++a) {
    for (int64_t b = 0; b < kB; ++b) {
      for (int64_t c = 0; c < kC; ++c) {
        const int64_t i = At(a, b, c);
        const int64_t piece = c / 2;  // split(x, 3, axis 2) of 6 columns
        g[i] =
            2.0 * static_cast<double>(b + 1) * x[i] + 2.0 * static_cast<double>(piece + 2) * x[i];
      }
    }
  }
  return g;
}

TEST(GradientTapeSlicesTest, UnpackAndSplitPiecesSumToTheHandGradient) {
  const Tensor x = RandomUniform(Shape{kA, kB, kC}, 16, -1.0, 1.0, DType::kFloat64);
  {
    GradientTape tape;
    tape.Watch(x);
    const std::optional<Tensor> g = tape.Gradient(PiecesLoss(x), {x})[0];
    ASSERT_TRUE(g.has_value());
    ExpectNear<double>(*g, PiecesExpected(AsDoubles<double>(x)), 1e-13);
  }
  // Under an outer tape: Pack and Pad, which it differentiates again.
  GradientTape outer;
  outer.Watch(x);
  std::optional<Tensor> g;
  {
    GradientTape inner;
    inner.Watch(x);
    g = inner.Gradient(PiecesLoss(x), {x})[0];
  }
  ASSERT_TRUE(g.has_value());
  ExpectNear<double>(*g, PiecesExpected(AsDoubles<double>(x)), 1e-13);
  const std::optional<Tensor> h = outer.Gradient(ReduceSum(*g), {x})[0];
  ASSERT_TRUE(h.has_value());
  ExpectNear<double>(*h, PiecesExpected(std::vector<double>(kA * kB * kC, 1.0)), 1e-13);
  // float32 through the in-place path too.
  const Tensor xf = Cast(x, DType::kFloat32);
  GradientTape tape;
  tape.Watch(xf);
  const std::optional<Tensor> gf = tape.Gradient(PiecesLoss(xf), {xf})[0];
  ASSERT_TRUE(gf.has_value());
  ExpectNear<float>(*gf, PiecesExpected(AsDoubles<float>(xf)), 1e-6);
}

}  // namespace
}  // namespace eager
