// TF1 while loops (control flow v1) in a Session: graphs built node by node
// as tf.compat.v1.while_loop builds them, checked against values worked out
// by hand; malformed frames are refused naming the node.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ops/session.h"
#include "runtime/graph.h"
#include "runtime/variable.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

constexpr const char* kFrame = "while/while_context";

void Add(Graph& g, std::string name, std::string op, std::vector<std::string> inputs,
         Attrs attrs = {}) {
  Node node{.name = std::move(name), .op = std::move(op), .inputs = std::move(inputs)};
  node.attrs = std::move(attrs);
  g.AddNode(std::move(node));
}

Attrs Int32() { return Attrs().Set("T", DType::kInt32); }

void Const(Graph& g, std::string name, int32_t value, std::vector<std::string> inputs = {}) {
  Add(g, std::move(name), "Const", std::move(inputs),
      Attrs().Set("dtype", DType::kInt32).Set("value", Tensor(value)));
}

void Enter(Graph& g, std::string name, std::string input, bool constant,
           const char* frame = kFrame) {
  Add(g, std::move(name), "Enter", {std::move(input)},
      Int32()
          .Set("frame_name", std::string(frame))
          .Set("is_constant", constant)
          .Set("parallel_iterations", int64_t{10}));
}

// i, s = 0, 0; while i < limit: i += 1; s += i. Exits: while/Exit (i),
// while/Exit_1 (s). `limit` is a Placeholder with a default of 10.
void CountingLoop(Graph& g) {
  Const(g, "zero", 0);
  Const(g, "ten", 10);
  Add(g, "limit", "PlaceholderWithDefault", {"ten"},
      Attrs().Set("dtype", DType::kInt32).Set("shape", Shape{}));
  Enter(g, "while/Enter", "zero", false);
  Enter(g, "while/Enter_1", "zero", false);
  Enter(g, "while/Enter_2", "limit", true);
  Add(g, "while/Merge", "Merge", {"while/Enter", "while/NextIteration"},
      Int32().Set("N", int64_t{2}));
  Add(g, "while/Merge_1", "Merge", {"while/Enter_1", "while/NextIteration_1"},
      Int32().Set("N", int64_t{2}));
  Add(g, "while/Less", "Less", {"while/Merge", "while/Enter_2"}, Int32());
  Add(g, "while/LoopCond", "LoopCond", {"while/Less"});
  Add(g, "while/Switch", "Switch", {"while/Merge", "while/LoopCond"}, Int32());
  Add(g, "while/Switch_1", "Switch", {"while/Merge_1", "while/LoopCond"}, Int32());
  Add(g, "while/Identity", "Identity", {"while/Switch:1"}, Int32());
  Add(g, "while/Identity_1", "Identity", {"while/Switch_1:1"}, Int32());
  Const(g, "while/add/y", 1, {"^while/Identity"});
  Add(g, "while/add", "AddV2", {"while/Identity", "while/add/y"}, Int32());
  Add(g, "while/add_1", "AddV2", {"while/Identity_1", "while/add"}, Int32());
  Add(g, "while/NextIteration", "NextIteration", {"while/add"}, Int32());
  Add(g, "while/NextIteration_1", "NextIteration", {"while/add_1"}, Int32());
  Add(g, "while/Exit", "Exit", {"while/Switch"}, Int32());
  Add(g, "while/Exit_1", "Exit", {"while/Switch_1"}, Int32());
}

int32_t Scalar(const Tensor& t) { return t.data<int32_t>()[0]; }

// A malformed frame is refused when a plan is built, naming the node.
void ExpectRefused(Graph& g, const std::string& fetch, const std::string& message) {
  Session sess(g);
  try {
    sess.Run(fetch.c_str());
    FAIL() << "expected InvalidArgumentError with " << message;
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr(message));
  }
}

TEST(WhileLoopTest, CountingLoopWithTwoVariablesAndAnInvariant) {
  Graph g;
  CountingLoop(g);
  Session sess(g);
  const auto out = sess.Run(std::vector<Fetch>{"while/Exit:0", "while/Exit_1:0"});
  EXPECT_EQ(Scalar(*out[0]), 10);
  EXPECT_EQ(Scalar(*out[1]), 55);  // 1 + 2 + ... + 10
  // The second Exit alone runs the loop too; a fed invariant changes it.
  EXPECT_EQ(Scalar(sess.Run("while/Exit_1:0", {{"limit:0", Tensor(int32_t{4})}})), 10);
  EXPECT_EQ(Scalar(sess.Run("while/Exit:0", {{"limit:0", Tensor(int32_t{0})}})), 0);
}

