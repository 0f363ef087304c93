#include "saving/saver/internal/closest_keys.h"

#include <gtest/gtest.h>

namespace eager::internal {
namespace {

KeySpec Spec(std::string key, std::vector<int64_t> dims, DType dtype = DType::kFloat32) {
  return {std::move(key), dtype, std::move(dims)};
}

TEST(ClosestKeysTest, CharEditDistanceIsLevenshtein) {
  EXPECT_EQ(CharEditDistance("", ""), 0);
  EXPECT_EQ(CharEditDistance("kitten", "sitting"), 3);
  EXPECT_EQ(CharEditDistance("dense_1", "dense"), 2);
  EXPECT_EQ(CharEditDistance("abc", ""), 3);
}

TEST(ClosestKeysTest, ScopeDistanceWeighsPartsByTheirOwnEditDistance) {
  EXPECT_DOUBLE_EQ(ScopeDistance("dense/kernel", "dense/kernel"), 0.0);
  EXPECT_DOUBLE_EQ(ScopeDistance("dense_1/kernel", "dense/kernel"), 2.0 / 7.0);
  EXPECT_DOUBLE_EQ(ScopeDistance("model/dense/kernel", "dense/kernel"), 1.0);  // one part more
  // A renamed scope costs less than a different variable in the same scope.
  EXPECT_LT(ScopeDistance("dense_1/kernel", "dense/kernel"),
            ScopeDistance("dense_1/kernel", "dense_1/bias"));
}

TEST(ClosestKeysTest, EqualDistanceRanksEqualDtypeAndShapeFirst) {
  const std::vector<KeySpec> present = {Spec("a/x", {3}), Spec("a/y", {2}), Spec("b/zz", {2})};
  const std::vector<KeyCandidate> close = ClosestKeys(Spec("a/z", {2}), present, {}, 2);
  ASSERT_EQ(close.size(), 2u);
  EXPECT_EQ(close[0].key, "a/y");  // same distance as a/x, but same shape
  EXPECT_TRUE(close[0].same_dtype_and_shape);
  EXPECT_EQ(close[1].key, "a/x");
  EXPECT_FALSE(close[1].same_dtype_and_shape);
  // Taken keys are never offered.
  EXPECT_EQ(ClosestKeys(Spec("a/z", {2}), present, {"a/y"}, 1)[0].key, "a/x");
}

TEST(ClosestKeysTest, ProposeRenamesGivesEachKeyOnceAndOnlyCompatibleOnes) {
  const std::vector<KeySpec> present = {Spec("dense/kernel", {4, 3}), Spec("dense/bias", {3}),
                                        Spec("step", {}, DType::kInt64)};
  const std::vector<KeySpec> missing = {Spec("dense_1/kernel", {4, 3}), Spec("dense_1/bias", {3}),
                                        Spec("dense_1/extra", {3}), Spec("counter", {})};
  const std::map<std::string, std::string> renames = ProposeRenames(missing, present, {});
  EXPECT_EQ(renames, (std::map<std::string, std::string>{{"dense_1/bias", "dense/bias"},
                                                         {"dense_1/kernel", "dense/kernel"}}));
}

}  // namespace
}  // namespace eager::internal
