// Resource variables in a Session (ops/resource_variable_ops.h,
// ops/resource_training_ops.h): handles from VarHandleOp reach the Graph's
// Variable; reads, assignments, gathers, shapes, destruction and the
// ResourceApply* updates, with TF's errors. TF 2.21 judges whole graphs in
// tests/tf_graphs/resource_variables_test.py.

#include "ops/resource_variable_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ops/session.h"
#include "runtime/graph.h"
#include "runtime/variable.h"

namespace eager {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A graph with resource variables, built from node records as an importer
// makes them.
class ResourceGraph {
 public:
  // VarHandleOp `name` (shared_name `name`) and its Variable.
  Variable& AddVariable(const std::string& name, DType dtype, const Shape& shape) {
    AddHandle(name, name, dtype, shape);
    GraphVariable record;
    record.variable_node = name;
    return graph.ImportVariable(record);
  }
  void AddHandle(const std::string& name, const std::string& shared_name, DType dtype,
                 const Shape& shape) {
    Node node{.name = name, .op = "VarHandleOp"};
    node.attrs = {{"dtype", dtype},
                  {"shape", shape},
                  {"container", std::string()},
                  {"shared_name", shared_name}};
    graph.AddNode(std::move(node));
  }
  std::string Const(const std::string& name, const Tensor& value) {
    Node node{.name = name, .op = "Const"};
    node.attrs = {{"value", value}, {"dtype", value.dtype()}};
    graph.AddNode(std::move(node));
    return name;
  }
  std::string Add(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                  Attrs attrs) {
    Node node{.name = name, .op = op, .inputs = std::move(inputs), .attrs = std::move(attrs)};
    graph.AddNode(std::move(node));
    return name;
  }
  std::string Assign(const std::string& name, const std::string& handle, const Tensor& value,
                     const std::string& op = "AssignVariableOp") {
    const std::string c = Const(name + "/value", value);
    return Add(name, op, {handle, c}, Attrs{{"dtype", value.dtype()}});
  }
  std::string Read(const std::string& name, const std::string& handle, DType dtype) {
    return Add(name, "ReadVariableOp", {handle}, Attrs{{"dtype", dtype}});
  }

  Graph graph;
};

std::vector<float> Floats(const Tensor& t) { return t.ToVector<float>(); }

// Runs the operation `op` (Session::Run("name") fetches a tensor).
void Do(Session& sess, const std::string& op) { sess.Run(std::vector<Fetch>{op}); }

TEST(ResourceVariableOpsTest, AssignReadAddSubShapeAndInitialized) {
  ResourceGraph g;
  Variable& v = g.AddVariable("v", DType::kFloat32, Shape{2});
  g.Assign("assign", "v", Tensor::Vector<float>({1, 2}));
  g.Assign("add", "v", Tensor::Vector<float>({10, 20}), "AssignAddVariableOp");
  g.Assign("sub", "v", Tensor::Vector<float>({1, 1}), "AssignSubVariableOp");
  g.Read("read", "v", DType::kFloat32);
  g.Add("is_init", "VarIsInitializedOp", {"v"}, {});
  g.Add("shape", "VariableShape", {"v"}, Attrs{{"out_type", DType::kInt32}});
  g.Add("shape64", "VariableShape", {"v"}, Attrs{{"out_type", DType::kInt64}});
  Session sess(g.graph);
  EXPECT_FALSE(sess.Run("is_init:0").data<bool>()[0]);
  Do(sess, "assign");
  EXPECT_TRUE(sess.Run("is_init:0").data<bool>()[0]);
  EXPECT_EQ(Floats(sess.Run("read:0")), (std::vector<float>{1, 2}));
  EXPECT_EQ(Floats(v.stored_value()), (std::vector<float>{1, 2}));  // the Variable is the resource
  Do(sess, "add");
  Do(sess, "sub");
  EXPECT_EQ(Floats(sess.Run("read:0")), (std::vector<float>{10, 21}));
  const Tensor shape = sess.Run("shape:0");
  EXPECT_EQ(shape.dtype(), DType::kInt32);
  EXPECT_EQ(shape.ToVector<int32_t>(), (std::vector<int32_t>{2}));
  const Tensor shape64 = sess.Run("shape64:0");
  EXPECT_EQ(shape64.dtype(), DType::kInt64);
  EXPECT_EQ(shape64.ToVector<int64_t>(), (std::vector<int64_t>{2}));
  // Another Session on the graph sees the same variable (the graph owns it).
  Session other(g.graph);
  EXPECT_EQ(Floats(other.Run("read:0")), (std::vector<float>{10, 21}));
}

TEST(ResourceVariableOpsTest, ReadingAnUninitializedVariableNamesIt) {
  ResourceGraph g;
  g.AddVariable("dense/kernel", DType::kFloat32, Shape{2, 3});
  g.Read("read", "dense/kernel", DType::kFloat32);
  g.Assign("add", "dense/kernel", Tensor::Zeros(Shape{2, 3}), "AssignAddVariableOp");
  Session sess(g.graph);
  for (const char* fetch : {"read:0", "add"}) {
    try {
      sess.Run(std::vector<Fetch>{std::string(fetch)});
      FAIL() << fetch;
    } catch (const FailedPreconditionError& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr("Could not find variable dense/kernel"),
                                  HasSubstr("uninitialized"), HasSubstr("[2,3]")));
    }
  }
}

