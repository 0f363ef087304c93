// Keras's merge layers (autodiff/layers/merging.h): values against
// arithmetic done here, gradients against central finite differences, and
// the errors naming the layer.

#include "autodiff/layers/merging.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autodiff/gradient_tape.h"
#include "ops/binary_ops.h"
#include "ops/reduction_ops.h"
#include "runtime/errors.h"

namespace eager {
namespace {

Tensor Doubles(std::vector<double> v, const Shape& shape) {
  return Tensor::FromVector<double>(std::move(v), shape);
}

TEST(MergingLayersTest, ElementwiseValues) {
  const Tensor x = Tensor::FromVector<float>({1, -2, 3, 4}, Shape{2, 2});
  const Tensor y = Tensor::FromVector<float>({5, 6, -7, 8}, Shape{2, 2});
  const Tensor z = Tensor::FromVector<float>({2, 2, 2, 2}, Shape{2, 2});
  using V = std::vector<float>;
  EXPECT_EQ(layers::Add()({x, y, z}).ToVector<float>(), (V{8, 6, -2, 14}));
  EXPECT_EQ(layers::Subtract()({x, y}).ToVector<float>(), (V{-4, -8, 10, -4}));
  EXPECT_EQ(layers::Multiply()({x, y, z}).ToVector<float>(), (V{10, -24, -42, 64}));
  EXPECT_EQ(layers::Average()({x, y}).ToVector<float>(), (V{3, 2, -2, 6}));
  EXPECT_EQ(layers::Maximum()({x, y, z}).ToVector<float>(), (V{5, 6, 3, 8}));
  EXPECT_EQ(layers::Minimum()({x, y, z}).ToVector<float>(), (V{1, -2, -7, 2}));
  // Keras's broadcasting of dimensions of 1.
  const Tensor row = Tensor::FromVector<float>({10, 20}, Shape{1, 2});
  EXPECT_EQ(layers::Add()({x, row}).ToVector<float>(), (V{11, 18, 13, 24}));
}

TEST(MergingLayersTest, ConcatenateAlongAnyAxis) {
  const Tensor x = Tensor::FromVector<float>({1, 2, 3, 4}, Shape{2, 2});
  const Tensor y = Tensor::FromVector<float>({5, 6}, Shape{2, 1});
  layers::Concatenate last;
  const Tensor c = last({x, y});
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(c.ToVector<float>(), (std::vector<float>{1, 2, 5, 3, 4, 6}));
  EXPECT_EQ(last.name().rfind("concatenate", 0), 0u);
  const Tensor rows = layers::Concatenate(0)({x, Tensor::FromVector<float>({7, 8}, Shape{1, 2})});
  EXPECT_EQ(rows.shape(), (Shape{3, 2}));
  EXPECT_EQ(rows.ToVector<float>(), (std::vector<float>{1, 2, 3, 4, 7, 8}));
}

TEST(MergingLayersTest, BadInputsNameTheLayerAndShapes) {
  const Tensor x = Tensor::Zeros(Shape{2, 3});
  layers::Concatenate concat(-1, "join");
  try {
    concat({x, Tensor::Zeros(Shape{3, 3})});
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("Concatenate 'join': input 1 of shape [3,3]"),
              std::string::npos)
        << e.what();
  }
  layers::Add add("sum");
  try {
    add({x, Tensor::Zeros(Shape{2, 4})});
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'sum': input 1 of shape [2,4]"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(add({x, Tensor::Zeros(Shape{2, 3}, DType::kFloat64)}), InvalidArgumentError);
  EXPECT_THROW(layers::Subtract()({x, x, x}), InvalidArgumentError);
  // A merge layer called on one tensor, as a plain Layer.
  Layer& as_layer = add;
  EXPECT_THROW(as_layer(x), InvalidArgumentError);
}

// d sum(w * merge(x, y)) / dx and / dy by the tape, against central
// differences in float64.
void ExpectFiniteDifferenceGradients(layers::MultiInputLayer& layer) {
  SCOPED_TRACE(layer.name());
  // Distinct values, so Maximum/Minimum have no ties within the step.
  const std::vector<double> xv{0.3, -1.2, 2.5, 0.7, -0.4, 1.9};
  const std::vector<double> yv{-0.8, 0.6, 1.1, 2.2, -1.5, 0.2};
  const Tensor w = Doubles({1.5, -0.5, 2.0, 0.25, -1.0, 0.75}, Shape{2, 3});
  const auto loss = [&](const std::vector<double>& a, const std::vector<double>& b) {
    return ReduceSum(Mul(w, layer({Doubles(a, Shape{2, 3}), Doubles(b, Shape{2, 3})})));
  };
  const Tensor x = Doubles(xv, Shape{2, 3});
  const Tensor y = Doubles(yv, Shape{2, 3});
  std::vector<std::optional<Tensor>> grads;
  {
    GradientTape tape;
    tape.Watch(x);
    tape.Watch(y);
    grads = tape.Gradient(ReduceSum(Mul(w, layer({x, y}))), {x, y});
  }
  ASSERT_TRUE(grads[0] && grads[1]);
  const double h = 1e-6;
  for (int which = 0; which < 2; ++which) {
    const std::vector<double> got = grads[which]->ToVector<double>();
    for (size_t i = 0; i < xv.size(); ++i) {
      std::vector<double> a = xv, b = yv, c = xv, d = yv;
      (which == 0 ? a : b)[i] += h;
      (which == 0 ? c : d)[i] -= h;
      const double fd =
          (loss(a, b).ToVector<double>()[0] - loss(c, d).ToVector<double>()[0]) / (2 * h);
      EXPECT_NEAR(got[i], fd, 1e-6) << "input " << which << " element " << i;
    }
  }
}

TEST(MergingLayersTest, GradientsMatchFiniteDifferences) {
  layers::Concatenate concat;
  layers::Add add;
  layers::Subtract subtract;
  layers::Multiply multiply;
  layers::Average average;
  layers::Maximum maximum;
  layers::Minimum minimum;
  for (layers::MultiInputLayer* layer : std::vector<layers::MultiInputLayer*>{
           &concat, &add, &subtract, &multiply, &average, &maximum, &minimum}) {
    if (layer == &concat) {
      // Concatenate's output is [2, 6]: weight it with its own w.
      const Tensor x = Doubles({1, 2, 3, 4, 5, 6}, Shape{2, 3});
      const Tensor y = Doubles({7, 8, 9, 10, 11, 12}, Shape{2, 3});
      const Tensor w = Doubles({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Shape{2, 6});
      GradientTape tape;
      tape.Watch(x);
      tape.Watch(y);
      const auto grads = tape.Gradient(ReduceSum(Mul(w, concat({x, y}))), {x, y});
      ASSERT_TRUE(grads[0] && grads[1]);
      EXPECT_EQ(grads[0]->ToVector<double>(), (std::vector<double>{1, 2, 3, 7, 8, 9}));
      EXPECT_EQ(grads[1]->ToVector<double>(), (std::vector<double>{4, 5, 6, 10, 11, 12}));
      continue;
    }
    ExpectFiniteDifferenceGradients(*layer);
  }
}

}  // namespace
}  // namespace eager
