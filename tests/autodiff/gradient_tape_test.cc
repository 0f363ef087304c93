#include "autodiff/gradient_tape.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/matmul.h"
#include "ops/nn_ops.h"
#include "ops/reduction_ops.h"
#include "ops/unary_ops.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pointwise;
using ::testing::UnorderedElementsAre;

std::vector<double> Values(const std::optional<Tensor>& t) {
  EXPECT_TRUE(t.has_value());
  if (!t.has_value()) return {};
  EXPECT_EQ(t->dtype(), DType::kFloat64);
  return t->ToVector<double>();
}

std::vector<float> FloatValues(const std::optional<Tensor>& t) {
  EXPECT_TRUE(t.has_value());
  if (!t.has_value()) return {};
  EXPECT_EQ(t->dtype(), DType::kFloat32);
  return t->ToVector<float>();
}

TEST(GradientTapeTest, GradientOfProductIsTheOtherFactor) {
  Variable x(Tensor::Vector<float>({2, 3}), "x");
  Variable y(Tensor::Vector<float>({5, 7}), "y");
  GradientTape tape;
  Tensor z = ReduceSum(Mul(x.value(), y.value()));

  std::vector<std::optional<Tensor>> grads = tape.Gradient(z, {&x, &y});

  ASSERT_EQ(grads.size(), 2u);
  EXPECT_THAT(FloatValues(grads[0]), ElementsAre(5, 7));
  EXPECT_THAT(FloatValues(grads[1]), ElementsAre(2, 3));
}

TEST(GradientTapeTest, ChainRuleMatchesAnalyticDerivative) {
  // d/dx tanh(x^2) = 2x (1 - tanh(x^2)^2), computed here with <cmath>.
  const std::vector<double> xs = {-1.5, -0.3, 0.0, 0.7, 1.2};
  Variable x(Tensor::FromVector<double>(xs), "x");
  GradientTape tape;
  Tensor y = ReduceSum(Tanh(Square(x.value())));

  std::optional<Tensor> grad = tape.Gradient(y, x);

  std::vector<double> expected;
  expected.reserve(xs.size());
  for (double v : xs) expected.push_back(2 * v * (1 - std::pow(std::tanh(v * v), 2)));
  EXPECT_THAT(Values(grad), Pointwise(DoubleNear(1e-12), expected));
}

TEST(GradientTapeTest, LongerChainOfUnaryOps) {
  // y = exp(sigmoid(x)) * 3 - x; dy/dx = 3 exp(s) s (1 - s) - 1 with s = sigmoid(x).
  const double xv = 0.4;
  Tensor x = Tensor::Scalar<double>(xv);
  GradientTape tape;
  tape.Watch(x);
  Tensor y = Sub(Mul(Exp(Sigmoid(x)), Tensor::Scalar<double>(3)), x);

  std::vector<std::optional<Tensor>> grads = tape.Gradient(y, {x});

  const double s = 1 / (1 + std::exp(-xv));
  EXPECT_THAT(Values(grads[0]), ElementsAre(DoubleNear(3 * std::exp(s) * s * (1 - s) - 1, 1e-12)));
}

TEST(GradientTapeTest, BroadcastGradientsAreSummedBackToInputShapes) {
  Variable x(Tensor::Matrix<double>({{1, 2, 3}, {4, 5, 6}}), "x");  // [2,3]
  Variable b(Tensor::Vector<double>({10, 20, 30}), "b");            // [3]
  Variable s(Tensor::Scalar<double>(2), "s");                       // []
  GradientTape tape;
  // z = sum((x + b) * s): dz/dx = s, dz/db = rows * s, dz/ds = sum(x + b).
  Tensor z = ReduceSum(Mul(Add(x.value(), b.value()), s.value()));

  std::vector<std::optional<Tensor>> grads = tape.Gradient(z, {&x, &b, &s});

  EXPECT_EQ(grads[0]->shape(), (Shape{2, 3}));
  EXPECT_THAT(Values(grads[0]), ElementsAre(2, 2, 2, 2, 2, 2));
  EXPECT_EQ(grads[1]->shape(), (Shape{3}));
  EXPECT_THAT(Values(grads[1]), ElementsAre(4, 4, 4));
  EXPECT_EQ(grads[2]->shape(), Shape{});
  EXPECT_THAT(Values(grads[2]), ElementsAre(21 + 120));
}