TEST(WhileLoopTest, ConsumersOfTheExitsRunAfterTheLoop) {
  Graph g;
  CountingLoop(g);
  Add(g, "sum", "AddV2", {"while/Exit", "while/Exit_1"}, Int32());
  Session sess(g);
  EXPECT_EQ(Scalar(sess.Run("sum:0")), 65);
  EXPECT_EQ(Scalar(sess.Run("sum:0", {{"limit:0", Tensor(int32_t{3})}})), 9);  // 3 + 6
}

// i, total = 0, 0; while i < 3: (j = 0; while j <= i: total += 1; j += 1);
// i += 1. The inner loop is frame "o/i" inside frame "o"; total = 1 + 2 + 3.
void NestedLoop(Graph& g) {
  Const(g, "zero", 0);
  Const(g, "three", 3);
  Enter(g, "o/Enter", "zero", false, "o");
  Enter(g, "o/Enter_1", "zero", false, "o");
  Enter(g, "o/Enter_2", "three", true, "o");
  Add(g, "o/Merge", "Merge", {"o/Enter", "o/NextIteration"}, Int32().Set("N", int64_t{2}));
  Add(g, "o/Merge_1", "Merge", {"o/Enter_1", "o/NextIteration_1"}, Int32().Set("N", int64_t{2}));
  Add(g, "o/Less", "Less", {"o/Merge", "o/Enter_2"}, Int32());
  Add(g, "o/LoopCond", "LoopCond", {"o/Less"});
  Add(g, "o/Switch", "Switch", {"o/Merge", "o/LoopCond"}, Int32());
  Add(g, "o/Switch_1", "Switch", {"o/Merge_1", "o/LoopCond"}, Int32());
  Add(g, "o/Identity", "Identity", {"o/Switch:1"}, Int32());
  Add(g, "o/Identity_1", "Identity", {"o/Switch_1:1"}, Int32());
  Const(g, "o/zero", 0, {"^o/Identity"});
  Enter(g, "o/i/Enter", "o/zero", false, "o/i");
  Enter(g, "o/i/Enter_1", "o/Identity_1", false, "o/i");
  Enter(g, "o/i/Enter_2", "o/Identity", true, "o/i");
  Add(g, "o/i/Merge", "Merge", {"o/i/Enter", "o/i/NextIteration"}, Int32().Set("N", int64_t{2}));
  Add(g, "o/i/Merge_1", "Merge", {"o/i/Enter_1", "o/i/NextIteration_1"},
      Int32().Set("N", int64_t{2}));
  Add(g, "o/i/LessEqual", "LessEqual", {"o/i/Merge", "o/i/Enter_2"}, Int32());
  Add(g, "o/i/LoopCond", "LoopCond", {"o/i/LessEqual"});
  Add(g, "o/i/Switch", "Switch", {"o/i/Merge", "o/i/LoopCond"}, Int32());
  Add(g, "o/i/Switch_1", "Switch", {"o/i/Merge_1", "o/i/LoopCond"}, Int32());
  Add(g, "o/i/Identity", "Identity", {"o/i/Switch:1"}, Int32());
  Add(g, "o/i/Identity_1", "Identity", {"o/i/Switch_1:1"}, Int32());
  Const(g, "o/i/one", 1, {"^o/i/Identity"});
  Add(g, "o/i/add", "AddV2", {"o/i/Identity", "o/i/one"}, Int32());
  Add(g, "o/i/add_1", "AddV2", {"o/i/Identity_1", "o/i/one"}, Int32());
  Add(g, "o/i/NextIteration", "NextIteration", {"o/i/add"}, Int32());
  Add(g, "o/i/NextIteration_1", "NextIteration", {"o/i/add_1"}, Int32());
  Add(g, "o/i/Exit", "Exit", {"o/i/Switch"}, Int32());
  Add(g, "o/i/Exit_1", "Exit", {"o/i/Switch_1"}, Int32());
  Const(g, "o/one", 1, {"^o/Identity"});
  Add(g, "o/add", "AddV2", {"o/Identity", "o/one"}, Int32());
  Add(g, "o/NextIteration", "NextIteration", {"o/add"}, Int32());
  Add(g, "o/NextIteration_1", "NextIteration", {"o/i/Exit_1"}, Int32());
  Add(g, "o/Exit", "Exit", {"o/Switch"}, Int32());
  Add(g, "o/Exit_1", "Exit", {"o/Switch_1"}, Int32());
}

