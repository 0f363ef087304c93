#include "saving/saver/meta_graph_def.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "runtime/errors.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using ::eager::testing::RealdataDir;
using ::eager::testing::TempDir;

// Every .meta and saved_model.pb of the realdata cases.
std::vector<std::string> RealMetaFiles() {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(RealdataDir())) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && (e.path().extension() == ".meta" || name == "saved_model.pb")) {
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

const char* KindName(MetaCollection::Kind kind) {
  switch (kind) {
    case MetaCollection::Kind::kNodeList:
      return "node_list";
    case MetaCollection::Kind::kBytesList:
      return "bytes_list";
    case MetaCollection::Kind::kInt64List:
      return "int64_list";
    case MetaCollection::Kind::kFloatList:
      return "float_list";
    case MetaCollection::Kind::kNone:
      return "";
  }
  return "";
}

// The lines tests/saving/saver/meta_listing.py prints, from eager's reading.
std::string Listing(const std::vector<MetaGraph>& graphs) {
  std::ostringstream out;
  auto join = [](const auto& items) {
    std::string s;
    for (const auto& item : items) {
      if (!s.empty()) s.push_back(',');
      s.append(item);
    }
    return s;
  };
  for (const MetaGraph& meta : graphs) {
    out << "G " << meta.tensorflow_version << " " << meta.producer << " " << meta.min_consumer
        << "\n";
    for (const MetaGraphNode& n : meta.nodes) {
      std::vector<std::string> keys;
      for (const auto& [k, v] : n.attrs) keys.push_back(k);
      out << "N " << n.name << "|" << n.op << "|" << join(n.inputs) << "|" << n.device << "|"
          << join(keys) << "\n";
    }
    if (meta.saver_def) {
      const MetaSaverDef& s = *meta.saver_def;
      out << "S " << s.filename_tensor_name << "|" << s.save_tensor_name << "|" << s.restore_op_name
          << "|" << s.max_to_keep << "|" << s.version << "\n";
    }
    for (const auto& [name, c] : meta.collections)
      out << "C " << name << "|" << KindName(c.kind) << "\n";
  }
  return out.str();
}

// `log` is a scratch file (not inside a directory the test still needs).
std::string TfckptListing(const std::string& path, const std::string& log) {
  const std::string script = std::string(EAGER_SOURCE_DIR) + "/tests/saving/saver/meta_listing.py";
  const std::string command = "python3 '" + script + "' '" + EAGER_TFCKPT + "' '" + path + "'";
  EXPECT_EQ(std::system((command + " >'" + log + "' 2>&1").c_str()), 0) << testing::ReadFile(log);
  return testing::ReadFile(log);
}

std::vector<MetaGraph> Read(const std::string& path) {
  if (fs::path(path).filename() == "saved_model.pb") return ReadSavedModelMetaGraphs(path);
  return {ReadMetaGraph(path)};
}

TEST(MetaGraphTest, ReadsEveryRealMetaFileAsTheIndependentDecoderDoes) {
  EAGER_SKIP_WITHOUT_REALDATA();
  EAGER_SKIP_WITHOUT_TFCKPT();
  const std::string log = TempDir() + "/listing";
  const std::vector<std::string> files = RealMetaFiles();
  // Counted from the folder, so a case added to realdata is read here too
  // (24 in the folder today: 16 .meta and 8 saved_model.pb).
  ASSERT_FALSE(files.empty());
  std::cout << files.size() << " meta graph files under " << RealdataDir() << "\n";
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    const std::vector<MetaGraph> graphs = Read(path);
    ASSERT_FALSE(graphs.empty());
    EXPECT_FALSE(graphs[0].nodes.empty());
    const std::string ours = Listing(graphs);
    EXPECT_TRUE(ours == TfckptListing(path, log)) << "eager's listing differs from tfckpt.py's";
  }
}

