// Optimizers in Keras 3 files: every class eager writes in compile_config
// and optimizer/vars comes back as the same class with the same state (the
// next step bit-identical), and what eager does not implement names its
// config path. TF 2.21's Keras judges the same files in
// tests/tf_keras/keras_optimizer_files_test.py.

#include <gtest/gtest.h>
#include <zip.h>

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eager.h"
#include "saving/keras/internal/keras_layout.h"
#include "saving/keras/keras_model.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using Json = nlohmann::ordered_json;

Tensor X() {
  return Tensor::FromVector<float>({0.1f, -0.2f, 0.3f, 0.4f, 0.5f, -0.6f}, Shape{2, 3});
}

std::unique_ptr<Sequential> MakeModel() {
  auto m = std::make_unique<Sequential>("m");
  m->Add(std::make_unique<InputLayer>(Shape{3}));
  m->Add(std::make_unique<Dense>(2, Tanh, true, 7));
  (*m)(X());
  return m;
}

void Step(Sequential& m, Optimizer& opt) {
  opt.Minimize([&] { return ReduceMean(Square(m(X(), true))); }, m.TrainableVariables());
}

TEST(KerasOptimizerConfig, EveryClassRoundTripsWithItsState) {
  const std::vector<std::function<std::unique_ptr<Optimizer>()>> makers = {
      [] { return std::make_unique<SGD>(SGDOptions{.learning_rate = 0.1}); },
      [] {
        return std::make_unique<SGD>(
            SGDOptions{.learning_rate = 0.1, .momentum = 0.9, .nesterov = true});
      },
      [] {
        return std::make_unique<RMSprop>(
            RMSpropOptions{.learning_rate = 0.01, .momentum = 0.5, .centered = true});
      },
      [] { return std::make_unique<Adagrad>(AdagradOptions{.learning_rate = 0.05}); },
      [] { return std::make_unique<Nadam>(NadamOptions{.learning_rate = 0.01}); },
      [] {
        AdamOptions o;
        o.weight_decay = 0.05;
        return std::make_unique<Adam>(o);
      },
      [] {
        AdamOptions o;
        o.amsgrad = true;
        return std::make_unique<Adam>(o);
      },
  };
  const std::string path = testing::TempDir() + "/opt.keras";
  for (size_t i = 0; i < makers.size(); ++i) {
    SCOPED_TRACE(i);
    std::unique_ptr<Sequential> model = MakeModel();
    std::unique_ptr<Optimizer> opt = makers[i]();
    Step(*model, *opt);
    SaveKerasModel(path, *model, opt.get(), "mse");
    KerasModel loaded = LoadKerasModel(path);
    ASSERT_NE(loaded.optimizer, nullptr);
    const Optimizer& got = *loaded.optimizer;
    const Optimizer& want = *opt;
    EXPECT_EQ(typeid(got), typeid(want));
    EXPECT_EQ(loaded.optimizer->iterations(), 1);
    // The loaded optimizer computes as Keras 3's (LoadKerasModel's layout).
    SetKerasLayout(*opt, KerasLayout::kKeras3);
    Step(*model, *opt);
    Step(*loaded.model, *loaded.optimizer);
    EXPECT_EQ((*loaded.model)(X()).ToVector<float>(), (*model)(X()).ToVector<float>());
  }
}