TEST(GradientTapeTest, BroadcastMulGradientIsColumnSumOfOtherFactor) {
  Variable x(Tensor::Matrix<double>({{1, 2}, {3, 4}, {5, 6}}), "x");  // [3,2]
  Variable c(Tensor::Matrix<double>({{10}, {20}, {30}}), "c");        // [3,1]
  GradientTape tape;
  Tensor z = ReduceSum(Mul(x.value(), c.value()));

  std::vector<std::optional<Tensor>> grads = tape.Gradient(z, {&x, &c});

  EXPECT_THAT(Values(grads[0]), ElementsAre(10, 10, 20, 20, 30, 30));
  EXPECT_EQ(grads[1]->shape(), (Shape{3, 1}));
  EXPECT_THAT(Values(grads[1]), ElementsAre(3, 7, 11));
}

TEST(GradientTapeTest, UnconnectedSourceGetsNulloptByDefault) {
  Variable x(Tensor::Vector<double>({1, 2}), "x");
  Variable unused(Tensor::Matrix<double>({{1, 2, 3}}), "unused");
  GradientTape tape;
  Tensor y = ReduceSum(Square(x.value()));
  (void)unused.value();  // read, so watched, but y does not depend on it

  std::vector<std::optional<Tensor>> grads = tape.Gradient(y, {&x, &unused});

  EXPECT_THAT(Values(grads[0]), ElementsAre(2, 4));
  EXPECT_FALSE(grads[1].has_value());
}

TEST(GradientTapeTest, UnconnectedZeroPolicyGivesZerosShapedLikeSource) {
  Variable x(Tensor::Vector<double>({1, 2}), "x");
  Variable unused(Tensor::Matrix<double>({{1, 2, 3}}), "unused");
  Variable never_read(Tensor::Vector<float>({1}), "never_read");
  GradientTape tape;
  Tensor y = ReduceSum(Square(x.value()));

  std::vector<std::optional<Tensor>> grads =
      tape.Gradient(y, {&x, &unused, &never_read}, UnconnectedGradients::kZero);

  EXPECT_THAT(Values(grads[0]), ElementsAre(2, 4));
  ASSERT_TRUE(grads[1].has_value());
  EXPECT_EQ(grads[1]->shape(), (Shape{1, 3}));
  EXPECT_THAT(Values(grads[1]), ElementsAre(0, 0, 0));
  ASSERT_TRUE(grads[2].has_value());
  EXPECT_EQ(grads[2]->shape(), (Shape{1}));
  EXPECT_THAT(FloatValues(grads[2]), ElementsAre(0));
}

TEST(GradientTapeTest, NonPersistentTapeRejectsSecondGradient) {
  Variable x(Tensor::Vector<float>({1}), "x");
  GradientTape tape;
  Tensor z = Mul(x.value(), x.value());
  (void)tape.Gradient(z, {&x});
  try {
    (void)tape.Gradient(z, {&x});
    FAIL() << "expected FailedPreconditionError";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("GradientTape.gradient can only be called once on non-persistent tapes"));
  }
}

TEST(GradientTapeTest, PersistentTapeAllowsManyGradients) {
  Variable x(Tensor::Vector<double>({3}), "x");
  GradientTape tape(/*persistent=*/true);
  Tensor y = Square(x.value());  // 2x
  Tensor z = Mul(y, x.value());  // 3x^2
  Tensor w = Exp(x.value());     // e^x

  EXPECT_THAT(Values(tape.Gradient(y, x)), ElementsAre(6));
  EXPECT_THAT(Values(tape.Gradient(z, x)), ElementsAre(27));
  EXPECT_THAT(Values(tape.Gradient(w, x)), ElementsAre(DoubleNear(std::exp(3.0), 1e-12)));
  EXPECT_THAT(Values(tape.Gradient(y, x)), ElementsAre(6));
}

