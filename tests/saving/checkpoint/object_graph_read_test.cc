// The object graph entry of a checkpoint is read by one function
// (internal::ReadObjectGraph) for Checkpoint::Read, the eager-ckpt graph
// command and the converter; each says what a missing graph means for it,
// and a damaged one is DataLossError naming the checkpoint everywhere.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "runtime/errors.h"
#include "runtime/names.h"
#include "runtime/variable.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/checkpoint/checkpoint.h"
#include "saving/checkpoint/checkpoint_key.h"
#include "saving/checkpoint/object_graph.h"
#include "saving/tools/checkpoint_convert.h"
#include "saving/tools/checkpoint_tools.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::TempDir;
using ::testing::HasSubstr;

// A bundle holding `graph` under the object-graph key (when given) and a
// variable "v".
std::string WriteBundle(const std::string& prefix, const std::optional<Tensor>& graph) {
  BundleWriter writer(prefix);
  if (graph) writer.Add(kObjectGraphKey, *graph);
  writer.Add("v", Tensor(1.0f));
  writer.Finish();
  return prefix;
}

// Every reader of the graph, as a call on the checkpoint `prefix`.
std::vector<std::pair<std::string, std::function<void(const std::string&)>>> Readers() {
  return {
      {"Checkpoint::Read",
       [](const std::string& prefix) {
         Variable v(Tensor(0.0f), "v");
         Checkpoint({{"v", &v}}).Read(prefix).ExpectPartial();
       }},
      {"DescribeObjectGraph",
       [](const std::string& prefix) { DescribeObjectGraph(BundleReader(prefix)); }},
      {"PlanConversion", [](const std::string& prefix) { PlanConversion(prefix, {}); }},
  };
}

TEST(ObjectGraphReadTest, AnEntryThatIsNotAScalarStringIsDataLossEverywhere) {
  const std::string prefix = WriteBundle(TempDir() + "/float_graph", Tensor(1.0f));
  for (const auto& [name, read] : Readers()) {
    try {
      read(prefix);
      ADD_FAILURE() << name << ": no error";
    } catch (const DataLossError& e) {
      EXPECT_THAT(e.what(), HasSubstr("Checkpoint " + prefix +
                                      ": _CHECKPOINTABLE_OBJECT_GRAPH is float32 of shape [], "
                                      "expected a scalar string"))
          << name;
    }
  }
}

TEST(ObjectGraphReadTest, BytesThatAreNotAGraphAreDataLossEverywhere) {
  const std::string prefix =
      WriteBundle(TempDir() + "/garbage_graph", Tensor(std::string("\xff\xff\xff not a proto")));
  for (const auto& [name, read] : Readers()) {
    try {
      read(prefix);
      ADD_FAILURE() << name << ": no error";
    } catch (const DataLossError& e) {
      EXPECT_THAT(e.what(), HasSubstr("the object graph _CHECKPOINTABLE_OBJECT_GRAPH of " + prefix +
                                      " is not a valid TrackableObjectGraph proto"))
          << name;
    }
  }
}

// No graph: a name-based checkpoint. Checkpoint restores by name, the graph
// command says there is none, the converter wants a template or a mapping.
TEST(ObjectGraphReadTest, AMissingGraphMeansWhatEachReaderSays) {
  const std::string prefix = WriteBundle(TempDir() + "/name_based", std::nullopt);
  EXPECT_FALSE(internal::ReadObjectGraph(BundleReader(prefix)).has_value());
  ResetDefaultNames();
  Variable v(Tensor(0.0f), "v");  // named "v", as the bundle's key
  Checkpoint checkpoint({{"v", &v}});
  EXPECT_TRUE(checkpoint.Read(prefix).name_based());
  EXPECT_EQ(v.value().scalar<float>(), 1.0f);
  EXPECT_THAT([&] { DescribeObjectGraph(BundleReader(prefix)); },
              ::testing::ThrowsMessage<NotFoundError>(HasSubstr("it is name-based")));
  EXPECT_THAT([&] { PlanConversion(prefix, {}); }, ::testing::Throws<InvalidArgumentError>());
}

}  // namespace
}  // namespace eager
