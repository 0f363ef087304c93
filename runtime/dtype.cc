#include "runtime/dtype.h"

#include <array>

#include "runtime/variant.h"

namespace eager {
namespace {

// TensorFlow's DataType enum (types.proto, FORMAT.md 2.5), one row per value
// 0..23 (reference types are value + 100): every dtype fact eager uses comes
// from this table.
struct TfDataTypeRow {
  std::string_view enum_name;    // "DT_FLOAT"
  std::string_view op_def_name;  // as op definitions write it: "float"
  std::string_view name;         // tf.DType.name: "float32"
  int bytes;                     // stored per element; 0: variable length or a handle
  std::optional<DType> dtype;    // eager's, when it has one
};

// Indexed by the DataType value; the static_assert below keeps it in step.
constexpr std::array<TfDataTypeRow, 24> kTfDataTypes = {{
    {"DT_INVALID", "", "", 0, std::nullopt},
    {"DT_FLOAT", "float", "float32", 4, DType::kFloat32},
    {"DT_DOUBLE", "double", "float64", 8, DType::kFloat64},
    {"DT_INT32", "int32", "int32", 4, DType::kInt32},
    {"DT_UINT8", "uint8", "uint8", 1, DType::kUInt8},
    {"DT_INT16", "int16", "int16", 2, DType::kInt16},
    {"DT_INT8", "int8", "int8", 1, DType::kInt8},
    {"DT_STRING", "string", "string", 0, DType::kString},
    {"DT_COMPLEX64", "complex64", "complex64", 8, DType::kComplex64},
    {"DT_INT64", "int64", "int64", 8, DType::kInt64},
    {"DT_BOOL", "bool", "bool", 1, DType::kBool},
    {"DT_QINT8", "qint8", "qint8", 1, std::nullopt},
    {"DT_QUINT8", "quint8", "quint8", 1, std::nullopt},
    {"DT_QINT32", "qint32", "qint32", 4, std::nullopt},
    {"DT_BFLOAT16", "bfloat16", "bfloat16", 2, DType::kBFloat16},
    {"DT_QINT16", "qint16", "qint16", 2, std::nullopt},
    {"DT_QUINT16", "quint16", "quint16", 2, std::nullopt},
    {"DT_UINT16", "uint16", "uint16", 2, DType::kUInt16},
    {"DT_COMPLEX128", "complex128", "complex128", 16, DType::kComplex128},
    {"DT_HALF", "half", "float16", 2, DType::kHalf},
    {"DT_RESOURCE", "resource", "resource", 0, std::nullopt},
    {"DT_VARIANT", "variant", "variant", 0, DType::kVariant},
    {"DT_UINT32", "uint32", "uint32", 4, DType::kUInt32},
    {"DT_UINT64", "uint64", "uint64", 8, DType::kUInt64},
}};

constexpr bool EnumNamesAreInValueOrder() {
  // Spot checks of the order: a row out of place shifts every value after it.
  return kTfDataTypes[1].enum_name == "DT_FLOAT" && kTfDataTypes[9].enum_name == "DT_INT64" &&
         kTfDataTypes[14].enum_name == "DT_BFLOAT16" && kTfDataTypes[19].enum_name == "DT_HALF" &&
         kTfDataTypes[23].enum_name == "DT_UINT64";
}
static_assert(EnumNamesAreInValueOrder());

// Each eager DType's row (its DataType value), derived from the table.
constexpr std::array<int, kNumDTypes> kTfValueOfDType = [] {
  std::array<int, kNumDTypes> out{};
  for (size_t value = 0; value < kTfDataTypes.size(); ++value) {
    if (kTfDataTypes[value].dtype)
      out[static_cast<size_t>(*kTfDataTypes[value].dtype)] = static_cast<int>(value);
  }
  return out;
}();

// Every DType has exactly one row, and its in-memory size (kDTypeSizes,
// dtype.h, inline for speed) is the size a checkpoint stores per element,
// except kString's (a std::string in memory, variable length on disk) and
// kVariant's (a Variant in memory; no fixed layout on disk).
constexpr bool EveryDTypeHasOneRowOfItsSize() {
  int rows = 0;
  for (const TfDataTypeRow& row : kTfDataTypes) {
    if (!row.dtype) continue;
    ++rows;
    const auto d = static_cast<size_t>(*row.dtype);
    if (*row.dtype != DType::kString && *row.dtype != DType::kVariant &&
        static_cast<int>(kDTypeSizes[d]) != row.bytes) {
      return false;
    }
  }
  return rows == kNumDTypes;
}
static_assert(EveryDTypeHasOneRowOfItsSize());
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
                              uint16_t, uint32_t, uint64_t, Variant>());

const TfDataTypeRow& Row(DType dtype) {
  return kTfDataTypes[static_cast<size_t>(TfDataType(dtype))];
}

// The row of a DataType value, or nullptr (a reference type, an unknown value).
const TfDataTypeRow* Row(int tf_datatype) {
  if (tf_datatype < 0 || tf_datatype >= static_cast<int>(kTfDataTypes.size())) return nullptr;
  return &kTfDataTypes[static_cast<size_t>(tf_datatype)];
}

}  // namespace

void ThrowInvalidDType(DType dtype) {
  throw InternalError(StrCat("invalid DType value ", static_cast<int>(dtype)));
}

std::string_view DTypeName(DType dtype) { return Row(dtype).name; }
int TfDataType(DType dtype) {
  const auto index = static_cast<size_t>(dtype);
  if (index >= kTfValueOfDType.size()) ThrowInvalidDType(dtype);
  return kTfValueOfDType[index];
}

std::optional<DType> DTypeFromTfDataType(int tf_datatype) {
  const TfDataTypeRow* row = Row(tf_datatype);
  return row != nullptr ? row->dtype : std::nullopt;
}

int TfDataTypeSize(int tf_datatype) {
  const TfDataTypeRow* row = Row(tf_datatype);
  return row != nullptr ? row->bytes : 0;
}

std::optional<int> TfDataTypeFromOpDefName(std::string_view name) {
  for (size_t value = 1; value < kTfDataTypes.size(); ++value) {
    if (kTfDataTypes[value].op_def_name == name) return static_cast<int>(value);
  }
  return std::nullopt;
}

std::string TfDataTypeName(int tf_datatype) {
  if (const TfDataTypeRow* row = Row(tf_datatype)) return std::string(row->enum_name);
  // Reference types (DT_FLOAT_REF = 101, ...).
  if (const TfDataTypeRow* row = Row(tf_datatype - 100); row != nullptr && tf_datatype > 100) {
    return StrCat(row->enum_name, "_REF");
  }
  return StrCat("DataType(", tf_datatype, ")");
}

std::ostream& operator<<(std::ostream& out, DType dtype) { return out << DTypeName(dtype); }

}  // namespace eager
