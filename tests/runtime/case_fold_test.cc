#include "runtime/internal/case_fold.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

namespace eager::internal {
namespace {

// The eight-byte fold against the byte one, for every byte value in every
// position, next to random neighbours (a carry would spill into them).
TEST(CaseFoldTest, WordFoldIsTheByteFoldInEveryLane) {
  std::mt19937_64 random(27);
  for (int value = 0; value < 256; ++value) {
    for (int lane = 0; lane < 8; ++lane) {
      char bytes[8];
      const uint64_t noise = random();
      std::memcpy(bytes, &noise, 8);
      bytes[lane] = static_cast<char>(value);
      uint64_t word = 0;
      std::memcpy(&word, bytes, 8);
      const uint64_t folded = FoldCaseWord(word);
      char got[8];
      std::memcpy(got, &folded, 8);
      for (int i = 0; i < 8; ++i) {
        ASSERT_EQ(got[i], FoldCase(bytes[i])) << "byte " << value << " in lane " << lane;
      }
    }
  }
  EXPECT_EQ(FoldCase('A'), 'a');
  EXPECT_EQ(FoldCase('Z'), 'z');
  EXPECT_EQ(FoldCase('@'), '@');
  EXPECT_EQ(FoldCase('['), '[');
  EXPECT_EQ(FoldCase('\xC1'), '\xC1');
}

TEST(CaseFoldTest, NamesThatDifferInCaseOnlyHashAndCompareAlike) {
  std::mt19937 random(27);
  const std::string letters = "aBcDeFgHiJkLmNoPqRsTuVwXyZ_/09";
  for (size_t length = 0; length <= 40; ++length) {
    std::string name;
    for (size_t i = 0; i < length; ++i) name += letters[random() % letters.size()];
    std::string lower = name;
    std::string upper = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_EQ(HashIgnoringCase(name), HashIgnoringCase(lower)) << name;
    EXPECT_EQ(HashIgnoringCase(name), HashIgnoringCase(upper)) << name;
    EXPECT_TRUE(EqualsIgnoringCase(name, upper)) << name;
    EXPECT_FALSE(EqualsIgnoringCase(name, lower + "x")) << name;
  }
  // The length is hashed: a zero byte does not vanish in the padding.
  EXPECT_NE(HashIgnoringCase("a"), HashIgnoringCase(std::string("a\0", 2)));
  EXPECT_NE(HashIgnoringCase("abcdefgh"), HashIgnoringCase(std::string("abcdefgh\0", 9)));
  EXPECT_NE(HashIgnoringCase("add"), HashIgnoringCase("add_1"));
  EXPECT_FALSE(EqualsIgnoringCase("a[", "A{"));
}

}  // namespace
}  // namespace eager::internal
