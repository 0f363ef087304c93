// Optimizers in Keras 3 files: every class eager writes in compile_config
// and optimizer/vars comes back as the same class with the same state (the
// next step bit-identical), and what eager does not implement names its
// config path. TF 2.21's Keras judges the same files in
// tests/tf_keras/keras_optimizer_files_test.py.

#include <gtest/gtest.h>
#include <zip.h>

#include <functional>
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
    o["config"]["learning_rate"] = Json{{"class_name", "ExponentialDecay"}, {"config", {}}};
  });
  e = LoadError(bad);
  EXPECT_NE(e.find(where + ".config.learning_rate"), std::string::npos) << e;
  EXPECT_NE(e.find("schedule"), std::string::npos) << e;

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

}  // namespace
}  // namespace eager
