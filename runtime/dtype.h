#pragma once

// DType: the element types a Tensor can hold, with their TensorFlow identities.
//
// Per-dtype facts (name, element size, TensorFlow DataType enum value) live in
// one table in dtype.cc. The Visit*DType() functions below are the only
// switches over DType: code that needs the C++ type of a runtime dtype goes
// through one, so a new dtype fails to build where it matters (-Werror=switch).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>

#include "runtime/errors.h"

namespace eager {

enum class DType : uint8_t {
  kFloat32,
  kFloat64,
  kInt32,
  kInt64,
  kBool,
  kString,  // elements are std::string
};

// "float32", "float64", "int32", "int64", "bool", "string" (tf.DType.name).
std::string_view DTypeName(DType dtype);
// Bytes per element; for kString this is sizeof(std::string) (in memory only).
size_t DTypeSize(DType dtype);
// TensorFlow's DataType enum value (types.proto): DT_FLOAT = 1, DT_DOUBLE = 2,
// DT_INT32 = 3, DT_STRING = 7, DT_INT64 = 9, DT_BOOL = 10.
int TfDataType(DType dtype);
// The DType for a TensorFlow DataType value, or nullopt when eager has none.
std::optional<DType> DTypeFromTfDataType(int tf_datatype);
// TensorFlow's name of a DataType value ("DT_HALF"), also for ones we lack.
std::string TfDataTypeName(int tf_datatype);

inline bool IsFloating(DType d) { return d == DType::kFloat32 || d == DType::kFloat64; }
inline bool IsInteger(DType d) { return d == DType::kInt32 || d == DType::kInt64; }
inline bool IsNumeric(DType d) { return IsFloating(d) || IsInteger(d); }

std::ostream& operator<<(std::ostream& out, DType dtype);

// The DType of a C++ element type: DTypeOf<float>() == DType::kFloat32.
template <typename T>
constexpr DType DTypeOf() {
  if constexpr (std::is_same_v<T, float>)
    return DType::kFloat32;
  else if constexpr (std::is_same_v<T, double>)
    return DType::kFloat64;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DType::kInt32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DType::kInt64;
  else if constexpr (std::is_same_v<T, bool>)
    return DType::kBool;
  else if constexpr (std::is_same_v<T, std::string>)
    return DType::kString;
  else
    static_assert(!sizeof(T), "no eager DType for this C++ type");
}

// A value of this type carries the C++ element type to a generic lambda:
//   VisitDType(t.dtype(), [&](auto tag) { using T = typename decltype(tag)::type; ... });
template <typename T>
struct DTypeTag {
  using type = T;
};

template <typename F>
decltype(auto) VisitDType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32:
      return f(DTypeTag<float>{});
    case DType::kFloat64:
      return f(DTypeTag<double>{});
    case DType::kInt32:
      return f(DTypeTag<int32_t>{});
    case DType::kInt64:
      return f(DTypeTag<int64_t>{});
    case DType::kBool:
      return f(DTypeTag<bool>{});
    case DType::kString:
      return f(DTypeTag<std::string>{});
  }
  throw InternalError(StrCat("VisitDType: invalid dtype value ", static_cast<int>(dtype)));
}

// As VisitDType, but only for the numeric dtypes (float32/64, int32/64);
// anything else throws InvalidArgumentError naming `what` and the dtype.
template <typename F>
decltype(auto) VisitNumericDType(DType dtype, std::string_view what, F&& f) {
  switch (dtype) {
    case DType::kFloat32:
      return f(DTypeTag<float>{});
    case DType::kFloat64:
      return f(DTypeTag<double>{});
    case DType::kInt32:
      return f(DTypeTag<int32_t>{});
    case DType::kInt64:
      return f(DTypeTag<int64_t>{});
    case DType::kBool:
    case DType::kString:
      break;
  }
  throw InvalidArgumentError(
      StrCat(what, ": expected a numeric dtype (float32, float64, int32, int64), got ", dtype));
}

// As VisitDType, but only for float32 and float64.
template <typename F>
decltype(auto) VisitFloatDType(DType dtype, std::string_view what, F&& f) {
  switch (dtype) {
    case DType::kFloat32:
      return f(DTypeTag<float>{});
    case DType::kFloat64:
      return f(DTypeTag<double>{});
    case DType::kInt32:
    case DType::kInt64:
    case DType::kBool:
    case DType::kString:
      break;
  }
  throw InvalidArgumentError(
      StrCat(what, ": expected a floating dtype (float32 or float64), got ", dtype));
}

}  // namespace eager
