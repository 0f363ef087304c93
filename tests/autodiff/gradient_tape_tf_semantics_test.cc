// GradientTape behaviours mirrored from TensorFlow's tf.GradientTape
// (tensorflow/python/eager/backprop.py, TF 2.21; each value was also checked
// by running TF by hand):
// - gradient() on a persistent tape while it records also records the
//   backward ops ("Calling GradientTape.gradient on a persistent tape inside
//   its context ... Only call GradientTape.gradient inside the context if you
//   actually want to trace the gradient in order to compute higher order
//   derivatives"); a non-persistent tape pops itself first (_pop_tape).
// - reset(): "Clears all information stored in this tape. Equivalent to
//   exiting and reentering the tape context manager with a new tape."
// - gradient([y1, y2], x): a list of targets is differentiated as their sum
//   (imperative_grad over all flat targets), output_gradients one per target.

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "autodiff/gradient_tape.h"
#include "ops/binary_ops.h"
#include "ops/reduction_ops.h"
#include "ops/unary_ops.h"
#include "tests/testing/numeric_gradient.h"

namespace eager {
namespace {

double Scalar(const std::optional<Tensor>& t) {
  EXPECT_TRUE(t.has_value());
  return t.has_value() ? t->scalar<double>() : 0.0;
}

Tensor Cube(const Tensor& x) { return Mul(Mul(x, x), x); }

// TF: with tf.GradientTape(persistent=True) as t: y = x*x*x;
// dy = t.gradient(y, x); d2 = t.gradient(dy, x); d3 = t.gradient(d2, x)
// gives 27, 18, 6 at x = 3.
TEST(GradientTapeTfSemanticsTest, PersistentTapeRecordsItsOwnGradientForHigherOrders) {
  Variable x(Tensor::Scalar<double>(3), "x");
  GradientTape tape(/*persistent=*/true);
  const Tensor y = Cube(x.value());
  const std::optional<Tensor> dy = tape.Gradient(y, x);
  const std::optional<Tensor> d2y = tape.Gradient(*dy, x);
  const std::optional<Tensor> d3y = tape.Gradient(*d2y, x);
  EXPECT_EQ(Scalar(dy), 27);
  EXPECT_EQ(Scalar(d2y), 18);
  EXPECT_EQ(Scalar(d3y), 6);
}

// The recorded derivative agrees with central differences of the first one:
// d/dx (d/dx sum(tanh(x) * x)) at several points.
TEST(GradientTapeTfSemanticsTest, RecordedSecondDerivativeMatchesFiniteDifferences) {
  const std::vector<double> xs = {-1.2, -0.4, 0.3, 0.9};
  auto first = [](const std::vector<double>& at) {
    Variable v(Tensor::FromVector<double>(at), "v");
    GradientTape tape;
    const Tensor y = ReduceSum(Mul(Tanh(v.value()), v.value()));
    return testing::ToDoubles(*tape.Gradient(y, v));
  };
  Variable x(Tensor::FromVector<double>(xs), "x");
  GradientTape tape(/*persistent=*/true);
  const Tensor y = ReduceSum(Mul(Tanh(x.value()), x.value()));
  const Tensor dy = *tape.Gradient(y, x);
  // The elementwise function makes the Hessian diagonal: the gradient of
  // sum(dy) is that diagonal.
  const std::vector<double> d2 = testing::ToDoubles(*tape.Gradient(ReduceSum(dy), x));
  const double eps = 1e-6;
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<double> hi = xs, lo = xs;
    hi[i] += eps;
    lo[i] -= eps;
    const double numeric = (first(hi)[i] - first(lo)[i]) / (2 * eps);
    EXPECT_NEAR(d2[i], numeric, 1e-6) << "at x = " << xs[i];
  }
}

// TF: calling t.gradient outside the persistent tape's context records
// nothing, so t.gradient(dy, x) is None. Eager's tape records while alive;
// StopRecording is the "outside".
TEST(GradientTapeTfSemanticsTest, GradientUnderStopRecordingIsNotRecorded) {
  Variable x(Tensor::Scalar<double>(3), "x");
  GradientTape tape(/*persistent=*/true);
  const Tensor y = Cube(x.value());
  std::optional<Tensor> dy;
  {
    GradientTape::StopRecording stop(tape);
    dy = tape.Gradient(y, x);
  }
  EXPECT_EQ(Scalar(dy), 27);
  EXPECT_FALSE(tape.Gradient(*dy, x).has_value());
}

// TF: a non-persistent tape pops itself before computing (backprop.py
// gradient(): `if not self._persistent: self._pop_tape()`); an outer tape
// still records the inner gradient.
TEST(GradientTapeTfSemanticsTest, NonPersistentTapeDoesNotRecordItsGradient) {
  Variable x(Tensor::Scalar<double>(3), "x");
  GradientTape outer(/*persistent=*/true);
  std::optional<Tensor> dy;
  {
    GradientTape inner;
    dy = inner.Gradient(Cube(x.value()), x);
    EXPECT_THROW((void)inner.Gradient(*dy, x), FailedPreconditionError);
  }
  EXPECT_EQ(Scalar(outer.Gradient(*dy, x)), 18);
}

// TF: with tf.GradientTape() as t: a = x*x; t.reset(); b = a + 2*x
// gives t.gradient(b, x) == 2: only what ran after the reset is seen.
TEST(GradientTapeTfSemanticsTest, ResetForgetsWhatWasRecorded) {
  Variable x(Tensor::Scalar<double>(3), "x");
  GradientTape tape;
  const Tensor a = Mul(x.value(), x.value());
  tape.Reset();
  EXPECT_TRUE(tape.WatchedVariables().empty());
  const Tensor b = Add(a, Mul(Tensor::Scalar<double>(2), x.value()));
  EXPECT_EQ(Scalar(tape.Gradient(b, x)), 2);
}

TEST(GradientTapeTfSemanticsTest, ResetForgetsWatchedTensorsAndKeepsOptions) {
  Tensor t = Tensor::Scalar<double>(2);
  Variable frozen(Tensor::Scalar<double>(5), "frozen", /*trainable=*/false);
  GradientTape tape(/*persistent=*/true, /*watch_accessed_variables=*/false);
  tape.Watch(t);
  tape.Watch(frozen);
  tape.Reset();
  const Tensor y = Mul(Mul(t, t), frozen.value());
  // Neither watch survives the reset.
  EXPECT_FALSE(tape.Gradient(y, {t})[0].has_value());
  EXPECT_FALSE(tape.Gradient(y, frozen).has_value());
  // Still persistent (a second call works) and still not watching reads.
  Variable w(Tensor::Scalar<double>(1), "w");
  EXPECT_FALSE(tape.Gradient(Mul(w.value(), w.value()), w).has_value());
}

// TF lets a spent non-persistent tape be entered again (`with t:` makes a
// new tape); Reset() is eager's way back.
TEST(GradientTapeTfSemanticsTest, ResetReopensASpentNonPersistentTape) {
  Variable x(Tensor::Scalar<double>(3), "x");
  GradientTape tape;
  EXPECT_EQ(Scalar(tape.Gradient(Mul(x.value(), x.value()), x)), 6);
  EXPECT_THROW((void)tape.Gradient(x.value(), x), FailedPreconditionError);
  tape.Reset();
  EXPECT_EQ(Scalar(tape.Gradient(Mul(x.value(), Tensor::Scalar<double>(4)), x)), 4);
}

TEST(GradientTapeTfSemanticsTest, ResetWhilePausedThrows) {
  GradientTape tape;
  GradientTape::StopRecording stop(tape);
  EXPECT_THROW(tape.Reset(), FailedPreconditionError);
}

// TF: t.gradient([x*x, 5*x], x) == 11 at x = 3 (2x + 5).
TEST(GradientTapeTfSemanticsTest, SeveralTargetsGiveTheGradientOfTheirSum) {
  Variable x(Tensor::Scalar<double>(3), "x");
  Variable w(Tensor::Scalar<double>(7), "w");
  GradientTape tape;
  const Tensor y1 = Mul(x.value(), x.value());
  const Tensor y2 = Mul(Tensor::Scalar<double>(5), x.value());
  const std::vector<Tensor> targets = {y1, y2};
  const std::vector<Variable*> sources = {&x, &w};
  std::vector<std::optional<Tensor>> grads = tape.Gradient(targets, sources);
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(Scalar(grads[0]), 11);
  EXPECT_FALSE(grads[1].has_value());
}

// TF: t.gradient([y1, y2, y1], x) with y1 = x*x, y2 = y1*x is
// 2x + 3x^2 + 2x = 39 at x = 3: a target another one uses waits for it, and
// a repeated target counts twice.
TEST(GradientTapeTfSemanticsTest, TargetsThatDependOnEachOtherAndRepeatsAreSummed) {
  Variable x(Tensor::Scalar<double>(3), "x");
  GradientTape tape;
  const Tensor y1 = Mul(x.value(), x.value());
  const Tensor y2 = Mul(y1, x.value());
  EXPECT_EQ(Scalar(tape.Gradient({y1, y2, y1}, {&x})[0]), 39);
}

// TF: output_gradients=[2., 3.] for [x*x, 5*x] gives 2*6 + 3*5 = 27.
TEST(GradientTapeTfSemanticsTest, OutputGradientsWeighEachTarget) {
  Tensor x = Tensor::Scalar<double>(3);
  GradientTape tape;
  tape.Watch(x);
  const std::vector<Tensor> targets = {Mul(x, x), Mul(Tensor::Scalar<double>(5), x)};
  const std::vector<Tensor> weights = {Tensor::Scalar<double>(2), Tensor::Scalar<double>(3)};
  const std::vector<Tensor> sources = {x};
  EXPECT_EQ(Scalar(tape.Gradient(targets, sources, UnconnectedGradients::kNone, weights)[0]), 27);
}

TEST(GradientTapeTfSemanticsTest, OutputGradientsMustMatchTheTargets) {
  Tensor x = Tensor::Scalar<double>(3);
  GradientTape tape(/*persistent=*/true);
  tape.Watch(x);
  const std::vector<Tensor> targets = {Mul(x, x), Mul(x, x)};
  const std::vector<Tensor> sources = {x};
  const std::vector<Tensor> one = {Tensor::Scalar<double>(1)};
  EXPECT_THROW((void)tape.Gradient(targets, sources, UnconnectedGradients::kNone, one),
               InvalidArgumentError);
  const std::vector<Tensor> wrong = {Tensor::Scalar<double>(1), Tensor::Scalar<float>(1)};
  EXPECT_THROW((void)tape.Gradient(targets, sources, UnconnectedGradients::kNone, wrong),
               InvalidArgumentError);
}

// Several targets on a persistent tape that records itself: the summed
// gradient is itself differentiable (d/dx of 2x + 3x^2 is 2 + 6x = 20).
TEST(GradientTapeTfSemanticsTest, SummedGradientOfSeveralTargetsIsRecorded) {
  Variable x(Tensor::Scalar<double>(3), "x");
  GradientTape tape(/*persistent=*/true);
  const Tensor y1 = Mul(x.value(), x.value());
  const Tensor y2 = Cube(x.value());
  const Tensor g = *tape.Gradient({y1, y2}, {&x})[0];
  EXPECT_EQ(g.scalar<double>(), 33);
  EXPECT_EQ(Scalar(tape.Gradient(g, x)), 20);
}

}  // namespace
}  // namespace eager