TEST(MetaGraphTest, ScopesFileDetails) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const MetaGraph meta = ReadMetaGraph(RealdataDir() + "/tf1_saver_scopes_tiny/model.ckpt.meta");
  EXPECT_EQ(meta.tensorflow_version, "1.2.1");
  EXPECT_EQ(meta.producer, 22);
  ASSERT_TRUE(meta.saver_def);
  EXPECT_EQ(meta.saver_def->filename_tensor_name, "save/Const:0");
  EXPECT_EQ(meta.saver_def->restore_op_name, "save/restore_all");
  EXPECT_EQ(meta.saver_def->version, 2);
  EXPECT_EQ(meta.saver_def->max_to_keep, 5);
  EXPECT_FLOAT_EQ(meta.saver_def->keep_checkpoint_every_n_hours, 10000.0f);

  const std::vector<MetaVariableDef> vars = VariableDefsOf(meta, "variables");
  ASSERT_EQ(vars.size(), 7u);
  EXPECT_EQ(vars[0].variable_name, "foo/v:0");
  EXPECT_EQ(vars[0].initializer_name, "foo/v/Assign");
  EXPECT_EQ(vars[0].snapshot_name, "foo/v/read:0");
  EXPECT_TRUE(VariableDefsOf(meta, "no_such_collection").empty());

  auto node = [&](const std::string& name) -> const MetaGraphNode& {
    auto it = std::find_if(meta.nodes.begin(), meta.nodes.end(),
                           [&](const MetaGraphNode& n) { return n.name == name; });
    EXPECT_NE(it, meta.nodes.end()) << name;
    return *it;
  };
  const MetaGraphNode& c = node("Const_1");
  EXPECT_EQ(c.op, "Const");
  EXPECT_EQ(std::get<MetaType>(c.attrs.at("dtype")).tf_dtype, 1);
  const MetaTensor& value = std::get<MetaTensor>(c.attrs.at("value"));
  ASSERT_TRUE(value.value);
  EXPECT_EQ(value.value->ToVector<float>(), std::vector<float>{2.0f});
  EXPECT_EQ(std::get<MetaShape>(node("v2").attrs.at("shape")).dims, std::vector<int64_t>{1});
  const MetaTensor& filename = std::get<MetaTensor>(node("save/Const").attrs.at("value"));
  EXPECT_EQ(filename.value->scalar<std::string>(), "model");
  const MetaTensor& names =
      std::get<MetaTensor>(node("save/SaveV2/tensor_names").attrs.at("value"));
  EXPECT_EQ(names.value->ToVector<std::string>(),
            (std::vector<std::string>{"foo/bar/v", "foo/v", "foo1/v", "v", "v1", "v1_1", "v2"}));
  EXPECT_EQ(std::get<MetaListBox>(node("save/SaveV2").attrs.at("dtypes"))->type,
            std::vector<int>(7, 1));
  EXPECT_EQ(node("add").inputs, (std::vector<std::string>{"v1_1/read", "v2/read"}));
  std::vector<std::string> ops;
  for (const MetaOpDef& op : meta.stripped_op_list) ops.push_back(op.name);
  EXPECT_EQ(
      ops, (std::vector<std::string>{"Add", "Assign", "Const", "Identity", "Mul", "NoOp",
                                     "RandomUniform", "RestoreV2", "SaveV2", "Sub", "VariableV2"}));
}

TEST(MetaGraphTest, WrittenFileReadsBackAndListsLikeTheOriginal) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string dir = TempDir();
  for (const char* name : {"/tf1_saver_lenet_adam/lenet.meta",
                           "/tf1_saver_handson_bn_partial_adam/dnn11_0_to_4.ckpt.meta"}) {
    const std::string original = RealdataDir() + name;
    const std::string copy = dir + "/copy.meta";
    const MetaGraph meta = ReadMetaGraph(original);
    WriteMetaGraph(copy, meta);
    EXPECT_EQ(Listing({ReadMetaGraph(copy)}), Listing({meta})) << name;
    if (testing::HaveTfckpt()) {
      EXPECT_TRUE(TfckptListing(copy, dir + "/log") == TfckptListing(original, dir + "/log"))
          << name << ": tfckpt.py lists the copy differently";
    }
    // Every constant survives the round trip bit for bit.
    const MetaGraph again = ReadMetaGraph(copy);
    for (size_t i = 0; i < meta.nodes.size(); ++i) {
      auto it = meta.nodes[i].attrs.find("value");
      if (it == meta.nodes[i].attrs.end() || !std::holds_alternative<MetaTensor>(it->second)) {
        continue;
      }
      const MetaTensor& a = std::get<MetaTensor>(it->second);
      const MetaTensor& b = std::get<MetaTensor>(again.nodes[i].attrs.at("value"));
      ASSERT_EQ(a.value.has_value(), b.value.has_value()) << meta.nodes[i].name;
      if (a.value && a.value->dtype() != DType::kString) {
        const auto x = a.value->bytes();
        const auto y = b.value->bytes();
        EXPECT_TRUE(std::equal(x.begin(), x.end(), y.begin(), y.end())) << meta.nodes[i].name;
      }
    }
  }
}

TEST(MetaGraphTest, ErrorsNameTheFile) {
  const std::string dir = TempDir();
  EXPECT_THROW(ReadMetaGraph(dir + "/missing.meta"), NotFoundError);
  testing::WriteFile(dir + "/bad.meta", std::string("\xff\xff\xff\xff garbage", 12));
  try {
    ReadMetaGraph(dir + "/bad.meta");
    FAIL() << "expected DataLossError";
  } catch (const DataLossError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(dir + "/bad.meta"));
  }
}

}  // namespace
}  // namespace eager