// `path`'s config with compile_config.optimizer edited by `edit`.
void Rewrite(const std::string& path, const std::string& out, void (*edit)(Json&)) {
  std::map<std::string, std::string> members = keras_internal::ReadKerasArchive(path);
  Json config = Json::parse(members["config.json"]);
  edit(config["compile_config"]["optimizer"]);
  members["config.json"] = config.dump();
  int err = 0;
  zip_t* z = zip_open(out.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(z, nullptr);
  for (const auto& [name, bytes] : members) {
    zip_source_t* src = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
    ASSERT_GE(zip_file_add(z, name.c_str(), src, ZIP_FL_OVERWRITE), 0);
  }
  ASSERT_EQ(zip_close(z), 0);
}

std::string LoadError(const std::string& path) {
  try {
    LoadKerasModel(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(KerasOptimizerConfig, WhatEagerLacksNamesTheConfigPath) {
  const std::string dir = testing::TempDir();
  std::unique_ptr<Sequential> model = MakeModel();
  Adam adam;
  Step(*model, adam);
  SaveKerasModel(dir + "/good.keras", *model, &adam, "mse");
  const std::string bad = dir + "/bad.keras";
  const std::string where = "config.compile_config.optimizer";

  Rewrite(dir + "/good.keras", bad, [](Json& o) { o["class_name"] = "Lion"; });
  std::string e = LoadError(bad);
  EXPECT_NE(e.find(where + ".class_name: optimizer 'Lion'"), std::string::npos) << e;

  Rewrite(dir + "/good.keras", bad, [](Json& o) {
    o["config"]["learning_rate"] =
        Json{{"class_name", "ExponentialDecay"}, {"config", Json::object()}};
  });
  e = LoadError(bad);
  EXPECT_NE(e.find(where + ".config.learning_rate.config.initial_learning_rate is missing"),
            std::string::npos)
      << e;

  Rewrite(dir + "/good.keras", bad, [](Json& o) { o["config"]["use_ema"] = true; });
  e = LoadError(bad);
  EXPECT_NE(e.find(where + ".config.use_ema"), std::string::npos) << e;

  Rewrite(dir + "/good.keras", bad, [](Json& o) { o["config"]["weight_decay"] = 0.1; });
  e = LoadError(bad);  // Adam, not AdamW
  EXPECT_NE(e.find(where + ".config.weight_decay"), std::string::npos) << e;

  Rewrite(dir + "/good.keras", bad, [](Json& o) { o["config"]["beta_1"] = 1.5; });
  e = LoadError(bad);
  EXPECT_NE(e.find(where + ".config.beta_1"), std::string::npos) << e;
}

std::unique_ptr<Optimizer> Scheduled(std::unique_ptr<Optimizer> optimizer,
                                     std::shared_ptr<const LearningRateSchedule> schedule,
                                     KerasLayout layout = KerasLayout::kKeras3) {
  optimizer->UseKerasLayout(layout);
  optimizer->SetLearningRateSchedule(std::move(schedule));
  return optimizer;
}

// Each schedule eager has, in compile_config as Keras serializes it, and
// optimizer/vars without a learning_rate (Keras 3 keeps none with a
// schedule): the loaded optimizer takes the same next step, at the
// schedule's value for the restored iteration count.
TEST(KerasOptimizerConfig, SchedulesRoundTripWithTheIterationCount) {
  struct Case {
    const char* class_name;
    size_t optimizer_vars;  // iterations and the slots
    std::function<std::unique_ptr<Optimizer>()> make;
  };
  const std::vector<Case> cases = {
      {"ExponentialDecay", 5,  // Adam: momentum and velocity per variable
       [] {
         return Scheduled(std::make_unique<Adam>(),
                          std::make_shared<ExponentialDecay>(0.05, 2, 0.5, true));
       }},
      {"PiecewiseConstantDecay", 3,  // SGD: a momentum per variable
       [] {
         return Scheduled(std::make_unique<SGD>(SGDOptions{.momentum = 0.9}),
                          std::make_shared<PiecewiseConstantDecay>(
                              std::vector<int64_t>{1, 3}, std::vector<double>{0.1, 0.05, 0.01}));
       }},
      {"CosineDecay", 3,  // RMSprop: a velocity per variable
       [] {
         return Scheduled(std::make_unique<RMSprop>(), std::make_shared<CosineDecay>(0.05, 4, 0.1));
       }},
      // An optimizer in tf_keras's layout (a _current_learning_rate
      // variable) is written in Keras 3's all the same.
      {"ExponentialDecay", 5,
       [] {
         return Scheduled(std::make_unique<Adam>(),
                          std::make_shared<ExponentialDecay>(0.05, 2, 0.5), KerasLayout::kKeras2);
       }},
  };
  const std::string dir = testing::TempDir();  // TempDir() empties it
  const std::string path = dir + "/scheduled.keras";
  for (const Case& c : cases) {
    SCOPED_TRACE(c.class_name);
    std::unique_ptr<Sequential> model = MakeModel();
    std::unique_ptr<Optimizer> opt = c.make();
    for (int i = 0; i < 3; ++i) Step(*model, *opt);
    SaveKerasModel(path, *model, opt.get(), "mse");
    const std::map<std::string, std::string> members = keras_internal::ReadKerasArchive(path);
    const Json lr = Json::parse(
        members.at("config.json"))["compile_config"]["optimizer"]["config"]["learning_rate"];
    EXPECT_EQ(lr["module"], "keras.optimizers.schedules");
    EXPECT_EQ(lr["class_name"], c.class_name);
    const std::string weights = dir + "/scheduled.weights.h5";
    testing::WriteFile(weights, members.at("model.weights.h5"));
    // iterations, then the slots of kernel and bias: no learning_rate.
    const keras_internal::H5Contents contents = keras_internal::ReadH5File(weights);
    size_t count = 0;
    for (const auto& [key, unused] : contents.datasets)
      count += key.rfind("optimizer/vars/", 0) == 0;
    EXPECT_EQ(count, c.optimizer_vars);
    EXPECT_EQ(contents.datasets.at("optimizer/vars/0").dtype, DType::kInt64);
    EXPECT_EQ(contents.datasets.at("optimizer/vars/1").shape, Shape({3, 2}));

    KerasModel loaded = LoadKerasModel(path);
    ASSERT_NE(loaded.optimizer, nullptr);
    ASSERT_NE(loaded.optimizer->learning_rate_schedule(), nullptr);
    EXPECT_EQ(loaded.optimizer->iterations(), 3);
    Step(*model, *opt);
    Step(*loaded.model, *loaded.optimizer);
    EXPECT_EQ((*loaded.model)(X()).ToVector<float>(), (*model)(X()).ToVector<float>());
  }
}

TEST(KerasOptimizerConfig, WhatEagerLacksInASchedulesNamesItsPath) {
  const std::string dir = testing::TempDir();
  std::unique_ptr<Sequential> model = MakeModel();
  std::unique_ptr<Optimizer> adam =
      Scheduled(std::make_unique<Adam>(), std::make_shared<CosineDecay>(0.05, 4, 0.1));
  Step(*model, *adam);
  SaveKerasModel(dir + "/sched.keras", *model, adam.get(), "mse");
  const std::string bad = dir + "/sched_bad.keras";
  const std::string where = "config.compile_config.optimizer.config.learning_rate";

  Rewrite(dir + "/sched.keras", bad,
          [](Json& o) { o["config"]["learning_rate"]["class_name"] = "PolynomialDecay"; });
  std::string e = LoadError(bad);
  EXPECT_NE(e.find(where + ".class_name: learning-rate schedule 'PolynomialDecay'"),
            std::string::npos)
      << e;

  Rewrite(dir + "/sched.keras", bad,
          [](Json& o) { o["config"]["learning_rate"]["config"]["warmup_target"] = 0.1; });
  e = LoadError(bad);
  EXPECT_NE(e.find(where + ".config.warmup_target: a linear warmup"), std::string::npos) << e;

  Rewrite(dir + "/sched.keras", bad,
          [](Json& o) { o["config"]["learning_rate"]["config"]["cycle"] = true; });
  e = LoadError(bad);
  EXPECT_NE(e.find(where + ".config.cycle"), std::string::npos) << e;

  Rewrite(dir + "/sched.keras", bad,
          [](Json& o) { o["config"]["learning_rate"]["config"]["initial_learning_rate"] = 1; });
  e = LoadError(bad);
  EXPECT_NE(e.find(where + ".config.initial_learning_rate: the integer 1"), std::string::npos) << e;

  Rewrite(dir + "/sched.keras", bad, [](Json& o) {
    o["config"]["learning_rate"] =
        Json{{"class_name", "PiecewiseConstantDecay"},
             {"config", {{"boundaries", {3, 1}}, {"values", {0.1, 0.05, 0.01}}}}};
  });
  e = LoadError(bad);
  EXPECT_NE(e.find(where + ".config.boundaries [1] is 1, less than [0]"), std::string::npos) << e;

  // An eager schedule Keras has no class for is refused on writing.
  struct Halving final : LearningRateSchedule {
    float operator()(int64_t step) const override { return 1.0f / static_cast<float>(step + 1); }
  };
  std::unique_ptr<Optimizer> sgd = Scheduled(std::make_unique<SGD>(), std::make_shared<Halving>());
  e = "no error";
  try {
    SaveKerasModel(dir + "/halving.keras", *model, sgd.get(), "mse");
  } catch (const Error& err) {
    e = err.what();
  }
  EXPECT_NE(e.find("learning-rate schedule of a class eager cannot write"), std::string::npos) << e;
}

}  // namespace
}  // namespace eager
