#include "runtime/dtype.h"

#include <array>

namespace eager {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  size_t size;
  int tf_datatype;
};

// Indexed by the enum value; the static_assert below keeps it in step.
constexpr std::array<DTypeInfo, 6> kDTypeInfo = {{
    {DType::kFloat32, "float32", sizeof(float), 1},
    {DType::kFloat64, "float64", sizeof(double), 2},
    {DType::kInt32, "int32", sizeof(int32_t), 3},
    {DType::kInt64, "int64", sizeof(int64_t), 9},
    {DType::kBool, "bool", sizeof(bool), 10},
    {DType::kString, "string", sizeof(std::string), 7},
}};
static_assert(kDTypeInfo.size() == static_cast<size_t>(DType::kString) + 1);

const DTypeInfo& Info(DType dtype) {
  const auto index = static_cast<size_t>(dtype);
  if (index >= kDTypeInfo.size()) {
    throw InternalError(StrCat("invalid DType value ", index));
  }
  return kDTypeInfo[index];
}

}  // namespace

std::string_view DTypeName(DType dtype) { return Info(dtype).name; }
size_t DTypeSize(DType dtype) { return Info(dtype).size; }
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
