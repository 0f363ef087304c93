// OwnCopiesOfHeldValues: an asynchronous save lets go of the values
// their variables still hold, keeping copies, largest first within a budget.

#include "saving/checkpoint/internal/own_copies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "runtime/tensor_access.h"
#include "runtime/variable.h"
#include "tests/saving/saving_test_util.h"

namespace eager::internal {
namespace {

using ::eager::testing::OtherHolders;
using ::testing::ElementsAre;

std::vector<float> Floats(size_t n, float first) {
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = first + static_cast<float>(i);
  return values;
}

TEST(OwnCopiesTest, HeldValuesAreCopiedAndLetGoOfWithTheSameValues) {
  Variable kernel(Tensor::FromVector<float>(Floats(1000, 0.5f)), "kernel");
  Variable bias(Tensor::FromVector<float>(Floats(10, -3.0f)), "bias");
  std::vector<std::pair<std::string, Tensor>> tensors = {{"kernel", kernel.value()},
                                                         {"bias", bias.value()}};
  ASSERT_EQ(OtherHolders(kernel), 1);
  const void* kernel_buffer = RawData(kernel.value());

  const std::vector<bool> copied = OwnCopiesOfHeldValues(tensors);

  EXPECT_THAT(copied, ElementsAre(true, true));
  EXPECT_EQ(OtherHolders(kernel), 0);
  EXPECT_EQ(OtherHolders(bias), 0);
  EXPECT_EQ(RawData(kernel.value()), kernel_buffer);  // the variable's own buffer is untouched
  EXPECT_NE(RawData(tensors[0].second), kernel_buffer);
  EXPECT_EQ(tensors[0].first, "kernel");
  EXPECT_EQ(tensors[0].second.shape(), kernel.shape());
  EXPECT_EQ(tensors[0].second.ToVector<float>(), Floats(1000, 0.5f));
  EXPECT_EQ(tensors[1].second.ToVector<float>(), Floats(10, -3.0f));
  // Nobody else sees the copies.
  EXPECT_EQ(BufferOf(tensors[0].second).use_count(), 1);
}

TEST(OwnCopiesTest, ValuesOnlyTheSaveHoldsAndStringsAreLeftAsTheyAre) {
  Tensor alone = Tensor::FromVector<float>(Floats(100, 1.0f));  // its variable let go of it
  Variable names(Tensor::FromVector<std::string>({"a", "bc"}), "names");
  std::vector<std::pair<std::string, Tensor>> tensors = {{"alone", alone},
                                                         {"names", names.value()}};
  const void* alone_buffer = RawData(alone);
  alone = Tensor();
  const std::vector<bool> copied = OwnCopiesOfHeldValues(tensors);
  EXPECT_THAT(copied, ElementsAre(false, false));
  EXPECT_EQ(RawData(tensors[0].second), alone_buffer);
  EXPECT_EQ(OtherHolders(names), 1);
}

TEST(OwnCopiesTest, LargestFirstWithinTheBudget) {
  Variable small(Tensor::FromVector<float>(Floats(25, 0)), "small");    // 100 bytes
  Variable large(Tensor::FromVector<float>(Floats(100, 0)), "large");   // 400 bytes
  Variable medium(Tensor::FromVector<float>(Floats(75, 0)), "medium");  // 300 bytes
  auto held = [&] {
    return std::vector<std::pair<std::string, Tensor>>{
        {"small", small.value()}, {"large", large.value()}, {"medium", medium.value()}};
  };
  {
    auto tensors = held();
    // 400 fits (50 left); 300 and 100 do not.
    EXPECT_THAT(OwnCopiesOfHeldValues(tensors, 450), ElementsAre(false, true, false));
    EXPECT_EQ(OtherHolders(large), 0);
    EXPECT_EQ(OtherHolders(medium), 1);
    EXPECT_EQ(OtherHolders(small), 1);
  }
  {
    auto tensors = held();
    // 400 (100 left), not 300, then 100.
    EXPECT_THAT(OwnCopiesOfHeldValues(tensors, 500), ElementsAre(true, true, false));
  }
  {
    auto tensors = held();
    EXPECT_THAT(OwnCopiesOfHeldValues(tensors, 0), ElementsAre(false, false, false));
  }
}

// Streaming stores: whole 64-byte lines of the destination, plain stores
// before the first line boundary and after the last.
TEST(OwnCopiesTest, CopyBypassingCachesCopiesEveryByteAndNoOther) {
  std::vector<unsigned char> source(1024);
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<unsigned char>(i * 7 + 3);
  for (size_t to_offset : {0, 1, 17, 63}) {
    for (size_t from_offset : {0, 5, 64}) {
      for (size_t bytes : {0, 1, 63, 64, 65, 127, 128, 300, 700}) {
        alignas(64) unsigned char destination[1024 + 128];
        std::memset(destination, 0xAB, sizeof(destination));
        CopyBypassingCaches(destination + to_offset, source.data() + from_offset, bytes);
        for (size_t i = 0; i < sizeof(destination); ++i) {
          const bool inside = i >= to_offset && i < to_offset + bytes;
          ASSERT_EQ(destination[i], inside ? source[i - to_offset + from_offset] : 0xAB)
              << "to+" << to_offset << " from+" << from_offset << " bytes " << bytes << " at " << i;
        }
      }
    }
  }
}

// 4004 bytes: whole 64-byte lines with streaming stores and a partial one.
TEST(OwnCopiesTest, ALengthOfPartialLinesGivesTheSameCopies) {
  Variable kernel(Tensor::FromVector<float>(Floats(1001, 0.25f)), "kernel");
  std::vector<std::pair<std::string, Tensor>> tensors = {{"kernel", kernel.value()}};
  EXPECT_THAT(OwnCopiesOfHeldValues(tensors), ElementsAre(true));
  EXPECT_EQ(OtherHolders(kernel), 0);
  EXPECT_EQ(tensors[0].second.ToVector<float>(), Floats(1001, 0.25f));
}

}  // namespace
}  // namespace eager::internal
