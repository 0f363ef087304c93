#include "runtime/live_variables.h"

#include <gtest/gtest.h>

#include <memory>

#include "runtime/names.h"
#include "runtime/variable.h"

namespace eager {
namespace {

class LiveVariablesTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetDefaultNames(); }
  void TearDown() override { ResetDefaultNames(); }
};

TEST_F(LiveVariablesTest, ListsLiveVariablesInCreationOrder) {
  Variable a(1.0f, "a");
  auto b = std::make_unique<Variable>(2.0f, "b");
  Variable c(DType::kInt32, Shape{2}, "c", /*trainable=*/false);  // uninitialized counts too
  EXPECT_EQ(LiveVariables(), (std::vector<Variable*>{&a, b.get(), &c}));
  EXPECT_EQ(LiveTrainableVariables(), (std::vector<Variable*>{&a, b.get()}));
  b.reset();
  EXPECT_EQ(LiveVariables(), (std::vector<Variable*>{&a, &c}));
}

TEST_F(LiveVariablesTest, ResetDefaultNamesStartsANewGeneration) {
  Variable old(1.0f, "v");
  ResetDefaultNames();  // tf.compat.v1.reset_default_graph()
  EXPECT_TRUE(LiveVariables().empty());
  Variable fresh(2.0f, "v");
  EXPECT_EQ(fresh.name(), "v:0");
  EXPECT_EQ(LiveVariables(), std::vector<Variable*>{&fresh});
}

}  // namespace
}  // namespace eager
