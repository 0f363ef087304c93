#include "runtime/dtype.h"

#include <gtest/gtest.h>

namespace eager {
namespace {

TEST(DTypeTest, TensorFlowEnumValuesMatchTypesProto) {
  EXPECT_EQ(TfDataType(DType::kFloat32), 1);
  EXPECT_EQ(TfDataType(DType::kFloat64), 2);
  EXPECT_EQ(TfDataType(DType::kInt32), 3);
  EXPECT_EQ(TfDataType(DType::kString), 7);
  EXPECT_EQ(TfDataType(DType::kInt64), 9);
  EXPECT_EQ(TfDataType(DType::kBool), 10);
}

TEST(DTypeTest, RoundTripsThroughTensorFlowValues) {
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kBool,
                  DType::kString}) {
    EXPECT_EQ(DTypeFromTfDataType(TfDataType(d)), d) << d;
  }
  EXPECT_EQ(DTypeFromTfDataType(19), std::nullopt);  // DT_HALF: not supported
  EXPECT_EQ(DTypeFromTfDataType(0), std::nullopt);
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

// DTypeOf is constexpr: checked when this file compiles, not when it runs.
static_assert(DTypeOf<float>() == DType::kFloat32);
static_assert(DTypeOf<double>() == DType::kFloat64);
static_assert(DTypeOf<int32_t>() == DType::kInt32);
static_assert(DTypeOf<int64_t>() == DType::kInt64);
static_assert(DTypeOf<bool>() == DType::kBool);
static_assert(DTypeOf<std::string>() == DType::kString);

TEST(DTypeTest, VisitDTypeAndDTypeOfAgreeForEveryDType) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kBool,
                      DType::kString}) {
    const DType round_trip =
        VisitDType(dtype, [](auto tag) { return DTypeOf<typename decltype(tag)::type>(); });
    EXPECT_EQ(round_trip, dtype) << DTypeName(dtype);
  }
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