TEST(ResourceVariableOpsTest, DTypeMismatchNamesBothDTypes) {
  ResourceGraph g;
  g.AddVariable("v", DType::kFloat32, Shape{2});
  g.Assign("assign", "v", Tensor::Vector<float>({1, 2}));
  g.Read("read_int", "v", DType::kInt32);
  g.Assign("assign_double", "v", Tensor::Vector<double>({1, 2}));
  Session sess(g.graph);
  Do(sess, "assign");
  try {
    sess.Run("read_int:0");
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("read variable v with wrong dtype"),
                                HasSubstr("Expected float32 got int32"), HasSubstr("read_int")));
  }
  try {
    Do(sess, "assign_double");
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("assign variable v with wrong dtype"),
                                HasSubstr("Expected float32 got float64")));
  }
}

TEST(ResourceVariableOpsTest, AssignOfAnotherShape) {
  ResourceGraph g;
  g.AddVariable("v", DType::kFloat32, Shape{2});
  const std::string c = g.Const("three", Tensor::Vector<float>({1, 2, 3}));
  g.Add("validated", "AssignVariableOp", {"v", c},
        Attrs{{"dtype", DType::kFloat32}, {"validate_shape", true}});
  g.Add("unvalidated", "AssignVariableOp", {"v", c}, Attrs{{"dtype", DType::kFloat32}});
  Session sess(g.graph);
  try {
    Do(sess, "validated");
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("variable 'v' has shape [2]"), HasSubstr("[3]")));
  }
  // TF would give the variable the new shape; eager's variables keep theirs.
  EXPECT_THROW(Do(sess, "unvalidated"), UnimplementedError);
}

TEST(ResourceVariableOpsTest, ResourceGatherTakesRows) {
  ResourceGraph g;
  g.AddVariable("table", DType::kFloat32, Shape{3, 2});
  g.Assign("assign", "table", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{3, 2}));
  const std::string ids = g.Const("ids", Tensor::Vector<int64_t>({2, 0, 2}));
  g.Add("gather", "ResourceGather", {"table", ids},
        Attrs{{"dtype", DType::kFloat32}, {"Tindices", DType::kInt64}});
  Session sess(g.graph);
  Do(sess, "assign");
  const Tensor rows = sess.Run("gather:0");
  EXPECT_EQ(rows.shape(), (Shape{3, 2}));
  EXPECT_EQ(Floats(rows), (std::vector<float>{5, 6, 1, 2, 5, 6}));
}

TEST(ResourceVariableOpsTest, DestroyResourceOpUninitializes) {
  ResourceGraph g;
  g.AddVariable("v", DType::kFloat32, Shape{});
  g.Assign("assign", "v", Tensor(1.0f));
  g.Add("destroy", "DestroyResourceOp", {"v"}, {});
  g.Add("destroy_strict", "DestroyResourceOp", {"v"}, Attrs{{"ignore_lookup_error", false}});
  g.Add("is_init", "VarIsInitializedOp", {"v"}, {});
  Session sess(g.graph);
  Do(sess, "assign");
  Do(sess, "destroy");
  EXPECT_FALSE(sess.Run("is_init:0").data<bool>()[0]);
  Do(sess, "destroy");  // ignore_lookup_error = true: a missing one is fine
  try {
    Do(sess, "destroy_strict");
    FAIL();
  } catch (const NotFoundError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Resource v does not exist"));
  }
}

