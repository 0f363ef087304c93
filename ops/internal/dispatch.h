#pragma once

// Dtype checks and dispatch for kernels and shape rules. Private to ops/.
//
// A kernel is written once as a generic lambda over the element type; Dispatch
// instantiates it only for the dtypes of its DTypeSet, so an op never has to
// compile (or be wrong) for a type it does not support. Shape rules call
// CheckDTypeIn first, so reaching a dtype outside the set in Dispatch is an
// eager bug (InternalError), not a user error.

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "runtime/dtype.h"
#include "runtime/errors.h"
#include "runtime/tensor.h"

namespace eager::internal {

enum class DTypeSet {
  kFloat,          // float32, float64
  kNumeric,        // float32, float64, int32, int64
  kNumericOrBool,  // the numeric dtypes and bool
  kIndex,          // int32, int64
  kBool,           // bool (the logical ops)
};

constexpr bool DTypeIn(DType dtype, DTypeSet set) {
  const bool is_float = dtype == DType::kFloat32 || dtype == DType::kFloat64;
  const bool is_int = dtype == DType::kInt32 || dtype == DType::kInt64;
  switch (set) {
    case DTypeSet::kFloat:
      return is_float;
    case DTypeSet::kNumeric:
      return is_float || is_int;
    case DTypeSet::kNumericOrBool:
      return is_float || is_int || dtype == DType::kBool;
    case DTypeSet::kIndex:
      return is_int;
    case DTypeSet::kBool:
      return dtype == DType::kBool;
  }
  return false;
}

// "float32 or float64", ... for error messages.
std::string_view DTypeSetName(DTypeSet set);

// The errors of the checks below, out of line: the checks run on every op.
[[noreturn]] void ThrowDTypeNotIn(const Tensor& t, std::string_view what, DTypeSet set);
[[noreturn]] void ThrowDTypesDiffer(const Tensor& x, const Tensor& y, std::string_view x_name,
                                    std::string_view y_name);

// Throws InvalidArgumentError "<what> has dtype int32 (shape [2]); expected
// float32 or float64" unless t's dtype is in `set`.
inline void CheckDTypeIn(const Tensor& t, std::string_view what, DTypeSet set) {
  if (!DTypeIn(t.dtype(), set)) [[unlikely]] {
    ThrowDTypeNotIn(t, what, set);
  }
}

// Throws InvalidArgumentError naming both dtypes and shapes unless x and y
// have the same dtype.
inline void CheckSameDType(const Tensor& x, const Tensor& y, std::string_view x_name = "x",
                           std::string_view y_name = "y") {
  if (x.dtype() != y.dtype()) [[unlikely]] {
    ThrowDTypesDiffer(x, y, x_name, y_name);
  }
}

// Calls f(DTypeTag<T>{}) for the C++ type of `dtype`, instantiating f only
// for the types in `kSet`. f's result is discarded; capture outputs instead.
template <DTypeSet kSet, typename F>
void Dispatch(DType dtype, F&& f) {
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (DTypeIn(DTypeOf<T>(), kSet)) {
      f(tag);
    } else {
      throw InternalError(StrCat("kernel reached with unsupported dtype ", DTypeOf<T>(),
                                 "; its shape rule should have rejected it"));
    }
  });
}

// An axis attribute normalized against `rank` ("axis 3 is out of range for
// a tensor of rank 2 (shape [2,3])" otherwise).
// An axis outside int's range (-2^63 from a graph's int64 input) is out of
// range too, not truncated to one that fits.
inline int NormalizeAxis(int64_t axis, const Shape& shape) {
  if (axis < -Shape::kMaxRank - 1 || axis > Shape::kMaxRank) {
    throw InvalidArgumentError(StrCat("axis ", axis, " is out of range for a tensor of rank ",
                                      shape.rank(), " (shape ", shape, "); expected axis in [",
                                      -shape.rank(), ", ", shape.rank(), ")"));
  }
  return shape.NormalizeAxis(static_cast<int>(axis));
}

}  // namespace eager::internal
