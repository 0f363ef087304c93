#include "runtime/variable.h"

#include <gtest/gtest.h>

#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager {
namespace {

class VariableTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetDefaultNames(); }
};

// TF2: eagerly a tf.Variable keeps the name it is given; in a graph names
// are made unique (TF1's Graph.unique_name), which the name-based Saver needs.
TEST_F(VariableTest, EagerNamesAreKeptAsTensorFlow2Does) {
  Variable a(1.0f, "v");
  Variable b(2.0f, "v");
  EXPECT_EQ(a.name(), "v:0");
  EXPECT_EQ(b.name(), "v:0");
}

TEST_F(VariableTest, GraphNamesAreMadeUniqueAsTensorFlowDoes) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable a(1.0f, "v");
  Variable b(2.0f, "v");
  Variable c(3.0f, "v");
  EXPECT_EQ(a.name(), "v:0");
  EXPECT_EQ(b.name(), "v_1:0");
  EXPECT_EQ(c.shared_name(), "v_2");
}

TEST_F(VariableTest, DefaultNameIsVariable) {
  Variable a(1.0f);
  Variable b(1.0f);
  EXPECT_EQ(a.shared_name(), "Variable");
  EXPECT_EQ(b.shared_name(), "Variable");
  Graph graph;
  Graph::AsDefault in(graph);
  Variable c(1.0f);
  Variable d(1.0f);
  EXPECT_EQ(c.shared_name(), "Variable");
  EXPECT_EQ(d.shared_name(), "Variable_1");
}

TEST_F(VariableTest, NameScopePrefixesNames) {
  NameScope scope("dense");
  Variable kernel(Tensor::Zeros(Shape{2, 3}), "kernel");
  EXPECT_EQ(kernel.name(), "dense/kernel:0");
}

TEST_F(VariableTest, AssignReplacesValueAndChecksDTypeAndShape) {
  Variable v(Tensor::Vector<float>({1, 2}), "w");
  Tensor before = v.value();
  v.Assign(Tensor::Vector<float>({5, 6}));
  EXPECT_EQ(v.value().ToVector<float>(), (std::vector<float>{5, 6}));
  EXPECT_EQ(before.ToVector<float>(), (std::vector<float>{1, 2}));  // old reads never change
  try {
    v.Assign(Tensor::Vector<double>({1, 2}));
    FAIL();
  } catch (const InvalidArgumentError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'w'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("float64"), std::string::npos) << msg;
  }
  EXPECT_THROW(v.Assign(Tensor::Vector<float>({1, 2, 3})), InvalidArgumentError);
}

TEST_F(VariableTest, AssignAddAndSub) {
  Variable v(Tensor::Vector<int64_t>({10, 20}), "counter", /*trainable=*/false);
  v.AssignAdd(Tensor::Vector<int64_t>({1, 2}));
  v.AssignSub(Tensor::Vector<int64_t>({5, 5}));
  EXPECT_EQ(v.value().ToVector<int64_t>(), (std::vector<int64_t>{6, 17}));
  EXPECT_FALSE(v.trainable());
}

TEST_F(VariableTest, AssignGivesAFreshIdentity) {
  Tensor t = Tensor::Vector<float>({1, 2});
  Variable a(t, "a");
  Variable b(t, "b");
  EXPECT_NE(a.value().id(), b.value().id());
  EXPECT_NE(a.value().id(), t.id());
  EXPECT_EQ(a.value().id(), a.value().id());  // unchanged value, same tensor
}

TEST_F(VariableTest, UninitializedReadThrowsFailedPreconditionWithTheName) {
  Variable v(DType::kFloat32, Shape{3}, "renamed-v2");
  EXPECT_FALSE(v.is_initialized());
  try {
    v.value();
    FAIL();
  } catch (const FailedPreconditionError& e) {
    EXPECT_NE(std::string(e.what()).find("Attempting to use uninitialized value renamed-v2"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(v.AssignAdd(Tensor::Zeros(Shape{3})), FailedPreconditionError);
  v.Assign(Tensor::Zeros(Shape{3}));
  EXPECT_TRUE(v.is_initialized());
}

TEST_F(VariableTest, SerializesItsValueAsOneAttribute) {
  Variable v(Tensor::Vector<float>({1, 2}), "v");
  auto tensors = v.SerializeToTensors();
  ASSERT_EQ(tensors.size(), 1u);
  EXPECT_EQ(tensors.at("VARIABLE_VALUE").ToVector<float>(), (std::vector<float>{1, 2}));

  Variable restored(DType::kFloat32, Shape{2}, "r");
  restored.RestoreFromTensors(tensors);
  EXPECT_EQ(restored.value().ToVector<float>(), (std::vector<float>{1, 2}));
  EXPECT_THROW(restored.RestoreFromTensors({}), NotFoundError);
  EXPECT_THROW(restored.RestoreFromTensors({{"VARIABLE_VALUE", Tensor(1.0f)}}),
               InvalidArgumentError);
}

struct CountingObserver : internal::VariableReadObserver {
  void OnVariableRead(const Variable& variable, const Tensor&) override {
    last = &variable;
    ++reads;
  }
  const Variable* last = nullptr;
  int reads = 0;
};

TEST_F(VariableTest, ReadsAreReportedToObserversWhileRegistered) {
  Variable v(1.0f, "v");
  CountingObserver observer;
  internal::AddVariableReadObserver(&observer);
  v.value();
  v.value();
  internal::RemoveVariableReadObserver(&observer);
  v.value();
  EXPECT_EQ(observer.reads, 2);
  EXPECT_EQ(observer.last, &v);
}

}  // namespace
}  // namespace eager