TEST(GradientTapeTest, NonPersistentTapeFreesItsRecordsAfterGradient) {
  Variable x(Tensor::Vector<double>({1, 2}), "x");
  GradientTape tape;
  std::weak_ptr<const internal::Buffer> intermediate;
  Tensor y;
  {
    Tensor e = Exp(x.value());
    intermediate = internal::BufferOf(e);
    y = ReduceSum(Square(e));
  }
  // Only the tape's record of Square still refers to e.
  EXPECT_FALSE(intermediate.expired());
  (void)tape.Gradient(y, x);
  EXPECT_TRUE(intermediate.expired());
}

TEST(GradientTapeTest, NonPersistentTapeStopsRecordingAfterGradient) {
  Variable x(Tensor::Vector<double>({1, 2}), "x");
  GradientTape tape;
  (void)tape.Gradient(ReduceSum(x.value()), x);
  std::weak_ptr<const internal::Buffer> later;
  {
    Tensor e = Exp(x.value());
    later = internal::BufferOf(e);
    (void)Square(e);
  }
  // Had the tape recorded Square, its record would still hold e.
  EXPECT_TRUE(later.expired());
  EXPECT_TRUE(tape.WatchedVariables() == std::vector<const Variable*>{&x});
}

TEST(GradientTapeTest, NullVariableSourceThrows) {
  Variable x(Tensor::Vector<double>({1}), "x");
  GradientTape tape;
  Tensor y = Square(x.value());
  EXPECT_THROW((void)tape.Gradient(y, std::vector<const Variable*>{&x, nullptr}),
               InvalidArgumentError);
}

TEST(GradientTapeTest, ContainerOfVariablePointersIsASourceList) {
  Variable w(Tensor::Vector<float>({1, 2}), "w");
  Variable b(Tensor::Vector<float>({3}), "b");
  GradientTape tape(/*persistent=*/true);
  Tensor loss = ReduceSum(Mul(Square(w.value()), b.value()));
  // What Module::TrainableVariables() returns: no copy into const pointers.
  const std::vector<Variable*> vars = {&w, &b};

  std::vector<std::optional<Tensor>> grads = tape.Gradient(loss, vars);

  ASSERT_EQ(grads.size(), 2u);
  EXPECT_THAT(FloatValues(grads[0]), ElementsAre(6, 12));  // 2 w b
  EXPECT_THAT(FloatValues(grads[1]), ElementsAre(5));      // w0^2 + w1^2
  std::vector<std::optional<Tensor>> braced = tape.Gradient(loss, {&w, &b});
  EXPECT_EQ(FloatValues(braced[0]), FloatValues(grads[0]));
  EXPECT_EQ(FloatValues(braced[1]), FloatValues(grads[1]));
}

TEST(GradientTapeTest, PersistentTapeKeepsRecordsUntilDestroyed) {
  Variable x(Tensor::Vector<double>({1, 2}), "x");
  std::weak_ptr<const internal::Buffer> intermediate;
  {
    GradientTape tape(/*persistent=*/true);
    Tensor y;
    {
      Tensor e = Exp(x.value());
      intermediate = internal::BufferOf(e);
      y = ReduceSum(Square(e));
    }
    (void)tape.Gradient(y, x);
    EXPECT_FALSE(intermediate.expired());
  }
  EXPECT_TRUE(intermediate.expired());
}

TEST(GradientTapeTest, NestedTapesGiveSecondDerivative) {
  // d/dx x^3 = 3x^2 and d2/dx2 x^3 = 6x, at x = 1.5.
  Variable x(Tensor::Scalar<double>(1.5), "x");
  GradientTape outer;
  std::optional<Tensor> dy;
  {
    GradientTape inner;
    Tensor y = Mul(Mul(x.value(), x.value()), x.value());
    dy = inner.Gradient(y, x);
  }
  std::optional<Tensor> d2y = outer.Gradient(*dy, x);

  EXPECT_THAT(Values(dy), ElementsAre(DoubleNear(3 * 1.5 * 1.5, 1e-12)));
  EXPECT_THAT(Values(d2y), ElementsAre(DoubleNear(6 * 1.5, 1e-12)));
}