TEST(WhileLoopTest, ALoopNestedInALoopsBodyRunsPerOuterIteration) {
  Graph g;
  NestedLoop(g);
  Session sess(g);
  const auto out = sess.Run(std::vector<Fetch>{"o/Exit:0", "o/Exit_1:0"});
  EXPECT_EQ(Scalar(*out[0]), 3);
  EXPECT_EQ(Scalar(*out[1]), 6);
  // The limit bounds each loop's iterations per run of it: 3 each at most.
  Session three(g, SessionOptions{.max_loop_iterations = 3});
  EXPECT_EQ(Scalar(three.Run("o/Exit_1:0")), 6);
  Session two(g, SessionOptions{.max_loop_iterations = 2});
  try {
    two.Run("o/Exit_1:0");
    FAIL() << "expected ResourceExhaustedError";
  } catch (const ResourceExhaustedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("while loop 'o' (LoopCond 'o/LoopCond')"));
  }
}

TEST(WhileLoopTest, ALoopOnTheUntakenBranchOfASwitchDoesNotRun) {
  Graph g;
  Const(g, "zero", 0);
  Const(g, "ten", 10);
  Add(g, "pred", "PlaceholderWithDefault", {"true"},
      Attrs().Set("dtype", DType::kBool).Set("shape", Shape{}));
  Add(g, "true", "Const", {}, Attrs().Set("dtype", DType::kBool).Set("value", Tensor(true)));
  Add(g, "gate", "Switch", {"ten", "pred"}, Int32());
  // The counting loop's limit is the true branch; its Exit meets -1 in a Merge.
  Add(g, "limit", "Identity", {"gate:1"}, Int32());
  Enter(g, "while/Enter", "zero", false);
  Enter(g, "while/Enter_2", "limit", true);
  Add(g, "while/Merge", "Merge", {"while/Enter", "while/NextIteration"},
      Int32().Set("N", int64_t{2}));
  Add(g, "while/Less", "Less", {"while/Merge", "while/Enter_2"}, Int32());
  Add(g, "while/LoopCond", "LoopCond", {"while/Less"});
  Add(g, "while/Switch", "Switch", {"while/Merge", "while/LoopCond"}, Int32());
  Add(g, "while/Identity", "Identity", {"while/Switch:1"}, Int32());
  Const(g, "while/add/y", 1, {"^while/Identity"});
  Add(g, "while/add", "AddV2", {"while/Identity", "while/add/y"}, Int32());
  Add(g, "while/NextIteration", "NextIteration", {"while/add"}, Int32());
  Add(g, "while/Exit", "Exit", {"while/Switch"}, Int32());
  Add(g, "minus_one", "Const", {"^gate"},
      Attrs().Set("dtype", DType::kInt32).Set("value", Tensor(int32_t{-1})));
  Add(g, "otherwise", "Identity", {"gate:0"}, Int32());
  Add(g, "else", "AddV2", {"otherwise", "minus_one"}, Int32());  // 10 - 1 = 9
  Add(g, "result", "Merge", {"else", "while/Exit"}, Int32().Set("N", int64_t{2}));
  Session sess(g);
  EXPECT_EQ(Scalar(sess.Run("result:0")), 10);
  EXPECT_EQ(Scalar(sess.Run("result:0", {{"pred:0", Tensor(false)}})), 9);
}

TEST(WhileLoopTest, MaxLoopIterationsStopsALoopNamingIt) {
  Graph g;
  CountingLoop(g);
  Session sess(g, SessionOptions{.max_loop_iterations = 5});
  EXPECT_EQ(Scalar(sess.Run("while/Exit:0", {{"limit:0", Tensor(int32_t{5})}})), 5);
  try {
    sess.Run("while/Exit:0", {{"limit:0", Tensor(int32_t{1000000000})}});
    FAIL() << "expected ResourceExhaustedError";
  } catch (const ResourceExhaustedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("while loop 'while/while_context'"));
    EXPECT_THAT(e.what(), HasSubstr("did not end within 5 iterations"));
  }
}

