#pragma once

// The small model the object-based checkpoint tests train, save and restore:
// one lazily built Dense(3) under the local name "dense", stepped with Adam.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "autodiff/adam.h"
#include "autodiff/dense.h"
#include "autodiff/module.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "ops/unary_ops.h"
#include "runtime/variable.h"

namespace eager::testing {

struct MyModel : Module {
  Dense dense{3};
  MyModel() { Track("dense", dense); }
  Tensor operator()(const Tensor& x) { return dense(x); }
};

// A [2, dim] batch, the same for the same seed.
inline Tensor Input(int64_t dim = 4, uint64_t seed = 7) {
  return RandomNormal(Shape{2, dim}, seed);
}

// One Adam step on mean(model(x)^2); the first call builds the model and
// makes Adam's slots.
inline void TrainStep(MyModel& model, Adam& optimizer, const Tensor& x) {
  model(x);  // builds
  optimizer.Minimize([&] { return ReduceMean(Square(model(x))); }, model.TrainableVariables());
}

// Every variable of a model trained with Adam, for a name-based save: the
// model's, Adam's m and v slots, and its iterations and hyper-parameters.
inline std::vector<Variable*> ModelAndAdamVariables(Module& model, Adam& optimizer) {
  std::vector<Variable*> vars = model.Variables();
  for (Variable* v : model.TrainableVariables()) {
    vars.push_back(optimizer.GetSlot(*v, "m"));
    vars.push_back(optimizer.GetSlot(*v, "v"));
  }
  for (const Trackable::Child& child : optimizer.Children()) {
    if (auto* v = dynamic_cast<Variable*>(child.object)) vars.push_back(v);
  }
  return vars;
}

// Same dtype, shape and bytes.
inline void ExpectSameValue(const Variable& a, const Variable& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  const auto x = a.value().bytes();
  const auto y = b.value().bytes();
  EXPECT_TRUE(std::equal(x.begin(), x.end(), y.begin(), y.end()))
      << a.name() << " " << a.value().DebugString() << " vs " << b.name() << " "
      << b.value().DebugString();
}

}  // namespace eager::testing
