// A SavedModel's function library read by LoadSavedModel
// (saving/saver/internal/function_library_reader.h), from files crafted
// byte by byte: a call of a library function runs; a polymorphic function
// (an attribute placeholder) and two functions of one name are refused,
// naming the file, the function and the node; a Case's list of branch
// functions is read and exported again as functions.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "ops/session.h"
#include "runtime/errors.h"
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
using ::testing::HasSubstr;

constexpr int kFloat = 1;  // DT_FLOAT

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// NodeDef.attr entry `name` holding the AttrValue bytes `value`.
std::string Attr(const std::string& name, const std::string& value) {
  return MessageField(5, MessageField(1, name) + MessageField(2, value));
}
std::string TypeAttr(const std::string& name, int type) {
  return Attr(name, VarintField(6, type));  // AttrValue.type
}
std::string TypeListAttr(const std::string& name, int type) {
  return Attr(name, MessageField(1, VarintField(6, type)));  // AttrValue.list.type
}
// A NodeDef's bytes.
std::string NodeDef(const std::string& name, const std::string& op,
                    const std::vector<std::string>& inputs, const std::string& attrs) {
  std::string bytes = MessageField(1, name) + MessageField(2, op);
  for (const std::string& input : inputs) bytes += MessageField(3, input);
  return bytes + attrs;
}
std::string ArgDef(const std::string& name, int type) {
  return MessageField(1, name) + VarintField(3, type);
}

// FunctionDef `name`(x: float) -> y = Identity(x), with `t_attr` as the
// body node's T.
std::string IdentityFunction(const std::string& name, const std::string& t_attr) {
  const std::string signature = MessageField(1, name) + MessageField(2, ArgDef("x", kFloat)) +
                                MessageField(3, ArgDef("y", kFloat));
  return MessageField(1, signature) + MessageField(3, NodeDef("id", "Identity", {"x"}, t_attr)) +
         MessageField(4, MessageField(1, "y") + MessageField(2, "id:output:0"));
}

// A SavedModel ("serve") whose graph feeds placeholder x to a call of
// "ident", with `functions` (FunctionDef bytes) as its library.
std::string WriteModel(const std::vector<std::string>& functions) {
  std::string library;
  for (const std::string& f : functions) library += MessageField(1, f);
  const std::string call_attrs = Attr("f", MessageField(10, MessageField(1, "ident"))) +
                                 TypeListAttr("Tin", kFloat) + TypeListAttr("Tout", kFloat);
  const std::string graph_def =
      MessageField(1, NodeDef("x", "Placeholder", {}, TypeAttr("dtype", kFloat))) +
      MessageField(1, NodeDef("call", "StatefulPartitionedCall", {"x"}, call_attrs)) +
      MessageField(2, library);
  const std::string meta_graph =
      MessageField(1, MessageField(4, "serve")) + MessageField(2, graph_def);
  std::string dir = TempDir() + "/model";
  WriteBytes(dir + "/saved_model.pb", VarintField(1, 1) + MessageField(2, meta_graph));
  return dir;
}

TEST(FunctionLibraryTest, ACallOfALibraryFunctionRuns) {
  const std::string dir = WriteModel({IdentityFunction("ident", TypeAttr("T", kFloat))});
  SavedModelBundle model = LoadSavedModel(dir, {"serve"});
  Session sess(model.graph());
  const Tensor x = Tensor::Vector<float>({1.5f, -2});
  EXPECT_EQ(sess.Run("call:0", {{"x:0", x}}).ToVector<float>(), (std::vector<float>{1.5f, -2}));
}

TEST(FunctionLibraryTest, AnAttributePlaceholderIsRefusedNamingFunctionNodeAndAttribute) {
  const std::string dir =
      WriteModel({IdentityFunction("ident", Attr("T", MessageField(9, "T")))});  // "$T"
  try {
    LoadSavedModel(dir, {"serve"});
    FAIL() << "loaded";
  } catch (const UnimplementedError& e) {
    EXPECT_THAT(std::string(e.what()),
                AllOf(HasSubstr(dir), HasSubstr("function 'ident', node 'id'"),
                      HasSubstr("attribute 'T' is the placeholder '$T'")));
  }
}

