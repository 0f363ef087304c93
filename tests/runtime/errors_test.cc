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
  EXPECT_EQ(static_cast<int>(ErrorCode::kDeadlineExceeded), 4);
  EXPECT_EQ(ErrorCodeName(ErrorCode::kDeadlineExceeded), "DeadlineExceeded");
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

// ThrowError raises the kind its code names (checked by dynamic type, not
// only by code()), so a caught error raised again keeps its catch clause.
template <typename Kind>
void ExpectThrowsKind(ErrorCode code) {
  try {
    ThrowError(code, "message");
  } catch (const Kind& e) {
    EXPECT_EQ(e.code(), code);
    EXPECT_STREQ(e.what(), "message");
    return;
  } catch (...) {
  }
  ADD_FAILURE() << "ThrowError(" << ErrorCodeName(code) << ") threw another kind";
}

TEST(ErrorsTest, ThrowErrorRaisesTheKindItsCodeNames) {
  ExpectThrowsKind<InvalidArgumentError>(ErrorCode::kInvalidArgument);
  ExpectThrowsKind<NotFoundError>(ErrorCode::kNotFound);
  ExpectThrowsKind<DeadlineExceededError>(ErrorCode::kDeadlineExceeded);
  ExpectThrowsKind<ResourceExhaustedError>(ErrorCode::kResourceExhausted);
  ExpectThrowsKind<FailedPreconditionError>(ErrorCode::kFailedPrecondition);
  ExpectThrowsKind<OutOfRangeError>(ErrorCode::kOutOfRange);
  ExpectThrowsKind<UnimplementedError>(ErrorCode::kUnimplemented);
  ExpectThrowsKind<InternalError>(ErrorCode::kInternal);
  ExpectThrowsKind<DataLossError>(ErrorCode::kDataLoss);
}

}  // namespace
}  // namespace eager
