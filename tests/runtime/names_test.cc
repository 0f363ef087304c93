#include "runtime/names.h"

#include <gtest/gtest.h>

#include <string>

#include "runtime/errors.h"

namespace eager {
namespace {

// The cases are TensorFlow's Graph.unique_name behaviour (FORMAT.md 5.2).
TEST(NameRegistryTest, SuffixesRepeatedNames) {
  NameRegistry names;
  EXPECT_EQ(names.UniqueName("v"), "v");
  EXPECT_EQ(names.UniqueName("v"), "v_1");
  EXPECT_EQ(names.UniqueName("v"), "v_2");
  EXPECT_EQ(names.UniqueName("w"), "w");
}

TEST(NameRegistryTest, CountsCaseInsensitivelyButKeepsCapitalisation) {
  NameRegistry names;
  EXPECT_EQ(names.UniqueName("Variable"), "Variable");
  EXPECT_EQ(names.UniqueName("variable"), "variable_1");
  EXPECT_EQ(names.UniqueName("VARIABLE"), "VARIABLE_2");
}

TEST(NameRegistryTest, SkipsCandidatesAlreadyTaken) {
  NameRegistry names;
  EXPECT_EQ(names.UniqueName("v_1"), "v_1");
  EXPECT_EQ(names.UniqueName("v"), "v");
  EXPECT_EQ(names.UniqueName("v"), "v_2");
  EXPECT_EQ(names.UniqueName("v_1"), "v_1_1");
}

TEST(NameRegistryTest, ClearForgetsEverything) {
  NameRegistry names;
  names.UniqueName("v");
  EXPECT_TRUE(names.IsUsed("V"));
  names.Clear();
  EXPECT_FALSE(names.IsUsed("v"));
  EXPECT_EQ(names.UniqueName("v"), "v");
}

TEST(NameRegistryTest, RejectsEmptyName) {
  NameRegistry names;
  EXPECT_THROW(names.UniqueName(""), InvalidArgumentError);
}

// The registry's table grows many times over; every name stays counted,
// case-insensitively, with its use count.
TEST(NameRegistryTest, KeepsEveryNameThroughGrowth) {
  NameRegistry names;
  constexpr int kNames = 50000;
  for (int i = 0; i < kNames; ++i) {
    ASSERT_EQ(names.UniqueName(StrCat("Layer", i, "/Add")), StrCat("Layer", i, "/Add"));
  }
  for (int i = 0; i < kNames; i += 997) {
    EXPECT_TRUE(names.IsUsed(StrCat("layer", i, "/ADD"))) << i;
    EXPECT_FALSE(names.IsUsed(StrCat("layer", i, "/add_1"))) << i;
    EXPECT_EQ(names.UniqueName(StrCat("LAYER", i, "/add")), StrCat("LAYER", i, "/add_1"));
    EXPECT_TRUE(names.IsUsed(StrCat("layer", i, "/add_1"))) << i;
  }
  EXPECT_FALSE(names.IsUsed(StrCat("layer", kNames, "/add")));
}

// TF 2.21: unique_name("b") after "b_1" and "B" gives "b_2", then "b_3";
// unique_name("B_1") then "B_1_1".
TEST(NameRegistryTest, SkipsTakenSuffixesOfAnyCase) {
  NameRegistry names;
  EXPECT_EQ(names.UniqueName("b_1"), "b_1");
  EXPECT_EQ(names.UniqueName("B"), "B");
  EXPECT_EQ(names.UniqueName("b"), "b_2");
  EXPECT_EQ(names.UniqueName("b"), "b_3");
  EXPECT_EQ(names.UniqueName("B_1"), "B_1_1");
  // A run of taken suffixes is skipped; the count grows by one per call,
  // so the next call probes the run again.
  EXPECT_EQ(names.UniqueName("W_2"), "W_2");
  EXPECT_EQ(names.UniqueName("w_3"), "w_3");
  EXPECT_EQ(names.UniqueName("w"), "w");
  EXPECT_EQ(names.UniqueName("w_1"), "w_1");
  EXPECT_EQ(names.UniqueName("W"), "W_4");
  EXPECT_EQ(names.UniqueName("w"), "w_5");
}

// Names of different lengths that share a prefix, and names past the
// entries' one- and two-byte length prefixes.
TEST(NameRegistryTest, LongNamesAndPrefixes) {
  NameRegistry names;
  for (const size_t length :
       {size_t{1}, size_t{127}, size_t{128}, size_t{16383}, size_t{16384}, size_t{100000}}) {
    const std::string name(length, 'N');
    EXPECT_EQ(names.UniqueName(name), name) << length;
    EXPECT_TRUE(names.IsUsed(std::string(length, 'n'))) << length;
    EXPECT_FALSE(names.IsUsed(std::string(length + 1, 'n'))) << length;
    EXPECT_EQ(names.UniqueName(std::string(length, 'n')), std::string(length, 'n') + "_1");
  }
  EXPECT_FALSE(names.IsUsed(std::string(2, 'n')));
  EXPECT_EQ(names.UniqueName(std::string("a\0b", 3)), std::string("a\0b", 3));
  EXPECT_FALSE(names.IsUsed("a"));
  EXPECT_FALSE(names.IsUsed(std::string("a\0", 2)));
}

// Only ASCII letters fold (TF's op and scope names are ASCII, by its name
// pattern): other bytes are kept as they are, 0xC1 ('A' | 0x80) too.
TEST(NameRegistryTest, FoldsAsciiLettersOnly) {
  NameRegistry names;
  EXPECT_EQ(names.UniqueName("x\xC1"), "x\xC1");
  EXPECT_FALSE(names.IsUsed("x\xE1"));
  EXPECT_EQ(names.UniqueName("x\xE1"), "x\xE1");
  EXPECT_EQ(names.UniqueName("[@]^`{"), "[@]^`{");
  EXPECT_FALSE(names.IsUsed("{`}~`{"));  // each byte + 0x20
}

TEST(NameRegistryTest, ClearForgetsManyNamesAndCountsGenerations) {
  NameRegistry names;
  const uint64_t generation = names.generation();
  for (int i = 0; i < 1000; ++i) names.UniqueName(StrCat("v", i));
  names.UniqueName("v1");  // "v1_1"
  names.Clear();
  EXPECT_EQ(names.generation(), generation + 1);
  for (int i = 0; i < 1000; i += 7) EXPECT_FALSE(names.IsUsed(StrCat("v", i)));
  EXPECT_FALSE(names.IsUsed("v1_1"));
  EXPECT_EQ(names.UniqueName("V1"), "V1");
  EXPECT_EQ(names.UniqueName("v1"), "v1_1");
  names.Clear();
  names.Clear();
  EXPECT_EQ(names.generation(), generation + 3);
  EXPECT_EQ(names.UniqueName("v1"), "v1");
}

// TF's graph marks a node's name used without uniquifying it: a first
// mark counts as one use, a name already in use keeps its count.
TEST(NameRegistryTest, MarkUsedCountsOnceAndKeepsCounts) {
  NameRegistry names;
  names.MarkUsed("V");
  EXPECT_TRUE(names.IsUsed("v"));
  EXPECT_EQ(names.UniqueName("v"), "v_1");
  names.UniqueName("w");
  names.UniqueName("w");  // "w_1"
  names.MarkUsed("W");
  names.MarkUsed("w_2");
  EXPECT_EQ(names.UniqueName("w"), "w_3");
  EXPECT_THROW(names.MarkUsed(""), InvalidArgumentError);
}

TEST(NameScopeTest, ScopesNestAndAreUniquified) {
  ResetDefaultNames();
  EXPECT_EQ(NameScope::Current(), "");
  {
    NameScope outer("foo");
    EXPECT_EQ(outer.prefix(), "foo/");
    {
      NameScope inner("bar");
      EXPECT_EQ(NameScope::Current(), "foo/bar/");
    }
    EXPECT_EQ(NameScope::Current(), "foo/");
  }
  NameScope again("foo");
  EXPECT_EQ(again.prefix(), "foo_1/");
}

TEST(NameScopeTest, TrailingSlashReentersExactScope) {
  ResetDefaultNames();
  { NameScope first("dense"); }
  NameScope reentered("dense/");
  EXPECT_EQ(NameScope::Current(), "dense/");
}

TEST(UniqueObjectNameTest, KerasStyleZeroBasedPerBaseName) {
  ResetDefaultNames();
  EXPECT_EQ(UniqueObjectName("dense"), "dense");
  EXPECT_EQ(UniqueObjectName("dense"), "dense_1");
  EXPECT_EQ(UniqueObjectName("conv2d"), "conv2d");
  EXPECT_EQ(UniqueObjectName("dense"), "dense_2");
  ResetDefaultNames();
  EXPECT_EQ(UniqueObjectName("dense"), "dense");
}

}  // namespace
}  // namespace eager