TEST(GradientTapeTest, NestedTapesOnWatchedTensorGiveThirdDerivative) {
  // x^4: 4x^3, 12x^2, 24x at x = 2, with three tapes.
  Tensor x = Tensor::Scalar<double>(2);
  GradientTape t3;
  t3.Watch(x);
  std::optional<Tensor> d1, d2;
  {
    GradientTape t2;
    t2.Watch(x);
    {
      GradientTape t1;
      t1.Watch(x);
      Tensor y = Square(Square(x));
      d1 = t1.Gradient(y, {x})[0];
    }
    d2 = t2.Gradient(*d1, {x})[0];
  }
  std::optional<Tensor> d3 = t3.Gradient(*d2, {x})[0];

  EXPECT_THAT(Values(d1), ElementsAre(DoubleNear(32, 1e-12)));
  EXPECT_THAT(Values(d2), ElementsAre(DoubleNear(48, 1e-12)));
  EXPECT_THAT(Values(d3), ElementsAre(DoubleNear(48, 1e-12)));
}

TEST(GradientTapeTest, StopGradientCutsTheFlow) {
  Variable x(Tensor::Vector<double>({2, 5}), "x");
  GradientTape tape;
  // z = x * stop(x): dz/dx = stop(x) = x, not 2x.
  Tensor z = ReduceSum(Mul(x.value(), StopGradient(x.value())));

  EXPECT_THAT(Values(tape.Gradient(z, x)), ElementsAre(2, 5));
}

TEST(GradientTapeTest, StopGradientOfEverythingLeavesSourceUnconnected) {
  Variable x(Tensor::Vector<double>({2, 5}), "x");
  GradientTape tape;
  Tensor z = ReduceSum(Exp(StopGradient(Square(x.value()))));

  EXPECT_FALSE(tape.Gradient(z, x).has_value());
}

TEST(GradientTapeTest, WatchedTensorGetsGradientUnwatchedDoesNot) {
  Tensor a = Tensor::Vector<double>({1, 2});
  Tensor c = Tensor::Vector<double>({3, 4});
  GradientTape tape;
  tape.Watch(a);
  // Copies are the same tensor: the copy is what this test is about.
  const Tensor copy_of_a = a;  // NOLINT(performance-unnecessary-copy-initialization)
  // Exp(c) touches nothing watched, so it is not recorded: c is a constant.
  Tensor z = ReduceSum(Add(Mul(copy_of_a, copy_of_a), Exp(c)));

  std::vector<std::optional<Tensor>> grads = tape.Gradient(z, {a, c});

  EXPECT_THAT(Values(grads[0]), ElementsAre(2, 4));
  EXPECT_FALSE(grads[1].has_value());
}

TEST(GradientTapeTest, UnwatchedInputOfRecordedOpGetsGradientAsTensorFlow) {
  // TF's tape accumulates the gradient of every input of an op it recorded
  // (tape.h ComputeGradient), so tape.gradient(z, b) is a * 1 here although
  // b was never watched.
  Tensor a = Tensor::Vector<double>({1, 2});
  Tensor b = Tensor::Vector<double>({3, 4});
  GradientTape tape;
  tape.Watch(a);
  Tensor z = ReduceSum(Mul(a, b));

  std::vector<std::optional<Tensor>> grads = tape.Gradient(z, {a, b});

  EXPECT_THAT(Values(grads[0]), ElementsAre(3, 4));
  EXPECT_THAT(Values(grads[1]), ElementsAre(1, 2));
}

TEST(GradientTapeTest, GradientOfTargetWithRespectToItselfIsOutputGradient) {
  Tensor a = Tensor::Vector<double>({1, 2});
  GradientTape tape;
  std::vector<std::optional<Tensor>> grads =
      tape.Gradient(a, {a}, UnconnectedGradients::kNone, Tensor::Vector<double>({5, 6}));
  EXPECT_THAT(Values(grads[0]), ElementsAre(5, 6));
}

TEST(GradientTapeTest, GradientWithRespectToIntermediateTensor) {
  Tensor x = Tensor::Scalar<double>(3);
  GradientTape tape;
  tape.Watch(x);
  Tensor y = Square(x);  // 9
  Tensor z = Mul(y, y);  // y^2 = x^4
  std::vector<std::optional<Tensor>> grads = tape.Gradient(z, {y, x});
  EXPECT_THAT(Values(grads[0]), ElementsAre(18));   // 2y
  EXPECT_THAT(Values(grads[1]), ElementsAre(108));  // 4x^3
}

