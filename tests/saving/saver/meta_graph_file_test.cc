// MetaGraphFile, the streaming read of graph files (issue 27): every node
// reaches the sink once, in file order, with the graph it belongs to; a file
// whose framing is broken throws before any node is handed out; a bad node
// stops the stream, and LoadSavedModel then returns no bundle.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ops/session.h"
#include "runtime/errors.h"
#include "runtime/graph.h"
#include "saving/saver/meta_graph_def.h"
#include "saving/saver/meta_graph_import_export.h"
#include "saving/saver/saved_model.h"
#include "tests/saving/saving_test_util.h"
#include "tests/testing/protobuf_wire.h"

namespace eager {
namespace {

using ::eager::testing::TempDir;
using ::eager::testing::wire::MessageField;
using ::eager::testing::wire::VarintField;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

MetaGraphNode AddNode(const std::string& name, const std::string& a, const std::string& b) {
  return {.name = name, .op = "AddV2", .inputs = {a, b}, .attrs = {{"T", MetaType{1}}}};
}

MetaGraph Chain(std::vector<std::string> tags, const std::string& prefix, int adds) {
  MetaGraph meta;
  meta.tags = std::move(tags);
  meta.producer = 38;
  meta.nodes.push_back(
      {.name = prefix + "x", .op = "Placeholder", .attrs = {{"dtype", MetaType{1}}}});
  for (int i = 0; i < adds; ++i) {
    meta.nodes.push_back(AddNode(StrCat(prefix, "add", i),
                                 i == 0 ? prefix + "x" : StrCat(prefix, "add", i - 1),
                                 prefix + "x"));
  }
  return meta;
}

std::vector<std::string> StreamedNames(const MetaGraphFile& file, size_t index) {
  std::vector<std::string> names;
  file.ForEachNode(index, [&](MetaGraphNode&& node) { names.push_back(node.name); });
  return names;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

template <typename E, typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "no error of the expected kind";
}

TEST(MetaGraphFileTest, SavedModelNodesArriveInFileOrderWithTheirGraph) {
  const std::string path = TempDir() + "/two/saved_model.pb";
  WriteSavedModel(path, {Chain({"serve"}, "s/", 3), Chain({"train", "gpu"}, "t/", 1)});
  const MetaGraphFile file(path, MetaGraphFile::Kind::kSavedModel);
  ASSERT_EQ(file.num_graphs(), 2u);
  EXPECT_THAT(file.graph(0).tags, ElementsAre("serve"));
  EXPECT_THAT(file.graph(1).tags, ElementsAre("train", "gpu"));
  EXPECT_EQ(file.graph(0).producer, 38);
  EXPECT_TRUE(file.graph(0).nodes.empty());  // the header only
  EXPECT_EQ(file.num_nodes(0), 4u);
  EXPECT_EQ(file.num_nodes(1), 2u);
  EXPECT_THAT(StreamedNames(file, 0), ElementsAre("s/x", "s/add0", "s/add1", "s/add2"));
  EXPECT_THAT(StreamedNames(file, 1), ElementsAre("t/x", "t/add0"));
  EXPECT_THAT(file.OpTypes(0), ElementsAre("AddV2", "Placeholder"));
  // The nodes stream whole: inputs and attributes as written.
  std::vector<MetaGraphNode> nodes;
  file.ForEachNode(1, [&](MetaGraphNode&& node) { nodes.push_back(std::move(node)); });
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_THAT(nodes[1].inputs, ElementsAre("t/x", "t/x"));
  EXPECT_EQ(std::get<MetaType>(nodes[1].attrs.at("T")).tf_dtype, 1);
  // The whole-graph read is the same stream, kept.
  const std::vector<MetaGraph> whole = ReadSavedModelMetaGraphs(path);
  ASSERT_EQ(whole.size(), 2u);
  EXPECT_EQ(whole[0].nodes.size(), 4u);
  EXPECT_EQ(whole[1].nodes.back().name, "t/add0");
}

TEST(MetaGraphFileTest, RepeatedGraphDefFieldsMergeInFileOrder) {
  // Two MetaGraphDefs back to back are one, as protobuf merges them: the
  // GraphDefs' nodes add up and the last versions win.
  const std::string dir = TempDir();
  MetaGraph first = Chain({"a"}, "p/", 1);
  MetaGraph second = Chain({"b"}, "q/", 0);
  second.producer = 40;
  WriteMetaGraph(dir + "/first.meta", first);
  WriteMetaGraph(dir + "/second.meta", second);
  WriteBytes(dir + "/both.meta", ReadBytes(dir + "/first.meta") + ReadBytes(dir + "/second.meta"));
  const MetaGraphFile file(dir + "/both.meta", MetaGraphFile::Kind::kMetaGraphDef);
  ASSERT_EQ(file.num_graphs(), 1u);
  EXPECT_EQ(file.num_nodes(0), 3u);
  EXPECT_THAT(StreamedNames(file, 0), ElementsAre("p/x", "p/add0", "q/x"));
  EXPECT_EQ(file.graph(0).producer, 40);
  EXPECT_THAT(file.graph(0).tags, ElementsAre("a", "b"));
}

TEST(MetaGraphFileTest, TruncatedFileThrowsNamingItBeforeAnyNodeAndLoadsNoBundle) {
  const std::string dir = TempDir() + "/export";
  const std::string path = dir + "/saved_model.pb";
  WriteSavedModel(path, {Chain({"serve"}, "", 200)});
  const std::string bytes = ReadBytes(path);
  ASSERT_EQ(LoadSavedModel(dir, {"serve"}).graph().num_nodes(), 201);
  // Cut inside the second node, in the middle and one byte short of the end.
  for (const size_t size : {bytes.find("add0") + 2, bytes.size() / 2, bytes.size() - 1}) {
    SCOPED_TRACE(size);
    WriteBytes(path, bytes.substr(0, size));
    EXPECT_THAT(
        ErrorOf<DataLossError>([&] { MetaGraphFile(path, MetaGraphFile::Kind::kSavedModel); }),
        AllOf(HasSubstr(path), HasSubstr("not a binary SavedModel")));
    EXPECT_THAT(ErrorOf<DataLossError>([&] { LoadSavedModel(dir, {"serve"}); }), HasSubstr(path));
  }
}

TEST(MetaGraphFileTest, FileCutAfterOpeningThrowsNamingItWhenStreamed) {
  // The nodes are read from the file when streamed, not from a copy.
  const std::string path = TempDir() + "/cut/saved_model.pb";
  WriteSavedModel(path, {Chain({"serve"}, "", 5000)});
  const std::string bytes = ReadBytes(path);
  const MetaGraphFile file(path, MetaGraphFile::Kind::kSavedModel);
  ASSERT_EQ(file.num_nodes(0), 5001u);
  WriteBytes(path, bytes.substr(0, bytes.size() / 2));
  size_t streamed = 0;
  EXPECT_THAT(
      ErrorOf<DataLossError>([&] { file.ForEachNode(0, [&](MetaGraphNode&&) { ++streamed; }); }),
      AllOf(HasSubstr(path), HasSubstr("not a binary SavedModel")));
  EXPECT_GT(streamed, 0u);
  EXPECT_LT(streamed, 5001u);
}

// Protobuf wire format, just enough for a SavedModel with a bad node.
// GraphDef.node: a NodeDef of `op` with an `attrs` AttrValue map entry.
std::string NodeField(const std::string& name, const std::string& op,
                      const std::string& attr = "") {
  return MessageField(1, MessageField(1, name) + MessageField(2, op) + attr);
}

TEST(MetaGraphFileTest, BadNodeStopsTheStreamThereAndLoadsNoBundle) {
  // A float Const of shape [2] whose tensor_content holds 4 bytes, not 8.
  const std::string tensor = VarintField(1, 1) +
                             MessageField(2, MessageField(2, VarintField(1, 2))) +
                             MessageField(4, std::string("\x00\x00\x80\x3f", 4));
  const std::string value =
      MessageField(5, MessageField(1, "value") + MessageField(2, MessageField(8, tensor)));
  const std::string graph_def = NodeField("a", "NoOp") + NodeField("b", "NoOp") +
                                NodeField("bad", "Const", value) + NodeField("c", "NoOp");
  const std::string meta_graph =
      MessageField(1, MessageField(4, "serve")) + MessageField(2, graph_def);
  const std::string dir = TempDir() + "/bad_node";
  const std::string path = dir + "/saved_model.pb";
  WriteBytes(path, VarintField(1, 1) + MessageField(2, meta_graph));

  const MetaGraphFile file(path, MetaGraphFile::Kind::kSavedModel);  // the framing is fine
  EXPECT_EQ(file.num_nodes(0), 4u);
  std::vector<std::string> names;
  EXPECT_THAT(
      ErrorOf<DataLossError>(
          [&] { file.ForEachNode(0, [&](MetaGraphNode&& node) { names.push_back(node.name); }); }),
      AllOf(HasSubstr(path), HasSubstr("node bad attr value"), HasSubstr("tensor_content")));
  EXPECT_THAT(names, ElementsAre("a", "b"));
  EXPECT_THAT(ErrorOf<DataLossError>([&] { LoadSavedModel(dir, {"serve"}); }),
              HasSubstr("node bad attr value"));
  // Into a graph of one's own, the nodes before the bad one are there.
  Graph graph;
  EXPECT_THROW(ImportIntoGraph(file, 0, graph), DataLossError);
  EXPECT_EQ(graph.num_nodes(), 2);
}

// A function call found while streaming loads (TF 2 SavedModels do); a call
// of a function the file's library lacks fails when it runs, naming both.
TEST(MetaGraphFileTest, LoadSavedModelLoadsAFunctionCallAndRunsItOnlyWithItsFunction) {
  const std::string dir = TempDir() + "/tf2";
  MetaGraph meta = Chain({"serve"}, "", 5);
  meta.nodes.push_back({.name = "call",
                        .op = "StatefulPartitionedCall",
                        .inputs = {},
                        .attrs = {{"f", MetaFunc{"missing_fn"}}}});
  meta.nodes.push_back(AddNode("after", "x", "x"));
  WriteSavedModel(dir + "/saved_model.pb", {meta});
  SavedModelBundle model = LoadSavedModel(dir, {"serve"});
  EXPECT_EQ(model.graph().FindNode("call")->Attr<std::string>("f"), "missing_fn");
  Session sess(model.graph());
  EXPECT_THAT(ErrorOf<NotFoundError>([&] { sess.Run(model.graph().OperationByName("call")); }),
              AllOf(HasSubstr("node 'call'"), HasSubstr("'missing_fn'")));
}

TEST(MetaGraphFileTest, GraphDefStreamsItsNodes) {
  const std::string path = TempDir() + "/graph.pb";
  WriteBytes(path, NodeField("n0", "NoOp") + NodeField("n1", "NoOp") +
                       MessageField(4, VarintField(1, 27)));  // versions {producer 27}
  const MetaGraphFile file(path, MetaGraphFile::Kind::kGraphDef);
  EXPECT_EQ(file.graph(0).producer, 27);
  EXPECT_THAT(StreamedNames(file, 0), ElementsAre("n0", "n1"));
  EXPECT_THAT(ErrorOf<NotFoundError>(
                  [&] { MetaGraphFile(path + ".missing", MetaGraphFile::Kind::kGraphDef); }),
              HasSubstr(path + ".missing"));
}

}  // namespace
}  // namespace eager