TEST(WhileLoopTest, NodesInsideTheFrameCannotBeFetchedAlone) {
  Graph g;
  CountingLoop(g);
  Session sess(g);
  try {
    sess.Run("while/add:0");
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'while/add'"));
    EXPECT_THAT(e.what(), HasSubstr("inside a while loop"));
  }
}

TEST(WhileLoopTest, LoopCondMustGetABoolScalar) {
  Graph bad;
  // The same loop with LoopCond on an int32.
  Const(bad, "zero", 0);
  Enter(bad, "w/Enter", "zero", false, "w");
  Add(bad, "w/Merge", "Merge", {"w/Enter", "w/NextIteration"}, Int32().Set("N", int64_t{2}));
  Add(bad, "w/LoopCond", "LoopCond", {"w/Merge"});
  Add(bad, "w/Switch", "Switch", {"w/Merge", "w/LoopCond"}, Int32());
  Add(bad, "w/Identity", "Identity", {"w/Switch:1"}, Int32());
  Add(bad, "w/NextIteration", "NextIteration", {"w/Identity"}, Int32());
  Add(bad, "w/Exit", "Exit", {"w/Switch"}, Int32());
  ExpectRefused(bad, "w/Exit:0", "LoopCond 'w/LoopCond' of the while loop 'w' must get a bool");
}

TEST(WhileLoopTest, NextIterationWithoutMergeIsRefused) {
  Graph g;
  CountingLoop(g);
  Add(g, "while/NextIteration_2", "NextIteration", {"while/add"}, Int32());
  ExpectRefused(g, "while/Exit:0", "node 'while/NextIteration_2' (NextIteration) feeds no Merge");
}

TEST(WhileLoopTest, ExitOutsideAFrameIsRefused) {
  Graph g;
  Const(g, "zero", 0);
  Add(g, "stray", "Exit", {"zero"}, Int32());
  ExpectRefused(g, "stray:0", "node 'stray' (Exit) is outside any while loop frame");
}

TEST(WhileLoopTest, InputsFromTwoFramesAreRefused) {
  Graph g;
  CountingLoop(g);
  Enter(g, "other/Enter", "zero", true, "other");
  Add(g, "while/mixed", "AddV2", {"while/add", "other/Enter"}, Int32());
  ExpectRefused(g, "while/Exit:0", "node 'while/mixed' (AddV2) has inputs from different");
}

TEST(WhileLoopTest, ACycleNotThroughNextIterationIsRefused) {
  Graph g;
  CountingLoop(g);
  Add(g, "a", "Identity", {"b"}, Int32());
  Add(g, "b", "Identity", {"a"}, Int32());
  ExpectRefused(g, "while/Exit:0", "passes through no NextIteration");
}

TEST(WhileLoopTest, ExitMustReadALoopSwitch) {
  Graph g;
  CountingLoop(g);
  Add(g, "while/Exit_2", "Exit", {"while/add"}, Int32());
  ExpectRefused(g, "while/Exit:0", "node 'while/Exit_2' (Exit) of frame 'while/while_context'");
}

// A crafted loop with no practical end (2^31 - 1 iterations) returns within
// the Run's deadline, naming its frame; the same Session runs a short one.
TEST(WhileLoopTest, OperationTimeoutStopsALoopNamingIt) {
  Graph g;
  CountingLoop(g);
  Session sess(g, SessionOptions{.operation_timeout_in_ms = 200});
  const auto start = std::chrono::steady_clock::now();
  try {
    sess.Run("while/Exit:0", {{"limit:0", Tensor(std::numeric_limits<int32_t>::max())}});
    FAIL() << "expected DeadlineExceededError";
  } catch (const DeadlineExceededError& e) {
    EXPECT_THAT(e.what(), HasSubstr("while loop 'while/while_context'"));
    EXPECT_THAT(e.what(), HasSubstr("deadline of 200 ms"));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(Scalar(sess.Run("while/Exit:0", {{"limit:0", Tensor(int32_t{5})}})), 5);
}

}  // namespace
}  // namespace eager