TEST(GradientTapeTest, NonTrainableVariablesAreNotWatchedAutomatically) {
  Variable w(Tensor::Vector<double>({2}), "w");
  Variable frozen(Tensor::Vector<double>({3}), "frozen", /*trainable=*/false);
  GradientTape tape(/*persistent=*/true);
  Tensor z = Mul(w.value(), frozen.value());

  EXPECT_THAT(tape.WatchedVariables(), ElementsAre(&w));
  EXPECT_THAT(Values(tape.Gradient(z, w)), ElementsAre(3));
  EXPECT_FALSE(tape.Gradient(z, frozen).has_value());
}

TEST(GradientTapeTest, WatchMakesNonTrainableVariableDifferentiable) {
  Variable w(Tensor::Vector<double>({2}), "w");
  Variable frozen(Tensor::Vector<double>({3}), "frozen", /*trainable=*/false);
  GradientTape tape;
  tape.Watch(frozen);
  Tensor z = Mul(w.value(), frozen.value());

  EXPECT_THAT(tape.WatchedVariables(), ElementsAre(&frozen, &w));
  std::vector<std::optional<Tensor>> grads = tape.Gradient(z, {&w, &frozen});
  EXPECT_THAT(Values(grads[0]), ElementsAre(3));
  EXPECT_THAT(Values(grads[1]), ElementsAre(2));
}

TEST(GradientTapeTest, WatchAccessedVariablesFalseWatchesOnlyExplicitly) {
  Variable a(Tensor::Vector<double>({2}), "a");
  Variable b(Tensor::Vector<double>({3}), "b");
  GradientTape tape(/*persistent=*/false, /*watch_accessed_variables=*/false);
  tape.Watch(b);
  Tensor z = Mul(a.value(), b.value());

  EXPECT_THAT(tape.WatchedVariables(), ElementsAre(&b));
  std::vector<std::optional<Tensor>> grads = tape.Gradient(z, {&a, &b});
  EXPECT_FALSE(grads[0].has_value());
  EXPECT_THAT(Values(grads[1]), ElementsAre(2));
}

TEST(GradientTapeTest, ReadsBeforeWatchAreNotTracked) {
  Variable a(Tensor::Vector<double>({2}), "a");
  GradientTape tape(/*persistent=*/false, /*watch_accessed_variables=*/false);
  Tensor early = a.value();
  Tensor z1 = Square(early);
  tape.Watch(a);
  // The same value id is read again after Watch, so from now on it counts,
  // but Square above was not recorded: only the new Mul contributes.
  Tensor z = Add(z1, Mul(a.value(), Tensor::Vector<double>({10})));
  EXPECT_THAT(Values(tape.Gradient(z, a)), ElementsAre(10));
}

TEST(GradientTapeTest, ReusedTensorGradientsAreSummed) {
  Tensor x = Tensor::Vector<double>({3, -1});
  GradientTape tape;
  tape.Watch(x);
  // y = x + x + x*x: dy/dx = 2 + 2x.
  Tensor y = ReduceSum(Add(Add(x, x), Mul(x, x)));
  EXPECT_THAT(Values(tape.Gradient(y, {x})[0]), ElementsAre(8, 0));
}

TEST(GradientTapeTest, VariableReadSeveralTimesSumsGradients) {
  Variable v(Tensor::Vector<double>({2}), "v");
  GradientTape tape;
  // Three separate reads: z = v * v + exp(v).
  Tensor z = Add(Mul(v.value(), v.value()), Exp(v.value()));
  EXPECT_THAT(Values(tape.Gradient(z, v)), ElementsAre(DoubleNear(4 + std::exp(2.0), 1e-12)));
}

TEST(GradientTapeTest, VariableAssignedMidTapeCountsBothValues) {
  Variable v(Tensor::Scalar<double>(2), "v");
  GradientTape tape;
  Tensor before = Mul(v.value(), Tensor::Scalar<double>(5));  // d/dv = 5 (first value)
  v.Assign(Tensor::Scalar<double>(3));
  Tensor after = Square(v.value());  // d/dv = 2 * 3 (second value)
  Tensor z = Add(before, after);

  EXPECT_DOUBLE_EQ(z.scalar<double>(), 10 + 9);
  EXPECT_THAT(Values(tape.Gradient(z, v)), ElementsAre(5 + 6));
}

