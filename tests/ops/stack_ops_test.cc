// StackV2 / StackPushV2 / StackPopV2 in a Session (the stacks TF's
// gradients of v1 while loops use): last in, first out, against
// hand-written orders; TF's errors naming the node.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/session.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

void Add(Graph& g, std::string name, std::string op, std::vector<std::string> inputs,
         Attrs attrs = {}) {
  Node node{.name = std::move(name), .op = std::move(op), .inputs = std::move(inputs)};
  node.attrs = std::move(attrs);
  g.AddNode(std::move(node));
}

void Const(Graph& g, std::string name, const Tensor& value, std::vector<std::string> inputs = {}) {
  Add(g, std::move(name), "Const", std::move(inputs),
      Attrs().Set("dtype", value.dtype()).Set("value", value));
}

// A stack of max_size `max_size`; push1..push3 push 1, 2, 3 in order;
// pop1..pop4 pop after them, in order (control edges).
void ThreePushes(Graph& g, int32_t max_size) {
  Const(g, "max_size", Tensor(max_size));
  Add(g, "stack", "StackV2", {"max_size"}, Attrs().Set("elem_type", DType::kFloat32));
  std::string after;
  for (int i = 1; i <= 3; ++i) {
    const std::string n = std::to_string(i);
    Const(g, "v" + n, Tensor(static_cast<float>(i)));
    std::vector<std::string> in = {"stack", "v" + n};
    if (!after.empty()) in.push_back("^" + after);
    Add(g, "push" + n, "StackPushV2", in, Attrs().Set("T", DType::kFloat32));
    after = "push" + n;
  }
  for (int i = 1; i <= 4; ++i) {
    const std::string n = std::to_string(i);
    Add(g, "pop" + n, "StackPopV2", {"stack", "^" + after},
        Attrs().Set("elem_type", DType::kFloat32));
    after = "pop" + n;
  }
  Const(g, "int", Tensor(int32_t{7}));
  Add(g, "push_int", "StackPushV2", {"stack", "int"}, Attrs().Set("T", DType::kInt32));
}

void ExpectError(Session& sess, const std::vector<Fetch>& fetches, const std::string& message) {
  try {
    sess.Run(fetches);
    FAIL() << "expected InvalidArgumentError with " << message;
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr(message));
  }
}

TEST(StackOpsTest, PopsReturnThePushesLastFirst) {
  Graph g;
  ThreePushes(g, -1);
  Session sess(g);
  const auto out = sess.Run(std::vector<Fetch>{"pop1:0", "pop2:0", "pop3:0", "push2:0"});
  EXPECT_EQ(out[0]->data<float>()[0], 3.0f);
  EXPECT_EQ(out[1]->data<float>()[0], 2.0f);
  EXPECT_EQ(out[2]->data<float>()[0], 1.0f);
  EXPECT_EQ(out[3]->data<float>()[0], 2.0f);  // a push gives its element
}

TEST(StackOpsTest, PoppingAnEmptyStackAndWrongDtypesAreRefused) {
  Graph g;
  ThreePushes(g, -1);
  Session sess(g);
  ExpectError(sess, {"pop4:0"}, "node 'pop4' (StackPopV2): stack 'stack' is empty");
  ExpectError(sess, {"push_int:0"}, "holds float32 elements; pushed a int32 tensor");
}

TEST(StackOpsTest, MaxSizeBoundsTheStack) {
  Graph g;
  ThreePushes(g, 2);
  Session sess(g);
  ExpectError(sess, {"push3:0"}, "node 'push3' (StackPushV2): stack 'stack' is full");
  EXPECT_EQ(sess.Run("push2:0").data<float>()[0], 2.0f);
}

}  // namespace
}  // namespace eager
