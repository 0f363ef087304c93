#pragma once

// Comparing tensors in tests: the same bits, or the largest relative error.
// Header-only (tests/testing/numeric_gradient.h says why).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/array_ops.h"
#include "runtime/tensor.h"

namespace eager::testing {

// Same dtype, shape and bytes: what "bit for bit" claims mean.
inline bool SameBits(const Tensor& x, const Tensor& y) {
  return x.dtype() == y.dtype() && x.shape() == y.shape() &&
         std::memcmp(x.bytes().data(), y.bytes().data(), x.bytes().size()) == 0;
}

// The largest |a - b| / (1 + |b|) over the elements, in float64; a shape
// mismatch fails the calling test.
inline double WorstError(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  const std::vector<double> x = Cast(a, DType::kFloat64).ToVector<double>();
  const std::vector<double> y = Cast(b, DType::kFloat64).ToVector<double>();
  double worst = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    worst = std::max(worst, std::abs(x[i] - y[i]) / (1 + std::abs(y[i])));
  }
  return worst;
}

}  // namespace eager::testing