TEST(GradientTapeTest, OutputGradientWeightsTheTarget) {
  Variable x(Tensor::Vector<double>({1, 2, 3}), "x");
  GradientTape tape;
  Tensor y = Square(x.value());
  std::vector<std::optional<Tensor>> grads =
      tape.Gradient(y, {&x}, UnconnectedGradients::kNone, Tensor::Vector<double>({1, 10, 100}));
  EXPECT_THAT(Values(grads[0]), ElementsAre(2, 40, 600));
}

TEST(GradientTapeTest, OutputGradientOfWrongShapeThrows) {
  Variable x(Tensor::Vector<double>({1, 2, 3}), "x");
  GradientTape tape;
  Tensor y = Square(x.value());
  try {
    (void)tape.Gradient(y, {&x}, UnconnectedGradients::kNone, Tensor::Vector<double>({1, 2}));
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("output_gradient"));
    EXPECT_THAT(e.what(), HasSubstr("[2]"));
    EXPECT_THAT(e.what(), HasSubstr("[3]"));
  }
}

TEST(GradientTapeTest, IntegerTargetsAndSourcesGetNoGradient) {
  Variable f(Tensor::Vector<double>({1.5, 2.5}), "f");
  Variable i(Tensor::Vector<int32_t>({1, 2}), "i");
  GradientTape tape(/*persistent=*/true);
  tape.Watch(i);
  Tensor as_int = Cast(f.value(), DType::kInt32);
  Tensor int_target = Add(as_int, i.value());
  Tensor float_target = ReduceSum(Mul(Cast(int_target, DType::kFloat64), f.value()));

  std::vector<std::optional<Tensor>> from_int = tape.Gradient(int_target, {&f, &i});
  EXPECT_FALSE(from_int[0].has_value());
  EXPECT_FALSE(from_int[1].has_value());
  // Only the direct use of f counts: the path through int32 carries nothing.
  std::vector<std::optional<Tensor>> from_float = tape.Gradient(float_target, {&f, &i});
  EXPECT_THAT(Values(from_float[0]), ElementsAre(2, 4));
  EXPECT_FALSE(from_float[1].has_value());
  // kZero gives zeros of the source's own dtype.
  std::vector<std::optional<Tensor>> zeros =
      tape.Gradient(float_target, {&i}, UnconnectedGradients::kZero);
  ASSERT_TRUE(zeros[0].has_value());
  EXPECT_EQ(zeros[0]->dtype(), DType::kInt32);
  EXPECT_THAT(zeros[0]->ToVector<int32_t>(), ElementsAre(0, 0));
}

TEST(GradientTapeTest, StopRecordingSuspendsTheTape) {
  Variable x(Tensor::Scalar<double>(2), "x");
  Variable hidden(Tensor::Scalar<double>(7), "hidden");
  GradientTape tape(/*persistent=*/true);
  Tensor a = Square(x.value());
  Tensor b;
  {
    GradientTape::StopRecording stop(tape);
    b = Mul(a, hidden.value());  // neither recorded nor watched
  }
  Tensor c = Mul(a, x.value());

  EXPECT_FALSE(tape.Gradient(b, x).has_value());
  EXPECT_THAT(Values(tape.Gradient(c, x)), ElementsAre(12));  // d/dx x^3
  EXPECT_THAT(tape.WatchedVariables(), ElementsAre(&x));
}

TEST(GradientTapeTest, TapeSeesOnlyOpsWhileAlive) {
  Variable x(Tensor::Scalar<double>(2), "x");
  Tensor before = Square(x.value());
  GradientTape tape;
  Tensor z = Mul(before, x.value());  // before is a constant to this tape
  EXPECT_THAT(Values(tape.Gradient(z, x)), ElementsAre(4));
}

