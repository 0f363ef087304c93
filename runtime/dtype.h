#pragma once

// DType: the element types a Tensor can hold, with their TensorFlow identities.
//
// The dtype facts (names, TensorFlow DataType enum values and names, the
// bytes a checkpoint stores per element, for TF's dtypes eager lacks too)
// live in one table in dtype.cc; kDTypeSizes below is its in-memory size
// column, inline for speed and checked against the table and sizeof. The
// Visit*DType() functions below are the only switches over DType: code that
// needs the C++ type of a runtime dtype goes through one, so a new dtype fails
// to build where it matters (-Werror=switch).

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>

#include "runtime/errors.h"
#include "runtime/half.h"

namespace eager {

class Variant;  // runtime/variant.h

enum class DType : uint8_t {
  kFloat32,
  kFloat64,
  kInt32,
  kInt64,
  kBool,
  kString,  // elements are std::string
  // Storage dtypes: every other element type TensorFlow writes to checkpoints.
  // Tensors of these are stored, read, written, printed, reshaped, sliced,
  // gathered and Cast; eager's arithmetic kernels take the four above.
  kHalf,        // eager::Half (runtime/half.h), DT_HALF
  kBFloat16,    // eager::BFloat16, DT_BFLOAT16
  kComplex64,   // std::complex<float>, (real, imag)
  kComplex128,  // std::complex<double>
  kInt8,
  kInt16,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  // DT_VARIANT: elements are eager::Variant (runtime/variant.h), TensorLists.
  // Carried through graphs and function calls; only the TensorList ops
  // (ops/list_ops.h) compute on them.
  kVariant,
};
inline constexpr int kNumDTypes = static_cast<int>(DType::kVariant) + 1;

// tf.DType.name: "float32", "float64", "int32", "int64", "bool", "string",
// "float16", "bfloat16", "complex64", "complex128", "int8", "int16", "uint8",
// "uint16", "uint32", "uint64".
std::string_view DTypeName(DType dtype);
// Bytes per element; for kString this is sizeof(std::string) (in memory only).
// Inline (defined below): every op output's allocation asks for it.
size_t DTypeSize(DType dtype);
// TensorFlow's DataType enum value (types.proto, FORMAT.md 2.5): DT_FLOAT = 1,
// DT_DOUBLE = 2, DT_INT32 = 3, DT_STRING = 7, DT_INT64 = 9, DT_BOOL = 10,
// DT_HALF = 19, DT_BFLOAT16 = 14, DT_COMPLEX64 = 8, ...
int TfDataType(DType dtype);
// The DType for a TensorFlow DataType value, or nullopt when eager has none.
std::optional<DType> DTypeFromTfDataType(int tf_datatype);
// TensorFlow's name of a DataType value ("DT_HALF"), also for ones we lack.
std::string TfDataTypeName(int tf_datatype);
// Bytes per element TensorFlow stores for a DataType value: 4 for DT_FLOAT,
// 1 for DT_QINT8, ...; 0 for DT_STRING, DT_RESOURCE, DT_VARIANT (variable
// length or handles), reference types and values TensorFlow lacks.
int TfDataTypeSize(int tf_datatype);
// The DataType value of a type name as TF's op definitions write it
// ("float", "half", "qint8", "resource"), or nullopt.
std::optional<int> TfDataTypeFromOpDefName(std::string_view name);

// The dtypes eager computes in: IsFloating is float32/float64 only (what
// gradients, optimizers and the float kernels take), not float16/bfloat16.
inline bool IsFloating(DType d) { return d == DType::kFloat32 || d == DType::kFloat64; }

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
  else if constexpr (std::is_same_v<T, Half>)
    return DType::kHalf;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return DType::kBFloat16;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return DType::kComplex64;
  else if constexpr (std::is_same_v<T, std::complex<double>>)
    return DType::kComplex128;
  else if constexpr (std::is_same_v<T, int8_t>)
    return DType::kInt8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return DType::kInt16;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return DType::kUInt8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return DType::kUInt16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return DType::kUInt32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return DType::kUInt64;
  else if constexpr (std::is_same_v<T, Variant>)
    return DType::kVariant;
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
    case DType::kHalf:
      return f(DTypeTag<Half>{});
    case DType::kBFloat16:
      return f(DTypeTag<BFloat16>{});
    case DType::kComplex64:
      return f(DTypeTag<std::complex<float>>{});
    case DType::kComplex128:
      return f(DTypeTag<std::complex<double>>{});
    case DType::kInt8:
      return f(DTypeTag<int8_t>{});
    case DType::kInt16:
      return f(DTypeTag<int16_t>{});
    case DType::kUInt8:
      return f(DTypeTag<uint8_t>{});
    case DType::kUInt16:
      return f(DTypeTag<uint16_t>{});
    case DType::kUInt32:
      return f(DTypeTag<uint32_t>{});
    case DType::kUInt64:
      return f(DTypeTag<uint64_t>{});
    case DType::kVariant:
      // Kernels that visit dtypes compute on elements; a variant's elements
      // are opaque values only the TensorList ops read (runtime/variant.h).
      throw UnimplementedError(
          "a variant (DT_VARIANT) tensor here: eager computes on variant tensors only in the "
          "TensorList ops; other ops take numeric, bool and string tensors");
  }
  throw InternalError(StrCat("VisitDType: invalid dtype value ", static_cast<int>(dtype)));
}

// sizeof(Variant): one shared_ptr (runtime/variant.h static_asserts it).
inline constexpr uint8_t kVariantSize = 2 * sizeof(void*);
// DTypeSize's table, by enum value; dtype.cc checks it against sizeof of
// each C++ type.
inline constexpr std::array<uint8_t, kNumDTypes> kDTypeSizes = {
    4, 8, 4, 8, 1, sizeof(std::string), 2, 2, 8, 16, 1, 2, 1, 2, 4, 8, kVariantSize};
[[noreturn]] void ThrowInvalidDType(DType dtype);

inline size_t DTypeSize(DType dtype) {
  const auto index = static_cast<size_t>(dtype);
  if (index >= kDTypeSizes.size()) [[unlikely]]
    ThrowInvalidDType(dtype);
  return kDTypeSizes[index];
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
    case DType::kHalf:
    case DType::kBFloat16:
    case DType::kComplex64:
    case DType::kComplex128:
    case DType::kInt8:
    case DType::kInt16:
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
    case DType::kVariant:
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
    case DType::kHalf:
    case DType::kBFloat16:
    case DType::kComplex64:
    case DType::kComplex128:
    case DType::kInt8:
    case DType::kInt16:
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
    case DType::kVariant:
      break;
  }
  throw InvalidArgumentError(
      StrCat(what, ": expected a floating dtype (float32 or float64), got ", dtype));
}

}  // namespace eager
