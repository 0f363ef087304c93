// A TF 2 SavedModel's non-signature tf.functions (saving/saver/
// saved_function.h), from files crafted byte by byte: a function traced
// twice (float32 [2] and [2,2]) is called positionally and by argument
// name, each call running the trace its input's shape matches; a child
// object's method is found by its dotted path; inputs no trace takes, an
// unknown function, a bound input out of range and a captured object that
// is not a variable are clear errors naming the function. TF Serving's
// half_plus_two (TF 2.14) runs its methods with their captured variables. TF 2.21 judges
// real modules in tests/tf_graphs/saved_model_tf2_test.py.

#include "saving/saver/saved_function.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "ops/session.h"
#include "runtime/errors.h"
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

constexpr int kFloat = 1;  // DT_FLOAT

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// FunctionDef `name`(a: float) -> y = op(a) (Identity or Neg).
std::string UnaryFunction(const std::string& name, const std::string& op) {
  const auto arg = [](const std::string& n) { return MessageField(1, n) + VarintField(3, kFloat); };
  const std::string signature =
      MessageField(1, name) + MessageField(2, arg("a")) + MessageField(3, arg("y"));
  const std::string t =
      MessageField(5, MessageField(1, "T") + MessageField(2, VarintField(6, kFloat)));
  const std::string node = MessageField(1, "op") + MessageField(2, op) + MessageField(3, "a") + t;
  return MessageField(1, signature) + MessageField(3, node) +
         MessageField(
             4, MessageField(1, "y") + MessageField(2, op == "Neg" ? "op:y:0" : "op:output:0"));
}

// StructuredValue bytes.
std::string Spec(const std::string& name, const std::vector<int64_t>& dims) {
  std::string shape;
  for (int64_t d : dims) shape += MessageField(2, VarintField(1, d));
  return MessageField(33, MessageField(1, name) + MessageField(2, shape) + VarintField(3, kFloat));
}
std::string Tuple(const std::vector<std::string>& values) {
  std::string bytes;
  for (const std::string& v : values) bytes += MessageField(1, v);
  return MessageField(52, bytes);
}
std::string Dict(const std::map<std::string, std::string>& fields) {
  std::string bytes;
  for (const auto& [key, value] : fields) {
    bytes += MessageField(1, MessageField(1, key) + MessageField(2, value));
  }
  return MessageField(53, bytes);
}

// SavedConcreteFunction bytes: positional argument `a` of `dims`.
std::string Trace(const std::vector<int64_t>& dims, const std::string& output,
                  const std::vector<int>& bound = {}) {
  std::string bytes;
  for (int b : bound) bytes += VarintField(2, b);
  return bytes + MessageField(3, Tuple({Tuple({Spec("a", dims)}), Dict({})})) +
         MessageField(4, output);
}

std::string Child(int id, const std::string& name) {
  return MessageField(1, VarintField(1, id) + MessageField(2, name));
}
std::string Function(const std::vector<std::string>& traces) {
  std::string bytes;
  for (const std::string& t : traces) bytes += MessageField(1, t);
  return MessageField(6, bytes);
}

// A TF 2 SavedModel: the root's method "scale" traced for float32 [2]
// (returns a) and [2,2] (returns {"neg": -a}); child "enc" with method
// "__call__" (its [?] trace returns a); "bad" captures `bound`.
std::string WriteModel(int bound = 2) {
  std::string library;
  for (const auto& [name, op] :
       std::vector<std::pair<std::string, std::string>>{{"scale_vec", "Identity"},
                                                        {"scale_mat", "Neg"},
                                                        {"enc_call", "Identity"},
                                                        {"bad_call", "Identity"}}) {
    library += MessageField(1, UnaryFunction(name, op));
  }
  const std::string nodes =
      MessageField(1, Child(1, "scale") + Child(2, "enc") + Child(4, "bad")) +  // 0: root
      MessageField(1, Function({"scale_vec", "scale_mat"})) +                   // 1
      MessageField(1, Child(3, "__call__")) +                                   // 2: enc
      MessageField(1, Function({"enc_call"})) +                                 // 3
      MessageField(1, Function({"bad_call"}));                                  // 4
  const auto entry = [](const std::string& key, const std::string& value) {
    return MessageField(2, MessageField(1, key) + MessageField(2, value));
  };
  const std::string object_graph =
      nodes + entry("scale_vec", Trace({2}, Spec("y", {2}))) +
      entry("scale_mat", Trace({2, 2}, Dict({{"neg", Spec("neg", {2, 2})}}))) +
      entry("enc_call", Trace({-1}, Spec("y", {-1}))) +
      entry("bad_call", Trace({-1}, Spec("y", {-1}), {bound}));
  const std::string meta_graph = MessageField(1, MessageField(4, "serve")) +
                                 MessageField(2, MessageField(2, library)) +
                                 MessageField(7, object_graph);
  std::string dir = TempDir() + "/model";
  WriteBytes(dir + "/saved_model.pb", VarintField(1, 1) + MessageField(2, meta_graph));
  return dir;
}

