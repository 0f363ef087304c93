#include "runtime/dtype.h"

#include <gtest/gtest.h>

#include <cctype>
#include <complex>
#include <string>
#include <vector>

#include "runtime/variant.h"

namespace eager {
namespace {

TEST(DTypeTest, TensorFlowEnumValuesMatchTypesProto) {
  EXPECT_EQ(TfDataType(DType::kFloat32), 1);
  EXPECT_EQ(TfDataType(DType::kFloat64), 2);
  EXPECT_EQ(TfDataType(DType::kInt32), 3);
  EXPECT_EQ(TfDataType(DType::kString), 7);
  EXPECT_EQ(TfDataType(DType::kInt64), 9);
  EXPECT_EQ(TfDataType(DType::kBool), 10);
  // types.proto: DT_UINT8 = 4, DT_INT16 = 5, DT_INT8 = 6, DT_COMPLEX64 = 8,
  // DT_BFLOAT16 = 14, DT_UINT16 = 17, DT_COMPLEX128 = 18, DT_HALF = 19,
  // DT_UINT32 = 22, DT_UINT64 = 23.
  EXPECT_EQ(TfDataType(DType::kUInt8), 4);
  EXPECT_EQ(TfDataType(DType::kInt16), 5);
  EXPECT_EQ(TfDataType(DType::kInt8), 6);
  EXPECT_EQ(TfDataType(DType::kComplex64), 8);
  EXPECT_EQ(TfDataType(DType::kBFloat16), 14);
  EXPECT_EQ(TfDataType(DType::kUInt16), 17);
  EXPECT_EQ(TfDataType(DType::kComplex128), 18);
  EXPECT_EQ(TfDataType(DType::kHalf), 19);
  EXPECT_EQ(TfDataType(DType::kUInt32), 22);
  EXPECT_EQ(TfDataType(DType::kUInt64), 23);
  EXPECT_EQ(TfDataType(DType::kVariant), 21);
}

// Every dtype, from the enum's range (so a new one cannot be forgotten here).
std::vector<DType> AllDTypes() {
  std::vector<DType> all;
  all.reserve(kNumDTypes);
  for (int i = 0; i < kNumDTypes; ++i) all.push_back(static_cast<DType>(i));
  return all;
}

TEST(DTypeTest, EveryDTypeHasItsTensorFlowNameAndElementSize) {
  for (DType d : AllDTypes()) {
    // TF's DataType name is DT_ + the tf.DType name, upper-cased, except the
    // historical DT_FLOAT, DT_DOUBLE and DT_HALF.
    std::string expected = "DT_";
    for (char c : DTypeName(d)) expected += static_cast<char>(std::toupper(c));
    if (d == DType::kFloat32) expected = "DT_FLOAT";
    if (d == DType::kFloat64) expected = "DT_DOUBLE";
    if (d == DType::kHalf) expected = "DT_HALF";
    EXPECT_EQ(TfDataTypeName(TfDataType(d)), expected) << d;
  }
  EXPECT_EQ(DTypeSize(DType::kHalf), 2u);
  EXPECT_EQ(DTypeSize(DType::kBFloat16), 2u);
  EXPECT_EQ(DTypeSize(DType::kComplex64), 8u);
  EXPECT_EQ(DTypeSize(DType::kComplex128), 16u);
  EXPECT_EQ(DTypeSize(DType::kInt8), 1u);
  EXPECT_EQ(DTypeSize(DType::kUInt16), 2u);
  EXPECT_EQ(DTypeSize(DType::kUInt32), 4u);
  EXPECT_EQ(DTypeSize(DType::kUInt64), 8u);
}

TEST(DTypeTest, RoundTripsThroughTensorFlowValues) {
  for (DType d : AllDTypes()) {
    EXPECT_EQ(DTypeFromTfDataType(TfDataType(d)), d) << d;
  }
  EXPECT_EQ(DTypeFromTfDataType(19), DType::kHalf);
  EXPECT_EQ(DTypeFromTfDataType(0), std::nullopt);
  EXPECT_EQ(DTypeFromTfDataType(21), DType::kVariant);  // TensorLists (runtime/variant.h)
  EXPECT_EQ(DTypeFromTfDataType(20), std::nullopt);     // DT_RESOURCE
  EXPECT_EQ(DTypeFromTfDataType(11), std::nullopt);     // DT_QINT8
}

TEST(DTypeTest, NamesAndSizes) {
  EXPECT_EQ(DTypeName(DType::kFloat32), "float32");
  EXPECT_EQ(DTypeName(DType::kInt64), "int64");
  EXPECT_EQ(DTypeSize(DType::kFloat64), 8u);
  EXPECT_EQ(DTypeSize(DType::kBool), 1u);
  EXPECT_EQ(TfDataTypeName(19), "DT_HALF");
  EXPECT_EQ(TfDataTypeName(101), "DT_FLOAT_REF");
  EXPECT_EQ(TfDataTypeName(999), "DataType(999)");
}

// types.proto's values, and the bytes per element TF's tensor_bundle stores
// for them (DataTypeSize in TF's types.cc: 0 for the variable-length ones).
TEST(DTypeTest, TensorFlowDataTypesEagerLacksHaveTheirNamesAndSizes) {
  EXPECT_EQ(TfDataTypeName(0), "DT_INVALID");
  EXPECT_EQ(TfDataTypeName(11), "DT_QINT8");
  EXPECT_EQ(TfDataTypeName(16), "DT_QUINT16");
  EXPECT_EQ(TfDataTypeName(21), "DT_VARIANT");
  EXPECT_EQ(TfDataTypeName(120), "DT_RESOURCE_REF");
  EXPECT_EQ(TfDataTypeName(100), "DataType(100)");
  EXPECT_EQ(TfDataTypeName(124), "DataType(124)");
  EXPECT_EQ(TfDataTypeName(-1), "DataType(-1)");
  EXPECT_EQ(TfDataTypeSize(1), 4);    // DT_FLOAT
  EXPECT_EQ(TfDataTypeSize(10), 1);   // DT_BOOL
  EXPECT_EQ(TfDataTypeSize(12), 1);   // DT_QUINT8
  EXPECT_EQ(TfDataTypeSize(13), 4);   // DT_QINT32
  EXPECT_EQ(TfDataTypeSize(15), 2);   // DT_QINT16
  EXPECT_EQ(TfDataTypeSize(18), 16);  // DT_COMPLEX128
  EXPECT_EQ(TfDataTypeSize(23), 8);   // DT_UINT64
  for (int variable : {0, 7, 20, 21, 24, 101, -3})
    EXPECT_EQ(TfDataTypeSize(variable), 0) << variable;
  for (DType d : AllDTypes()) {
    if (d == DType::kString || d == DType::kVariant) continue;  // no fixed size on disk
    EXPECT_EQ(TfDataTypeSize(TfDataType(d)), static_cast<int>(DTypeSize(d))) << d;
  }
}

// op_def.proto's type names, as TF's op registrations write them.
TEST(DTypeTest, OpDefTypeNamesGiveTheirDataTypes) {
  EXPECT_EQ(TfDataTypeFromOpDefName("float"), 1);
  EXPECT_EQ(TfDataTypeFromOpDefName("double"), 2);
  EXPECT_EQ(TfDataTypeFromOpDefName("half"), 19);
  EXPECT_EQ(TfDataTypeFromOpDefName("bfloat16"), 14);
  EXPECT_EQ(TfDataTypeFromOpDefName("quint16"), 16);
  EXPECT_EQ(TfDataTypeFromOpDefName("resource"), 20);
  EXPECT_EQ(TfDataTypeFromOpDefName("uint64"), 23);
  EXPECT_EQ(TfDataTypeFromOpDefName("float32"), std::nullopt);  // tf.DType.name, not op_def's
  EXPECT_EQ(TfDataTypeFromOpDefName(""), std::nullopt);
  EXPECT_EQ(TfDataTypeFromOpDefName("DT_FLOAT"), std::nullopt);
}

// DTypeOf is constexpr: checked when this file compiles, not when it runs.
static_assert(DTypeOf<float>() == DType::kFloat32);
static_assert(DTypeOf<double>() == DType::kFloat64);
static_assert(DTypeOf<int32_t>() == DType::kInt32);
static_assert(DTypeOf<int64_t>() == DType::kInt64);
static_assert(DTypeOf<bool>() == DType::kBool);
static_assert(DTypeOf<std::string>() == DType::kString);
static_assert(DTypeOf<Half>() == DType::kHalf);
static_assert(DTypeOf<BFloat16>() == DType::kBFloat16);
static_assert(DTypeOf<std::complex<float>>() == DType::kComplex64);
static_assert(DTypeOf<std::complex<double>>() == DType::kComplex128);
static_assert(DTypeOf<int8_t>() == DType::kInt8);
static_assert(DTypeOf<uint8_t>() == DType::kUInt8);
static_assert(DTypeOf<uint64_t>() == DType::kUInt64);
static_assert(DTypeOf<Variant>() == DType::kVariant);

TEST(DTypeTest, VisitDTypeAndDTypeOfAgreeForEveryDType) {
  for (DType dtype : AllDTypes()) {
    if (dtype == DType::kVariant) continue;  // refused: see the next test
    const DType round_trip =
        VisitDType(dtype, [](auto tag) { return DTypeOf<typename decltype(tag)::type>(); });
    EXPECT_EQ(round_trip, dtype) << DTypeName(dtype);
    const size_t size =
        VisitDType(dtype, [](auto tag) { return sizeof(typename decltype(tag)::type); });
    EXPECT_EQ(size, DTypeSize(dtype)) << DTypeName(dtype);
  }
}

// A variant's elements are opaque values (runtime/variant.h): kernels that
// visit dtypes to compute on elements refuse them, naming the dtype.
TEST(DTypeTest, VisitDTypeRefusesVariantsAndItsSizeIsAVariantsSize) {
  try {
    VisitDType(DType::kVariant, [](auto) { return 0; });
    FAIL() << "expected UnimplementedError";
  } catch (const UnimplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("DT_VARIANT"), std::string::npos) << e.what();
  }
  EXPECT_EQ(DTypeSize(DType::kVariant), sizeof(Variant));
  EXPECT_EQ(DTypeName(DType::kVariant), "variant");
}

TEST(DTypeTest, VisitDTypeDispatchesToTheCppType) {
  size_t size =
      VisitDType(DType::kInt64, [](auto tag) { return sizeof(typename decltype(tag)::type); });
  EXPECT_EQ(size, 8u);
}

TEST(DTypeTest, VisitFloatDTypeRejectsIntegersNamingTheCaller) {
  try {
    VisitFloatDType(DType::kInt32, "Exp", [](auto) { return 0; });
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("Exp"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("int32"), std::string::npos);
  }
}

}  // namespace
}  // namespace eager