TEST(FunctionLibraryTest, TwoFunctionsOfOneNameAreRefused) {
  const std::string f = IdentityFunction("ident", TypeAttr("T", kFloat));
  const std::string dir = WriteModel({f, f});
  try {
    LoadSavedModel(dir, {"serve"});
    FAIL() << "loaded";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("defines function 'ident' twice"));
  }
}

// Exported again, a call's "f" is a function attribute (AttrValue.func), as
// TF's importer requires, not the string eager holds it as.
TEST(FunctionLibraryTest, ACallsFunctionAttributeExportsAsAFunction) {
  const std::string dir = WriteModel({IdentityFunction("ident", TypeAttr("T", kFloat))});
  SavedModelBundle model = LoadSavedModel(dir, {"serve"});
  const MetaGraph meta = GraphToMetaGraph(model.graph());
  for (const MetaGraphNode& node : meta.nodes) {
    if (node.name != "call") continue;
    const MetaFunc* f = std::get_if<MetaFunc>(&node.attrs.at("f"));
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->name, "ident");
    return;
  }
  FAIL() << "no node 'call'";
}

// FunctionDef `name`(x: float) -> y = Neg(x).
std::string NegFunction(const std::string& name) {
  const std::string signature = MessageField(1, name) + MessageField(2, ArgDef("x", kFloat)) +
                                MessageField(3, ArgDef("y", kFloat));
  return MessageField(1, signature) +
         MessageField(3, NodeDef("neg", "Neg", {"x"}, TypeAttr("T", kFloat))) +
         MessageField(4, MessageField(1, "y") + MessageField(2, "neg:y:0"));
}

// A Case's branches are a list of functions (AttrValue.list.func): read as
// their names, run, and exported again as functions.
TEST(FunctionLibraryTest, ACasesBranchesAreReadRunAndExportedAsFunctions) {
  std::string branches;
  for (const char* f : {"ident", "neg"}) branches += MessageField(9, MessageField(1, f));
  const std::string case_attrs = Attr("branches", MessageField(1, branches)) +
                                 TypeListAttr("Tin", kFloat) + TypeListAttr("Tout", kFloat);
  const std::string graph_def =
      MessageField(1, NodeDef("x", "Placeholder", {}, TypeAttr("dtype", kFloat))) +
      MessageField(1, NodeDef("i", "Placeholder", {}, TypeAttr("dtype", 3))) +  // DT_INT32
      MessageField(1, NodeDef("case", "StatelessCase", {"i", "x"}, case_attrs)) +
      MessageField(2, MessageField(1, IdentityFunction("ident", TypeAttr("T", kFloat))) +
                          MessageField(1, NegFunction("neg")));
  const std::string meta_graph =
      MessageField(1, MessageField(4, "serve")) + MessageField(2, graph_def);
  const std::string dir = TempDir() + "/case_model";
  WriteBytes(dir + "/saved_model.pb", VarintField(1, 1) + MessageField(2, meta_graph));
  SavedModelBundle model = LoadSavedModel(dir, {"serve"});
  Session sess(model.graph());
  const Tensor x = Tensor::Vector<float>({1.5f, -2});
  const auto run = [&](int32_t i) {
    return sess.Run("case:0", {{"x:0", x}, {"i:0", Tensor(i)}}).ToVector<float>();
  };
  EXPECT_EQ(run(0), (std::vector<float>{1.5f, -2}));
  EXPECT_EQ(run(1), (std::vector<float>{-1.5f, 2}));
  EXPECT_EQ(run(7), (std::vector<float>{-1.5f, 2}));  // out of range: the last branch
  const MetaGraph meta = GraphToMetaGraph(model.graph());
  for (const MetaGraphNode& node : meta.nodes) {
    if (node.name != "case") continue;
    const MetaListBox* list = std::get_if<MetaListBox>(&node.attrs.at("branches"));
    ASSERT_NE(list, nullptr);
    EXPECT_EQ((**list).func, (std::vector<std::string>{"ident", "neg"}));
    EXPECT_TRUE((**list).s.empty());
    return;
  }
  FAIL() << "no node 'case'";
}

}  // namespace
}  // namespace eager