TEST(SavedFunctionTest, CallsPickTheTraceTheInputsMatch) {
  SavedModelBundle model = LoadSavedModel(WriteModel(), {"serve"});
  Session sess(model.graph());
  const SavedFunction scale = model.Function("scale");
  ASSERT_EQ(scale.concrete_functions().size(), 2u);
  EXPECT_EQ(DescribeSpec(scale.concrete_functions()[1].inputs[0]), "a: float32 [2,2]");
  const Tensor vec = Tensor::Vector<float>({1.5f, -2});
  auto out = scale(sess, {vec});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out.at("output_0").ToVector<float>(), (std::vector<float>{1.5f, -2}));
  const Tensor mat = Tensor::FromVector<float>({1, 2, 3, 4}, Shape{2, 2});
  out = scale(sess, {{"a", mat}});
  EXPECT_EQ(out.at("neg").ToVector<float>(), (std::vector<float>{-1, -2, -3, -4}));
  out = scale(sess, {mat});  // positional, the same trace
  EXPECT_EQ(out.at("neg").ToVector<float>(), (std::vector<float>{-1, -2, -3, -4}));
  // A second call reuses the call nodes the first added.
  EXPECT_EQ(scale(sess, {vec}).at("output_0").ToVector<float>(), (std::vector<float>{1.5f, -2}));
}

TEST(SavedFunctionTest, AChildsMethodIsFoundByItsPath) {
  SavedModelBundle model = LoadSavedModel(WriteModel(), {"serve"});
  EXPECT_THAT(model.FunctionNames(), ElementsAre("bad", "enc.__call__", "scale"));
  Session sess(model.graph());
  const Tensor x = Tensor::Vector<float>({1, 2, 3, 4, 5});
  EXPECT_EQ(model.Function("enc.__call__")(sess, {x}).at("output_0").ToVector<float>(),
            (std::vector<float>{1, 2, 3, 4, 5}));
  try {
    model.Function("decode");
    FAIL() << "found";
  } catch (const NotFoundError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("no function 'decode'"), HasSubstr("'enc.__call__'")));
  }
}

TEST(SavedFunctionTest, InputsNoTraceTakesNameTheFunctionAndItsSpecs) {
  SavedModelBundle model = LoadSavedModel(WriteModel(), {"serve"});
  Session sess(model.graph());
  const SavedFunction scale = model.Function("scale");
  for (const Tensor& x : {Tensor::Vector<float>({1, 2, 3}), Tensor::Vector<int32_t>({1, 2})}) {
    try {
      scale(sess, {x});
      FAIL() << "ran";
    } catch (const InvalidArgumentError& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr("function 'scale' has no trace for inputs"),
                                  HasSubstr("(a: float32 [2]), (a: float32 [2,2])")));
    }
  }
  EXPECT_THROW(scale(sess, {{"b", Tensor::Vector<float>({1, 2})}}), InvalidArgumentError);
  EXPECT_THROW(scale(sess, std::vector<Tensor>{}), InvalidArgumentError);
}

TEST(SavedFunctionTest, ACapturedObjectThatIsNoVariableIsRefusedNamingIt) {
  SavedModelBundle model = LoadSavedModel(WriteModel(/*bound=*/2), {"serve"});
  Session sess(model.graph());
  try {
    model.Function("bad")(sess, {Tensor::Vector<float>({1})});
    FAIL() << "ran";
  } catch (const UnimplementedError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("function 'bad' trace 'bad_call'"),
                                HasSubstr("captures object 'enc'")));
  }
}

// The model still loads (its signatures would run); Function() says why it
// has no functions.
TEST(SavedFunctionTest, ABoundInputOutOfRangeIsRefusedNamingTheFunction) {
  SavedModelBundle model = LoadSavedModel(WriteModel(/*bound=*/99), {"serve"});
  try {
    model.Function("scale");
    FAIL() << "found";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("function 'bad' trace 'bad_call'"),
                                HasSubstr("bound input 99 is not an object")));
  }
}

// TF Serving's half_plus_two as TF 2.14 saved it (a = 0.5, b = 2, c = 3):
// its methods capture the variables by object id, resolved to the handles
// LoadSavedModel restored.
TEST(SavedFunctionTest, RealTf2HalfPlusTwosMethodsRunWithTheirCapturedVariables) {
  EAGER_SKIP_WITHOUT_REALDATA();
  SavedModelBundle model = LoadSavedModel(
      ::eager::testing::RealdataDir() + "/savedmodel_tf2_half_plus_two/00000123", {"serve"});
  EXPECT_THAT(model.FunctionNames(), ElementsAre("classify_x2y3", "classify_xy", "predict",
                                                 "regress_x2y3", "regress_xy", "regress_xy2"));
  Session sess(model.graph());
  const Tensor x = Tensor::Vector<float>({4});
  auto predict = model.Function("predict")(sess, {x});  // a * x + b
  ASSERT_EQ(predict.size(), 1u);
  EXPECT_EQ(predict.begin()->second.ToVector<float>(), (std::vector<float>{4}));
  auto regress = model.Function("regress_x2y3")(sess, {{"inputs", x}});  // a * x + c
  ASSERT_EQ(regress.size(), 1u);
  EXPECT_EQ(regress.begin()->second.ToVector<float>(), (std::vector<float>{5}));
}

}  // namespace
}  // namespace eager
