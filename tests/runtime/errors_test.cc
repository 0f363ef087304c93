#include "runtime/errors.h"

#include <gtest/gtest.h>

namespace eager {
namespace {

TEST(ErrorsTest, KindsCarryTensorFlowCodes) {
  EXPECT_EQ(InvalidArgumentError("x").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(NotFoundError("x").code(), ErrorCode::kNotFound);
  EXPECT_EQ(DataLossError("x").code(), ErrorCode::kDataLoss);
  EXPECT_EQ(static_cast<int>(ErrorCode::kFailedPrecondition), 9);
  EXPECT_EQ(ErrorCodeName(ErrorCode::kDataLoss), "DataLoss");
}

TEST(ErrorsTest, CheckThrowsInvalidArgumentWithConcatenatedMessage) {
  try {
    EAGER_CHECK(1 + 1 == 3, "expected ", 3, " got ", 2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_STREQ(e.what(), "expected 3 got 2");
  }
}

TEST(ErrorsTest, InternalCheckNamesTheCondition) {
  try {
    EAGER_INTERNAL_CHECK(sizeof(int) == 0);
    FAIL();
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("sizeof(int) == 0"), std::string::npos);
  }
}

}  // namespace
}  // namespace eager
