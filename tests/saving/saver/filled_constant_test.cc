// A Const may hold fewer values than its shape has elements (TF repeats the
// last one), so a 30-byte node can ask for 8 GiB (issue 27). What a graph
// file's constants fill beyond the bytes it holds is bounded per file read:
// past 1 GiB the read is ResourceExhaustedError naming the node and shape.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "runtime/errors.h"
#include "saving/saver/meta_graph_def.h"
#include "tests/saving/saving_test_util.h"
#include "tests/testing/protobuf_wire.h"

namespace eager {
namespace {

using ::eager::testing::TempDir;
using ::eager::testing::wire::MessageField;
using ::eager::testing::wire::VarintField;
using ::testing::AllOf;
using ::testing::HasSubstr;

// NodeDef "name": a float Const of shape [elements] holding one value, 1.0.
std::string FilledConstNode(const std::string& name, int64_t elements) {
  const std::string one("\x00\x00\x80\x3f", 4);
  const std::string tensor =
      VarintField(1, 1) +  // DT_FLOAT
      MessageField(2, MessageField(2, VarintField(1, static_cast<uint64_t>(elements)))) +
      MessageField(5, one);  // float_val
  const std::string value_attr =
      MessageField(1, "value") + MessageField(2, MessageField(8, tensor));
  const std::string dtype_attr = MessageField(1, "dtype") + MessageField(2, VarintField(6, 1));
  return MessageField(1, MessageField(1, name) + MessageField(2, "Const") +
                             MessageField(5, value_attr) + MessageField(5, dtype_attr));
}

std::string WriteGraphDef(const std::string& bytes) {
  std::string path = TempDir() + "/graph.pb";
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(FilledConstantTest, SmallFilledConstantsReadAsTfFillsThem) {
  const MetaGraph meta = ReadGraphDef(WriteGraphDef(FilledConstNode("zeros", 9)));
  ASSERT_EQ(meta.nodes.size(), 1u);
  const auto& value = std::get<MetaTensor>(meta.nodes[0].attrs.at("value"));
  ASSERT_TRUE(value.value.has_value());
  EXPECT_EQ(value.value->ToVector<float>(), std::vector<float>(9, 1.0f));
}

TEST(FilledConstantTest, ConstantsFillingGigabytesFromBytesAreResourceExhausted) {
  // 30 constants of 2^31 - 1 floats in a file of some 1.7 KB: 240 GiB.
  std::string graph;
  for (int i = 0; i < 30; ++i) graph += FilledConstNode(StrCat("c", i), (int64_t{1} << 31) - 1);
  const std::string path = WriteGraphDef(graph);
  try {
    ReadGraphDef(path);
    ADD_FAILURE() << "a 1.7 KB file was read as 240 GiB of constants";
  } catch (const ResourceExhaustedError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("node c0 attr value"), HasSubstr("shape [2147483647]"),
                                HasSubstr("fills 8589934588 bytes")));
  }
  // Within the budget they read: 3 x 4 Mi floats (48 MiB) do.
  std::string fits;
  for (int i = 0; i < 3; ++i) fits += FilledConstNode(StrCat("c", i), int64_t{1} << 22);
  EXPECT_EQ(ReadGraphDef(WriteGraphDef(fits)).nodes.size(), 3u);
}

}  // namespace
}  // namespace eager