TEST(ResourceVariableOpsTest, HandlesWithOneSharedNameReachOneVariable) {
  ResourceGraph g;
  g.AddVariable("v", DType::kFloat32, Shape{});
  g.AddHandle("v_again", "v", DType::kFloat32, Shape{});
  g.AddHandle("w", "w", DType::kFloat32, Shape{});
  g.Assign("assign", "v", Tensor(3.0f));
  g.Read("read_again", "v_again", DType::kFloat32);
  g.Read("read_w", "w", DType::kFloat32);
  Session sess(g.graph);
  Do(sess, "assign");
  EXPECT_EQ(sess.Run("read_again:0").data<float>()[0], 3.0f);
  try {
    sess.Run("read_w:0");
    FAIL();
  } catch (const NotFoundError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("node 'w' (VarHandleOp)"), HasSubstr("shared_name 'w'")));
  }
}

// ---- ResourceApply*: one float64 element, the formulas by hand -------------------

// Variables var (=1.5) and slots s1 (=0.25), s2 (=0.5); `op` on them with
// the scalars and grad 0.5.
double RunApply(const std::string& op, int slots, const std::vector<double>& scalars,
                const Attrs& extra, std::vector<double>* slot_values,
                size_t grad_at = static_cast<size_t>(-1)) {
  ResourceGraph g;
  const char* names[] = {"var", "s1", "s2"};
  const double initial[] = {1.5, 0.25, 0.5};
  std::vector<std::string> inputs;
  std::vector<std::string> init;
  for (int i = 0; i <= slots; ++i) {
    g.AddVariable(names[i], DType::kFloat64, Shape{1});
    init.push_back(
        g.Assign(std::string("init_") + names[i], names[i], Tensor::Vector<double>({initial[i]})));
    inputs.push_back(names[i]);
  }
  if (grad_at > scalars.size()) grad_at = scalars.size();
  for (size_t i = 0; i <= scalars.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    if (i == grad_at) {
      inputs.push_back(g.Const(name, Tensor::Vector<double>({0.5})));
    }
    if (i < scalars.size()) inputs.push_back(g.Const(name + "s", Tensor(scalars[i])));
  }
  Attrs attrs = extra;
  attrs.Set("T", DType::kFloat64);
  g.Add("apply", op, inputs, attrs);
  for (int i = 0; i <= slots; ++i)
    g.Read(std::string("read_") + names[i], names[i], DType::kFloat64);
  Session sess(g.graph);
  for (const std::string& n : init) Do(sess, n);
  Do(sess, "apply");
  slot_values->clear();
  for (int i = 1; i <= slots; ++i) {
    slot_values->push_back(
        sess.Run((std::string("read_") + names[i] + ":0").c_str()).ToVector<double>()[0]);
  }
  return sess.Run("read_var:0").ToVector<double>()[0];
}

TEST(ResourceTrainingOpsTest, GradientDescentAndMomentum) {
  std::vector<double> slots;
  const double g = 0.5, lr = 0.1, mu = 0.9;
  // ResourceApplyGradientDescent(var, alpha, delta)
  EXPECT_DOUBLE_EQ(RunApply("ResourceApplyGradientDescent", 0, {lr}, {}, &slots), 1.5 - lr * g);
  // ResourceApplyMomentum(var, accum, lr, grad, momentum)
  double accum = 0.25 * mu + g;
  EXPECT_DOUBLE_EQ(RunApply("ResourceApplyMomentum", 1, {lr, mu}, {}, &slots, 1), 1.5 - lr * accum);
  EXPECT_DOUBLE_EQ(slots[0], accum);
  EXPECT_DOUBLE_EQ(
      RunApply("ResourceApplyMomentum", 1, {lr, mu}, Attrs{{"use_nesterov", true}}, &slots, 1),
      1.5 - (g * lr + accum * mu * lr));
  // ResourceApplyKerasMomentum: accum = accum * momentum - grad * lr; var += accum.
  accum = 0.25 * mu - g * lr;
  EXPECT_DOUBLE_EQ(RunApply("ResourceApplyKerasMomentum", 1, {lr, mu}, {}, &slots, 1), 1.5 + accum);
  EXPECT_DOUBLE_EQ(slots[0], accum);
  EXPECT_DOUBLE_EQ(
      RunApply("ResourceApplyKerasMomentum", 1, {lr, mu}, Attrs{{"use_nesterov", true}}, &slots, 1),
      1.5 + (accum * mu - g * lr));
}