TEST(GradientTapeTest, SiblingTapesRecordIndependently) {
  Variable x(Tensor::Scalar<double>(2), "x");
  Variable y(Tensor::Scalar<double>(5), "y");
  GradientTape tx(/*persistent=*/false, /*watch_accessed_variables=*/false);
  GradientTape ty(/*persistent=*/false, /*watch_accessed_variables=*/false);
  tx.Watch(x);
  ty.Watch(y);
  Tensor z = Mul(Square(x.value()), y.value());
  EXPECT_THAT(Values(tx.Gradient(z, x)), ElementsAre(20));
  EXPECT_THAT(Values(ty.Gradient(z, y)), ElementsAre(4));
}

// A two-layer MLP's mean sparse softmax cross entropy, differentiated by the
// tape and by central differences on every parameter element, in float64.
class GradientTapeFiniteDifferenceTest : public ::testing::Test {
 protected:
  static Tensor Param(std::vector<double> values, const Shape& shape) {
    return Tensor::FromVector<double>(std::move(values), shape);
  }

  // Values away from ReLU's kink so that h = 1e-6 stays on one side.
  Variable x_{Param({0.5, -1.2, 0.3, 1.1, 0.8, -0.4, -0.7, 0.2, 1.5, 0.9, -1.1, 0.6}, Shape{4, 3}),
              "x", /*trainable=*/false};
  Variable w1_{
      Param({0.4, -0.6, 0.9, 0.1, -0.3, 0.7, 0.5, -0.8, 0.2, 0.6, -0.9, 0.3, 0.8, -0.2, 0.4},
            Shape{3, 5}),
      "w1"};
  Variable b1_{Param({0.05, -0.1, 0.15, 0.2, -0.05}, Shape{5}), "b1"};
  Variable w2_{
      Param({0.3, -0.7, 0.5, -0.4, 0.6, 0.2, 0.9, -0.1, -0.5, 0.1, 0.8, -0.6, -0.2, 0.4, 0.7},
            Shape{5, 3}),
      "w2"};
  Variable b2_{Param({0.1, 0.0, -0.1}, Shape{3}), "b2"};
  Tensor labels_ = Tensor::Vector<int32_t>({2, 0, 1, 2});

  Tensor Loss() {
    Tensor hidden = Relu(Add(MatMul(x_.value(), w1_.value()), b1_.value()));
    Tensor logits = Add(MatMul(hidden, w2_.value()), b2_.value());
    return ReduceMean(SparseSoftmaxCrossEntropyWithLogits(labels_, logits));
  }

  std::vector<double> CentralDifferences(Variable& v) {
    constexpr double kH = 1e-6;
    const Tensor original = v.value();
    std::vector<double> values = original.ToVector<double>();
    std::vector<double> result;
    for (size_t i = 0; i < values.size(); ++i) {
      std::vector<double> plus = values, minus = values;
      plus[i] += kH;
      minus[i] -= kH;
      v.Assign(Param(plus, v.shape()));
      const double f_plus = Loss().scalar<double>();
      v.Assign(Param(minus, v.shape()));
      const double f_minus = Loss().scalar<double>();
      result.push_back((f_plus - f_minus) / (2 * kH));
    }
    v.Assign(original);
    return result;
  }
};

TEST_F(GradientTapeFiniteDifferenceTest, MlpLossGradientsMatchCentralDifferences) {
  std::vector<std::optional<Tensor>> grads;
  {
    GradientTape tape;
    Tensor loss = Loss();
    // In read order, which C++ leaves unspecified within one expression.
    EXPECT_THAT(tape.WatchedVariables(), UnorderedElementsAre(&w1_, &b1_, &w2_, &b2_));
    grads = tape.Gradient(loss, {&w1_, &b1_, &w2_, &b2_, &x_});
  }
  Variable* params[] = {&w1_, &b1_, &w2_, &b2_};
  for (int p = 0; p < 4; ++p) {
    SCOPED_TRACE(params[p]->name());
    ASSERT_TRUE(grads[p].has_value());
    EXPECT_EQ(grads[p]->shape(), params[p]->shape());
    std::vector<double> numeric = CentralDifferences(*params[p]);
    EXPECT_THAT(Values(grads[p]), Pointwise(DoubleNear(1e-8), numeric));
  }
  // x is not trainable and was not watched.
  EXPECT_FALSE(grads[4].has_value());
}

}  // namespace
}  // namespace eager
