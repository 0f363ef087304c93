#include "runtime/dtype.h"

#include <array>

namespace eager {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  int tf_datatype;
};

// Indexed by the enum value; the static_assert below keeps it in step.
constexpr std::array<DTypeInfo, kNumDTypes> kDTypeInfo = {{
    {DType::kFloat32, "float32", 1},
    {DType::kFloat64, "float64", 2},
    {DType::kInt32, "int32", 3},
    {DType::kInt64, "int64", 9},
    {DType::kBool, "bool", 10},
    {DType::kString, "string", 7},
    {DType::kHalf, "float16", 19},
    {DType::kBFloat16, "bfloat16", 14},
    {DType::kComplex64, "complex64", 8},
    {DType::kComplex128, "complex128", 18},
    {DType::kInt8, "int8", 6},
    {DType::kInt16, "int16", 5},
    {DType::kUInt8, "uint8", 4},
    {DType::kUInt16, "uint16", 17},
    {DType::kUInt32, "uint32", 22},
    {DType::kUInt64, "uint64", 23},
}};

constexpr bool TableIsIndexedByDType() {
  for (size_t i = 0; i < kDTypeInfo.size(); ++i) {
    if (static_cast<size_t>(kDTypeInfo[i].dtype) != i) return false;
  }
  return true;
}
static_assert(TableIsIndexedByDType());
// The bytes a checkpoint stores per element (FORMAT.md 2.5), and so a
// tensor's in-memory layout: std::complex is (real, imag) by the standard.
static_assert(sizeof(std::complex<float>) == 8 && sizeof(std::complex<double>) == 16);

// kDTypeSizes (dtype.h) holds sizeof each dtype's C++ type, listed here in
// enum order.
template <typename... T>
constexpr bool SizesMatchTypes() {
  size_t i = 0;
  return sizeof...(T) == kDTypeSizes.size() &&
         ((static_cast<size_t>(DTypeOf<T>()) == i && kDTypeSizes[i++] == sizeof(T)) && ...);
}
static_assert(SizesMatchTypes<float, double, int32_t, int64_t, bool, std::string, Half, BFloat16,
                              std::complex<float>, std::complex<double>, int8_t, int16_t, uint8_t,
                              uint16_t, uint32_t, uint64_t>());

const DTypeInfo& Info(DType dtype) {
  const auto index = static_cast<size_t>(dtype);
  if (index >= kDTypeInfo.size()) ThrowInvalidDType(dtype);
  return kDTypeInfo[index];
}

}  // namespace

void ThrowInvalidDType(DType dtype) {
  throw InternalError(StrCat("invalid DType value ", static_cast<int>(dtype)));
}

std::string_view DTypeName(DType dtype) { return Info(dtype).name; }
int TfDataType(DType dtype) { return Info(dtype).tf_datatype; }

std::optional<DType> DTypeFromTfDataType(int tf_datatype) {
  for (const DTypeInfo& info : kDTypeInfo) {
    if (info.tf_datatype == tf_datatype) return info.dtype;
  }
  return std::nullopt;
}

std::string TfDataTypeName(int tf_datatype) {
  // types.proto, values 0..23; reference types are value + 100.
  static constexpr std::array<std::string_view, 24> kNames = {
      "DT_INVALID",    "DT_FLOAT",  "DT_DOUBLE",    "DT_INT32",   "DT_UINT8",   "DT_INT16",
      "DT_INT8",       "DT_STRING", "DT_COMPLEX64", "DT_INT64",   "DT_BOOL",    "DT_QINT8",
      "DT_QUINT8",     "DT_QINT32", "DT_BFLOAT16",  "DT_QINT16",  "DT_QUINT16", "DT_UINT16",
      "DT_COMPLEX128", "DT_HALF",   "DT_RESOURCE",  "DT_VARIANT", "DT_UINT32",  "DT_UINT64"};
  if (tf_datatype >= 0 && tf_datatype < static_cast<int>(kNames.size())) {
    return std::string(kNames[tf_datatype]);
  }
  if (tf_datatype > 100 && tf_datatype < 100 + static_cast<int>(kNames.size())) {
    return StrCat(kNames[tf_datatype - 100], "_REF");
  }
  return StrCat("DataType(", tf_datatype, ")");
}

std::ostream& operator<<(std::ostream& out, DType dtype) { return out << DTypeName(dtype); }

}  // namespace eager
