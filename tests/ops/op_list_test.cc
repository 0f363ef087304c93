// AllOps() and FindOp(): the op table a Session looks node types up in.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ops/op_def.h"

namespace eager {
namespace {

TEST(OpListTest, EveryOpTypeIsListedOnce) {
  std::set<std::string> types;
  for (const OpDef* op : AllOps()) {
    ASSERT_NE(op, nullptr);
    EXPECT_TRUE(types.insert(std::string(op->type)).second) << "listed twice: " << op->type;
  }
  EXPECT_GE(types.size(), 20u);
}

TEST(OpListTest, FindOpReturnsTheListedOpForEachType) {
  for (const OpDef* op : AllOps()) EXPECT_EQ(FindOp(op->type), op) << op->type;
}

TEST(OpListTest, FindOpResolvesOlderTensorFlowNamesForTheSameOp) {
  const OpDef* add = FindOp("AddV2");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(FindOp("Add"), add);  // TF < 1.14 graphs write Add for `+`
}

TEST(OpListTest, FindOpReturnsNullForUnknownTypes) {
  EXPECT_EQ(FindOp("NoSuchOp"), nullptr);
  EXPECT_EQ(FindOp(""), nullptr);
  EXPECT_EQ(FindOp("matmul"), nullptr);  // op types are case-sensitive, as in TF
  ASSERT_NE(FindOp("MatMul"), nullptr);
}

}  // namespace
}  // namespace eager