TEST(ResourceTrainingOpsTest, AdamRMSPropAdagrad) {
  std::vector<double> slots;
  const double g = 0.5;
  // ResourceApplyAdam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad)
  {
    const double b1p = 0.9, b2p = 0.999, lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-7;
    const double m = 0.25 + (g - 0.25) * (1 - b1);
    const double v = 0.5 + (g * g - 0.5) * (1 - b2);
    const double alpha = lr * std::sqrt(1 - b2p) / (1 - b1p);
    const double var = RunApply("ResourceApplyAdam", 2, {b1p, b2p, lr, b1, b2, eps}, {}, &slots);
    EXPECT_DOUBLE_EQ(slots[0], m);
    EXPECT_DOUBLE_EQ(slots[1], v);
    EXPECT_NEAR(var, 1.5 - m * alpha / (std::sqrt(v) + eps), 1e-15);
  }
  // ResourceApplyRMSProp(var, ms, mom, lr, rho, momentum, epsilon, grad)
  {
    const double lr = 0.01, rho = 0.9, mu = 0.5, eps = 1e-7;
    const double ms = 0.25 + (g * g - 0.25) * (1 - rho);
    const double mom = 0.5 * mu + (g * lr) / std::sqrt(ms + eps);
    EXPECT_DOUBLE_EQ(RunApply("ResourceApplyRMSProp", 2, {lr, rho, mu, eps}, {}, &slots),
                     1.5 - mom);
    EXPECT_DOUBLE_EQ(slots[0], ms);
    EXPECT_DOUBLE_EQ(slots[1], mom);
  }
  // ResourceApplyAdagradV2(var, accum, lr, epsilon, grad)
  {
    const double lr = 0.1, eps = 1e-7;
    const double accum = 0.25 + g * g;
    EXPECT_DOUBLE_EQ(RunApply("ResourceApplyAdagradV2", 1, {lr, eps}, {}, &slots),
                     1.5 - g * lr / (std::sqrt(accum) + eps));
    EXPECT_DOUBLE_EQ(slots[0], accum);
    EXPECT_DOUBLE_EQ(
        RunApply("ResourceApplyAdagradV2", 1, {lr, eps}, Attrs{{"update_slots", false}}, &slots),
        1.5 - g * lr / (std::sqrt(0.25) + eps));
    EXPECT_DOUBLE_EQ(slots[0], 0.25);
  }
}

TEST(ResourceTrainingOpsTest, ErrorsNameTheVariable) {
  ResourceGraph g;
  g.AddVariable("w", DType::kFloat32, Shape{2});
  g.AddVariable("w/accum", DType::kFloat32, Shape{2});
  g.Assign("init_w", "w", Tensor::Vector<float>({1, 2}));
  const std::string lr = g.Const("lr", Tensor(0.1f));
  const std::string eps = g.Const("eps", Tensor(1e-7f));
  const std::string grad = g.Const("grad", Tensor::Vector<float>({1, 1}));
  const std::string grad3 = g.Const("grad3", Tensor::Vector<float>({1, 1, 1}));
  g.Add("adagrad", "ResourceApplyAdagradV2", {"w", "w/accum", lr, eps, grad},
        Attrs{{"T", DType::kFloat32}});
  g.Add("bad_grad", "ResourceApplyGradientDescent", {"w", lr, grad3},
        Attrs{{"T", DType::kFloat32}});
  Session sess(g.graph);
  Do(sess, "init_w");
  try {
    Do(sess, "adagrad");  // its slot was never initialized
    FAIL();
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("w/accum"));
  }
  try {
    Do(sess, "bad_grad");
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("variable 'w'"), HasSubstr("delta")));
  }
}

}  // namespace
}  // namespace eager
