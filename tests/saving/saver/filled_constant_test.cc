// A Const may hold fewer values than its shape has elements (TF repeats the
// last one), so a 30-byte node can ask for 8 GiB (issue 27). What a graph
// file's constants fill beyond the bytes it holds is bounded per file read:
// past 1 GiB the read is ResourceExhaustedError naming the node and shape.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <string>

#include "runtime/errors.h"
#include "runtime/graph.h"
#include "saving/saver/meta_graph_def.h"
#include "saving/saver/meta_graph_import_export.h"
#include "saving/saver/saved_model.h"
#include "saving/saver/saver.h"
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

// NodeDef "name": a string Const of shape [elements] holding one value,
// `text`, which TF repeats to fill it.
std::string FilledStringNode(const std::string& name, int64_t elements, const std::string& text) {
  const std::string tensor =
      VarintField(1, 7) +  // DT_STRING
      MessageField(2, MessageField(2, VarintField(1, static_cast<uint64_t>(elements)))) +
      MessageField(8, text);  // string_val
  const std::string value_attr =
      MessageField(1, "value") + MessageField(2, MessageField(8, tensor));
  const std::string dtype_attr = MessageField(1, "dtype") + MessageField(2, VarintField(6, 7));
  return MessageField(1, MessageField(1, name) + MessageField(2, "Const") +
                             MessageField(5, value_attr) + MessageField(5, dtype_attr));
}

// Issue 37: string elements were charged 32 bytes each, not their
// characters, so a [30000] constant of one 1 MiB string (a file of 1 MiB)
// filled 30 GiB and std::bad_alloc escaped ImportMetaGraph and LoadSavedModel.
TEST(FilledConstantTest, StringConstantsAreChargedTheirCharacters) {
  const std::string node = FilledStringNode("s", 30000, std::string(1 << 20, 'x'));
  const auto expect_refused = [](const std::function<void()>& read) {
    try {
      read();
      ADD_FAILURE() << "a 1 MiB file filled 30 GiB of strings";
    } catch (const ResourceExhaustedError& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr("node s attr value"), HasSubstr("shape [30000]"),
                                  HasSubstr("dtype string"),
                                  HasSubstr(StrCat("fills ", int64_t{30000} * (32 + (1 << 20))))));
    }
  };
  expect_refused([&] { ReadGraphDef(WriteGraphDef(node)); });
  const std::string dir = TempDir();  // emptied again: after WriteGraphDef
  const std::string meta_graph =
      MessageField(1, MessageField(4, "serve")) + MessageField(2, node);  // tags, graph_def
  testing::WriteFile(dir + "/model.meta", meta_graph);
  testing::WriteFile(dir + "/saved_model.pb", VarintField(1, 1) + MessageField(2, meta_graph));
  expect_refused([&] {
    Graph graph;
    Graph::AsDefault in(graph);
    ImportMetaGraph(dir + "/model.meta");
  });
  expect_refused([&] { LoadSavedModel(dir, {"serve"}); });
  // Within the budget a filled string constant reads: 1000 x 1 KiB.
  const MetaGraph meta =
      ReadGraphDef(WriteGraphDef(FilledStringNode("small", 1000, std::string(1024, 'y'))));
  const auto& value = std::get<MetaTensor>(meta.nodes[0].attrs.at("value"));
  ASSERT_TRUE(value.value.has_value());
  EXPECT_EQ(value.value->ToVector<std::string>(),
            std::vector<std::string>(1000, std::string(1024, 'y')));
}

}  // namespace
}  // namespace eager
