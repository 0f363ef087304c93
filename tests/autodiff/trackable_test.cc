// The deferred-restoration hook of Trackable and Module's tracking, with a
// fake restoration standing in for a future object-based Checkpoint.

#include "runtime/trackable.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "autodiff/adam.h"
#include "autodiff/exponential_moving_average.h"
#include "autodiff/module.h"
#include "runtime/names.h"

namespace eager {
namespace {

// Holds "checkpointed" values by local name and records every callback.
class FakeRestoration : public Trackable::DeferredRestoration {
 public:
  std::map<std::string, Tensor> values;
  std::map<std::string, Tensor> slot_values;  // by slot name
  std::vector<std::string> added;
  std::vector<std::string> slots_added;

  std::optional<Tensor> InitialValue(const Trackable&, std::string_view name, DType,
                                     const Shape&) override {
    auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
  std::optional<Tensor> InitialSlotValue(const Trackable&, const Variable&,
                                         std::string_view slot_name, DType, const Shape&) override {
    auto it = slot_values.find(std::string(slot_name));
    if (it == slot_values.end()) return std::nullopt;
    return it->second;
  }
  void ChildAdded(Trackable&, std::string_view name, Trackable&) override {
    added.emplace_back(name);
  }
  void SlotAdded(Trackable&, const Trackable::Slot& slot) override {
    slots_added.push_back(slot.name);
  }
};

// A module that creates its variables late, as a lazily built layer does.
class LazyModule : public Module {
 public:
  LazyModule() : Module("lazy") {}
  void Build() {
    NameScope scope("lazy/");
    a = &AddVariable("a", Tensor::FromVector<float>({1, 2}, Shape{2}));
    b = &AddVariable("b", Tensor(0.0f), /*trainable=*/false);
  }
  Variable* a = nullptr;
  Variable* b = nullptr;
};

class TrackableTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetDefaultNames(); }
};

TEST_F(TrackableTest, DefaultsHaveNoEdgesOrAttributes) {
  Trackable plain;
  EXPECT_TRUE(plain.Children().empty());
  EXPECT_TRUE(plain.Slots().empty());
  EXPECT_TRUE(plain.SerializeToTensors().empty());
  EXPECT_FALSE(plain.has_deferred_restorations());
}

TEST_F(TrackableTest, RestoreOnCreateGivesTheSavedValueAndNotifies) {
  LazyModule module;
  auto restoration = std::make_shared<FakeRestoration>();
  restoration->values.emplace("a", Tensor::FromVector<float>({7, 8}, Shape{2}));
  module.AddDeferredRestoration(restoration);
  EXPECT_TRUE(module.has_deferred_restorations());
  module.Build();
  EXPECT_EQ(module.a->value().ToVector<float>(), (std::vector<float>{7, 8}));
  EXPECT_EQ(module.b->value().scalar<float>(), 0.0f);  // not in the "checkpoint"
  EXPECT_EQ(restoration->added, (std::vector<std::string>{"a", "b"}));
  module.RemoveDeferredRestoration(restoration.get());
  EXPECT_FALSE(module.has_deferred_restorations());
}

TEST_F(TrackableTest, RestoredValueOfTheWrongShapeIsRejected) {
  LazyModule module;
  auto restoration = std::make_shared<FakeRestoration>();
  restoration->values.emplace("a", Tensor::FromVector<float>({1, 2, 3}, Shape{3}));
  module.AddDeferredRestoration(restoration);
  try {
    module.Build();
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'a'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[3]"), std::string::npos) << e.what();
  }
}

// The check lives in Trackable, so every creator gets it, the EMA included.
TEST_F(TrackableTest, MovingAverageRejectsARestoredShadowOfTheWrongShape) {
  Variable v(Tensor::FromVector<float>({1, 2}, Shape{2}), "v");
  ExponentialMovingAverage ema(0.99);
  auto restoration = std::make_shared<FakeRestoration>();
  restoration->values.emplace("v/ExponentialMovingAverage", Tensor(1.0f));
  ema.AddDeferredRestoration(restoration);
  try {
    ema.Apply({&v});
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'v/ExponentialMovingAverage'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("[2]"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ema.AverageVariable(v), nullptr);  // nothing half-created
}

TEST_F(TrackableTest, OptimizerSlotsAreRestoredOnCreation) {
  Variable w(Tensor::FromVector<float>({1, 1}, Shape{2}), "w");
  Adam adam;
  auto restoration = std::make_shared<FakeRestoration>();
  restoration->slot_values.emplace("m", Tensor::FromVector<float>({0.5f, 0.25f}, Shape{2}));
  adam.AddDeferredRestoration(restoration);
  adam.ApplyGradients({{Tensor::FromVector<float>({0, 0}, Shape{2}), &w}});
  EXPECT_EQ(restoration->slots_added, (std::vector<std::string>{"m", "v"}));
  // m started at the restored value and decayed once with a zero gradient:
  // m += (0 - m) * (1 - 0.9).
  const std::vector<float> m = adam.GetSlot(w, "m")->value().ToVector<float>();
  EXPECT_FLOAT_EQ(m[0], 0.45f);
  EXPECT_FLOAT_EQ(m[1], 0.225f);
}

// Trackable's own helper, as any creator uses it: the initializer runs only
// when nothing is restored (the EMA's graph-mode initializer has side
// effects), the variable is stored before the restorations hear of it.
TEST_F(TrackableTest, CreateVariableRunsTheInitializerOnlyWhenNothingIsRestored) {
  struct Owner : Trackable {
    std::vector<std::unique_ptr<Variable>> owned;
    std::vector<Child> children;
    int initializer_calls = 0;
    Variable& Make(const std::string& name) {
      return CreateVariable(
          name, DType::kFloat32, Shape{2},
          [&] {
            ++initializer_calls;
            return Tensor::FromVector<float>({1, 2}, Shape{2});
          },
          name, /*trainable=*/true,
          [&](std::unique_ptr<Variable> v) {
            children.push_back({name, v.get()});
            owned.push_back(std::move(v));
          });
    }
    std::vector<Child> Children() override { return children; }
  } owner;
  auto restoration = std::make_shared<FakeRestoration>();
  restoration->values.emplace("restored", Tensor::FromVector<float>({7, 8}, Shape{2}));
  owner.AddDeferredRestoration(restoration);

  Variable& restored = owner.Make("restored");
  EXPECT_EQ(owner.initializer_calls, 0);
  EXPECT_EQ(restored.value().ToVector<float>(), (std::vector<float>{7, 8}));
  Variable& fresh = owner.Make("fresh");
  EXPECT_EQ(owner.initializer_calls, 1);
  EXPECT_EQ(fresh.value().ToVector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(restoration->added, (std::vector<std::string>{"restored", "fresh"}));
  ASSERT_EQ(owner.children.size(), 2u);
  EXPECT_EQ(owner.children[0].object, &restored);
}

TEST_F(TrackableTest, ModuleTracksChildrenInOrderAndVariablesDepthFirst) {
  struct Model : Module {
    LazyModule first, second;
    Variable scale{1.0f, "scale"};
    Model() {
      Track("first", first);
      Track("scale", scale);
      Track("second", second);
    }
  };
  Model model;
  auto restoration = std::make_shared<FakeRestoration>();
  model.AddDeferredRestoration(restoration);
  model.Track("again", model.first);  // a second edge to the same object
  EXPECT_EQ(restoration->added, (std::vector<std::string>{"again"}));
  model.first.Build();
  model.second.Build();
  std::vector<Trackable::Child> children = model.Children();
  ASSERT_EQ(children.size(), 4u);
  EXPECT_EQ(children[0].name, "first");
  EXPECT_EQ(children[1].name, "scale");
  EXPECT_EQ(children[2].name, "second");
  EXPECT_EQ(children[3].object, &model.first);
  std::vector<Variable*> all = model.Variables();
  ASSERT_EQ(all.size(), 5u);  // the shared child counts once
  EXPECT_EQ(all[0], model.first.a);
  EXPECT_EQ(all[1], model.first.b);
  EXPECT_EQ(all[2], &model.scale);
  EXPECT_EQ(all[3], model.second.a);
  std::vector<Variable*> trainable = model.TrainableVariables();
  EXPECT_EQ(trainable, (std::vector<Variable*>{model.first.a, &model.scale, model.second.a}));
  EXPECT_EQ(model.NonTrainableVariables(), (std::vector<Variable*>{model.first.b, model.second.b}));
  EXPECT_EQ(model.first.a->name(), "lazy/a:0");
  EXPECT_EQ(model.second.a->name(), "lazy/a:0");  // eagerly not suffixed, as TF2
  EXPECT_THROW(model.Track("first", model.second), InvalidArgumentError);
  EXPECT_THROW(model.Track("", model.second), InvalidArgumentError);
}

}  // namespace
}  // namespace eager
