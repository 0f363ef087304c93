// SessionOptions::memory_limit_bytes holds for every output (issue 37):
// outputs of at most 65,536 elements were never checked, and a string
// element counted 32 bytes whatever its characters, so a graph filled GBs
// of strings under a 100 MB limit. Now every output's size is checked before
// its kernel runs, and a string output's characters once it is made.

#include <gtest/gtest.h>

#include <string>

#include "ops/array_ops.h"
#include "ops/graph_ops.h"
#include "ops/session.h"
#include "runtime/errors.h"
#include "runtime/graph.h"

namespace eager {
namespace {

TEST(SessionMemoryLimitTest, SmallOutputsAreCheckedToo) {
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat32, Shape{}, "x");
  const Tensor filled = BroadcastTo(x, Shape{60000});  // 240,000 bytes
  Session sess(graph, {.memory_limit_bytes = 100000});
  EXPECT_THROW(sess.Run(filled, {{x, Tensor::Scalar(1.0f)}}), ResourceExhaustedError);
  Session roomy(graph, {.memory_limit_bytes = 300000});
  EXPECT_EQ(roomy.Run(filled, {{x, Tensor::Scalar(1.0f)}}).num_elements(), 60000);
}

TEST(SessionMemoryLimitTest, StringOutputsCountTheirCharacters) {
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor s = Placeholder(DType::kString, Shape{}, "s");
  const Tensor filled = BroadcastTo(s, Shape{200});  // 200 MiB of characters
  Session sess(graph, {.memory_limit_bytes = 100 << 20});
  try {
    sess.Run(filled, {{s, Tensor::Scalar(std::string(1 << 20, 'x'))}});
    ADD_FAILURE() << "200 MiB of strings under a 100 MiB limit";
  } catch (const ResourceExhaustedError& e) {
    EXPECT_NE(std::string(e.what()).find("BroadcastTo"), std::string::npos) << e.what();
  }
  EXPECT_EQ(sess.Run(filled, {{s, Tensor::Scalar(std::string(1000, 'x'))}}).num_elements(), 200);
}

}  // namespace
}  // namespace eager
