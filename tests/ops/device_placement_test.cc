// TF's placement check in a Session (ops/internal/device_placement.h): a
// node on a device this process lacks is refused in TF 2.21's words (the
// messages below are those TF printed for the same graphs), before anything
// runs; soft placement runs it on the CPU; another job never runs.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "ops/session.h"
#include "runtime/errors.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

// a = Const 1.5 on `device`; b = a + a, with no device.
void AddGraph(Graph& graph, const std::string& device) {
  const Tensor one(1.5f);
  graph.AddNode(Node{.name = "a",
                     .op = "Const",
                     .device = device,
                     .attrs = {{"value", one}, {"dtype", DType::kFloat32}}});
  graph.AddNode(
      Node{.name = "b", .op = "AddV2", .inputs = {"a", "a"}, .attrs = {{"T", DType::kFloat32}}});
}

std::string ErrorOf(const std::string& device, bool soft) {
  Graph graph;
  AddGraph(graph, device);
  Session sess(graph, SessionOptions{.allow_soft_placement = soft});
  try {
    EXPECT_EQ(sess.Run("b:0").scalar<float>(), 3.0f);
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "";
}

TEST(DevicePlacementTest, ThisProcesssCpuInAnySpellingRuns) {
  for (const char* device :
       {"", "/cpu:0", "/CPU:0", "/device:CPU:0", "/device:CPU:*", "/cpu:*",
        "/job:localhost/replica:0/task:0/device:CPU:0", "/job:localhost", "/replica:0/task:0"}) {
    EXPECT_EQ(ErrorOf(device, false), "") << device;
  }
}

TEST(DevicePlacementTest, AnotherDeviceIsRefusedAsTfRefusesIt) {
  EXPECT_THAT(ErrorOf("/gpu:0", false),
              HasSubstr("Cannot assign a device for operation a: {{node a}} was explicitly "
                        "assigned to /device:GPU:0 but available devices are [ "
                        "/job:localhost/replica:0/task:0/device:CPU:0 ]. Make sure the device "
                        "specification refers to a valid device. The requested device appears "
                        "to be a GPU"));
  EXPECT_THAT(ErrorOf("/cpu:1", false), HasSubstr("was explicitly assigned to /device:CPU:1 but"));
  EXPECT_THAT(ErrorOf("/device:XLA_CPU:0", false),
              HasSubstr("was explicitly assigned to /device:XLA_CPU:0 but"));
  EXPECT_THAT(ErrorOf("/job:localhost/replica:0/task:0/device:GPU:1", false),
              HasSubstr("assigned to /job:localhost/replica:0/task:0/device:GPU:1 but"));
}

TEST(DevicePlacementTest, SoftPlacementRunsOtherDevicesOnTheCpu) {
  for (const char* device : {"/gpu:0", "/cpu:1", "/device:XLA_CPU:0", "/device:TPU:3"}) {
    EXPECT_EQ(ErrorOf(device, true), "") << device;
  }
}

TEST(DevicePlacementTest, AnotherProcessIsRefusedEvenSoftly) {
  for (bool soft : {false, true}) {
    EXPECT_THAT(ErrorOf("/job:worker/task:0", soft),
                HasSubstr("was explicitly assigned to /job:worker/task:0 but available"));
    EXPECT_THAT(ErrorOf("/job:localhost/replica:0/task:2/device:CPU:0", soft),
                HasSubstr("assigned to /job:localhost/replica:0/task:2/device:CPU:0 but"));
  }
}

TEST(DevicePlacementTest, MalformedSpecificationsAreNamed) {
  for (const char* device : {"/gpu:x", "/device:GPU", "/job:", "nonsense", "/task:-1"}) {
    EXPECT_THAT(ErrorOf(device, true), HasSubstr("Malformed device specification")) << device;
  }
}

// The check comes before any node runs: a refused plan assigns nothing,
// and a plan without the misplaced node runs.
TEST(DevicePlacementTest, RefusedBeforeAnythingRunsAndOnlyForNeededNodes) {
  Graph graph;
  AddGraph(graph, "");
  graph.AddNode(Node{.name = "gpu",
                     .op = "Const",
                     .device = "/device:GPU:0",
                     .attrs = {{"value", Tensor(2.0f)}, {"dtype", DType::kFloat32}}});
  graph.AddNode(
      Node{.name = "c", .op = "AddV2", .inputs = {"b", "gpu"}, .attrs = {{"T", DType::kFloat32}}});
  Session sess(graph);
  EXPECT_EQ(sess.Run("b:0").scalar<float>(), 3.0f);
  EXPECT_THROW(sess.Run("c:0"), InvalidArgumentError);
  EXPECT_THROW(sess.Run("c:0"), InvalidArgumentError);  // each time
}

}  // namespace
}  // namespace eager
