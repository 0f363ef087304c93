// A SavedModel's function library read by LoadSavedModel
// (saving/saver/internal/function_library_reader.h), from files crafted
// byte by byte: a call of a library function runs; a polymorphic function
// (an attribute placeholder) and two functions of one name are refused,
// naming the file, the function and the node.

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

}  // namespace
}  // namespace eager
