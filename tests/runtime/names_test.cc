#include "runtime/names.h"

#include <gtest/gtest.h>

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
