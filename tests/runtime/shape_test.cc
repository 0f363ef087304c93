#include "runtime/shape.h"

#include <gtest/gtest.h>

#include "runtime/errors.h"

namespace eager {
namespace {

TEST(ShapeTest, ScalarHasRankZeroAndOneElement) {
  Shape s;
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.num_elements(), 1);
  EXPECT_EQ(s.ToString(), "[]");
}

TEST(ShapeTest, CountsElementsAndPrintsLikeTensorFlow) {
  Shape s{2, 3, 4};
  EXPECT_EQ(s.rank(), 3);
  EXPECT_EQ(s.num_elements(), 24);
  EXPECT_EQ(s.ToString(), "[2,3,4]");
  EXPECT_EQ(s.Strides(), (std::vector<int64_t>{12, 4, 1}));
}

TEST(ShapeTest, ZeroSizedDimensionMeansNoElements) { EXPECT_EQ((Shape{3, 0}).num_elements(), 0); }

TEST(ShapeTest, RejectsNegativeDimensions) { EXPECT_THROW((Shape{2, -1}), InvalidArgumentError); }

TEST(ShapeTest, RejectsElementCountOverflow) {
  EXPECT_THROW((Shape{int64_t{1} << 40, int64_t{1} << 40}), InvalidArgumentError);
}

TEST(ShapeTest, NormalizesNegativeAxesAndRejectsOutOfRange) {
  Shape s{2, 3};
  EXPECT_EQ(s.NormalizeAxis(-1), 1);
  EXPECT_EQ(s.dim_at(-2), 2);
  try {
    s.NormalizeAxis(2);
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("[2,3]"), std::string::npos) << e.what();
  }
}

TEST(ShapeTest, EqualityComparesDims) {
  EXPECT_EQ((Shape{2, 3}), (Shape{2, 3}));
  EXPECT_NE((Shape{2, 3}), (Shape{3, 2}));
  EXPECT_NE((Shape{6}), (Shape{6, 1}));
}

}  // namespace
}  // namespace eager
