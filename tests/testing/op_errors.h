#pragma once

// Small helpers the op tests share. Header-only (tests/testing/numeric_
// gradient.h says why).

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/errors.h"
#include "runtime/tensor.h"

namespace eager::testing {

// The message of the InvalidArgumentError `f` throws, or "no error" (any
// other exception passes through and fails the test).
inline std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "no error";
}

// int32 0, 1, 2, ... of `shape`: values that show where each element went.
inline Tensor IotaInt32(const Shape& shape) {
  std::vector<int32_t> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i);
  return Tensor::FromVector<int32_t>(std::move(v), shape);
}

}  // namespace eager::testing
