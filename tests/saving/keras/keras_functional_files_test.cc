// Functional models in Keras 3's `.keras` ("Functional" config) and
// `.weights.h5`: eager's writer and reader against each other, and crafted
// configs (dangling histories, cycles, huge layers or inputs), each a clear
// error naming the config path. TF 2.21's Keras judges the same files in
// tests/tf_keras/keras_functional_files_test.py.

#include <gtest/gtest.h>
#include <zip.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eager.h"
#include "saving/keras/internal/keras_layout.h"
#include "saving/keras/keras_model.h"
#include "saving/keras/keras_weights.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using Json = nlohmann::ordered_json;

template <typename Fn>
std::string ErrorOf(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// Two inputs, a Dense shared by two calls, Concatenate, Add, Multiply, a
// nested Sequential, two outputs.
struct Towers {
  KerasTensor a = Input({3}, DType::kFloat32, "a");
  KerasTensor b = Input({2}, DType::kFloat32, "b");
  Dense pa{4, nullptr, true, 1, "pa"};
  Dense pb{4, nullptr, true, 2, "pb"};
  Dense shared{4, Tanh, true, 3, "shared"};
  layers::Concatenate cat{-1, "cat"};
  layers::Add add{"add"};
  layers::Multiply multiply{"multiply"};
  Sequential inner{"inner"};
  Model model = Build();

  Model Build() {
    inner.Add(std::make_unique<Dense>(3, nullptr, true, 4, "i1"));
    const KerasTensor ta = pa(a);
    const KerasTensor tb = pb(b);
    const KerasTensor s = add({shared(ta), tb});
    return Model({a, b}, {inner(cat({shared(ta), shared(tb)})), multiply({s, s})}, "towers");
  }
};

std::vector<Tensor> X() {
  return {Tensor::FromVector<float>({0.1f, -0.2f, 0.3f, 0.4f, 0.5f, -0.6f}, Shape{2, 3}),
          Tensor::FromVector<float>({1.f, -2.f, 0.5f, 0.25f}, Shape{2, 2})};
}

void ExpectSameOutputs(Layer& got, Model& want) {
  const std::vector<Tensor> g = got.CallMany(X(), false);
  const std::vector<Tensor> w = want(X());
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < w.size(); ++i)
    EXPECT_EQ(g[i].ToVector<float>(), w[i].ToVector<float>()) << "output " << i;
}

TEST(KerasFunctionalFiles, KerasRoundTripRebuildsTheGraph) {
  Towers t;
  Adam adam(0.01);
  adam.Minimize([&] { return ReduceMean(Square(t.model(X())[1])); }, t.model.TrainableVariables());
  const std::string path = testing::TempDir() + "/towers.keras";
  SaveKerasModel(path, t.model, &adam, "mse");
  KerasModel loaded = LoadKerasModel(path);
  ASSERT_EQ(loaded.model, nullptr);
  ASSERT_NE(loaded.functional, nullptr);
  EXPECT_EQ(loaded.functional->name(), "towers");
  std::vector<std::string> names;
  for (Layer* op : loaded.functional->operations()) names.push_back(op->name());
  std::vector<std::string> want;
  for (Layer* op : t.model.operations()) want.push_back(op->name());
  EXPECT_EQ(names, want);
  ExpectSameOutputs(loaded.root(), t.model);
  ASSERT_NE(loaded.optimizer, nullptr);
  EXPECT_EQ(loaded.loss, "mse");
}

TEST(KerasFunctionalFiles, WeightsRoundTripAndKerasGroups) {
  Towers t;
  t.model(X());
  const std::string path = testing::TempDir() + "/towers.weights.h5";
  SaveKerasWeights(path, t.model);
  const keras_internal::H5Contents contents = keras_internal::ReadH5File(path);
  // Keras 3's Functional layout: InputLayers listed, a shared layer once,
  // the nested Sequential's layers in its own group.
  for (const char* group : {"layers/input_layer", "layers/input_layer_1", "layers/dense_2/vars",
                            "layers/concatenate", "layers/sequential/layers/dense/vars"}) {
    EXPECT_EQ(contents.groups.count(group), 1u) << group;
  }
  EXPECT_EQ(contents.groups.count("layers/dense_3"), 0u);
  Towers other;
  LoadKerasWeights(path, other.model);
  ExpectSameOutputs(other.model, t.model);
}

// `path`'s config edited by `edit`, written as `out` with the same weights.
void Rewrite(const std::string& path, const std::string& out, void (*edit)(Json&)) {
  std::map<std::string, std::string> members = keras_internal::ReadKerasArchive(path);
  Json config = Json::parse(members["config.json"]);
  edit(config);
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

TEST(KerasFunctionalFiles, CraftedConfigsNameTheirPath) {
  const std::string dir = testing::TempDir();
  Towers t;
  SaveKerasModel(dir + "/good.keras", t.model);
  // config.layers: the Inputs a and b, pa and pb, shared, the merges.
  const std::string bad = dir + "/bad.keras";
  auto load = [&] { LoadKerasModel(bad); };

  Rewrite(dir + "/good.keras", bad, [](Json& c) {
    c["config"]["layers"][5]["inbound_nodes"][0]["args"][0][0]["config"]["keras_history"] =
        Json::array({"shared", 9, 0});
  });
  std::string e = ErrorOf(load);
  EXPECT_NE(e.find("config.layers[5].inbound_nodes[0]"), std::string::npos) << e;
  EXPECT_NE(e.find("no layer call makes"), std::string::npos) << e;

  Rewrite(dir + "/good.keras", bad, [](Json& c) {  // a layer reads its own output
    Json& layer = c["config"]["layers"][2];
    layer["inbound_nodes"][0]["args"][0]["config"]["keras_history"] =
        Json::array({layer["name"], 0, 0});
  });
  e = ErrorOf(load);
  EXPECT_NE(e.find("config.layers[2].inbound_nodes[0]"), std::string::npos) << e;

  Rewrite(dir + "/good.keras", bad, [](Json& c) {
    c["config"]["layers"][2]["inbound_nodes"][0]["args"][0]["config"]["keras_history"] =
        Json::array({"nobody", 0, 0});
  });
  e = ErrorOf(load);
  EXPECT_NE(e.find("config.layers[2].inbound_nodes[0].args[0].config.keras_history names no "
                   "layer 'nobody'"),
            std::string::npos)
      << e;

  // A Dense of 2^30 units: refused by the weights' shapes before anything
  // of that size exists.
  Rewrite(dir + "/good.keras", bad,
          [](Json& c) { c["config"]["layers"][2]["config"]["units"] = int64_t{1} << 30; });
  e = ErrorOf(load);
  EXPECT_NE(e.find("layers/dense"), std::string::npos) << e;
  EXPECT_NE(e.find("1073741824"), std::string::npos) << e;

  Rewrite(dir + "/good.keras", bad, [](Json& c) {
    c["config"]["layers"][0]["config"]["batch_shape"] = Json::array({nullptr, 1 << 13, 1 << 13});
  });
  e = ErrorOf(load);
  EXPECT_NE(e.find("config.layers[0].config.batch_shape has over 16777216 elements"),
            std::string::npos)
      << e;

  Rewrite(dir + "/good.keras", bad, [](Json& c) {
    c["config"]["layers"][2]["inbound_nodes"][0]["kwargs"] = Json{{"use_causal_mask", true}};
  });
  e = ErrorOf(load);
  EXPECT_NE(e.find("config.layers[2].inbound_nodes[0].kwargs.use_causal_mask"), std::string::npos)
      << e;
  // Keras's recorded training flag is not an argument eager refuses.
  Rewrite(dir + "/good.keras", bad, [](Json& c) {
    c["config"]["layers"][2]["inbound_nodes"][0]["kwargs"] = Json{{"training", false}};
  });
  EXPECT_EQ(ErrorOf(load), "no error");

  Rewrite(dir + "/good.keras", bad, [](Json& c) {
    c["config"]["output_layers"] = Json::array({"multiply", 3, 0});
  });
  e = ErrorOf(load);
  EXPECT_NE(e.find("config.output_layers names a node no layer call made"), std::string::npos) << e;
}

// Keras keeps an input no output reads (with a warning); so does the
// config eager writes, and the loaded model takes both inputs again.
TEST(KerasFunctionalFiles, AnUnusedInputStaysAnInput) {
  KerasTensor a = Input({3}, DType::kFloat32, "a");
  KerasTensor b = Input({2}, DType::kFloat32, "b");
  Dense d(2, nullptr, true, 1, "d");
  Model model({a, b}, {d(a)}, "unused_b");
  const std::string path = testing::TempDir() + "/unused.keras";
  SaveKerasModel(path, model);
  KerasModel loaded = LoadKerasModel(path);
  ASSERT_NE(loaded.functional, nullptr);
  ASSERT_EQ(loaded.functional->inputs().size(), 2u);
  EXPECT_EQ((*loaded.functional)(X())[0].ToVector<float>(), model(X())[0].ToVector<float>());
}

TEST(KerasFunctionalFiles, WhatTheConfigCannotHoldIsNamed) {
  const std::string dir = testing::TempDir();
  KerasTensor a = Input({3}, DType::kFloat32, "a");
  Dense d1(2, nullptr, true, 1, "same");
  Dense d2(2, nullptr, true, 2, "same");
  Model twins({a}, {d2(d1(a))});
  std::string e = ErrorOf([&] { SaveKerasModel(dir + "/twins.keras", twins); });
  EXPECT_NE(e.find("two layers are named 'same'"), std::string::npos) << e;
}

// Nested models: a functional Model inside a Functional (called twice, so
// shared) and inside a Sequential, and a Sequential inside the inner Model:
// the configs and weights groups nest as Keras 3's, and what comes back
// computes the same.
struct Nested {
  KerasTensor ia = Input({3}, DType::kFloat32, "ia");
  Dense id{4, Tanh, true, 11, "id"};
  Sequential seq{"seq"};
  Model inner = BuildInner();
  KerasTensor x = Input({3}, DType::kFloat32, "x");
  Dense od{2, nullptr, true, 12, "od"};
  layers::Add add{"add"};
  Model outer = BuildOuter();

  Model BuildInner() {
    seq.Add(std::make_unique<Dense>(3, nullptr, true, 13, "sd"));
    return Model({ia}, {seq(id(ia))}, "inner");
  }
  Model BuildOuter() { return Model({x}, {od(add({inner(x), inner(x)}))}, "outer"); }
};

Tensor NestedX() {
  return Tensor::FromVector<float>({0.1f, -0.2f, 0.3f, 0.4f, 0.5f, -0.6f}, Shape{2, 3});
}

TEST(KerasFunctionalFiles, NestedModelsRoundTrip) {
  const std::string dir = testing::TempDir();
  Nested n;
  Adam adam(0.01);
  auto loss = [&](Layer& m) { return ReduceMean(Square(m.CallMany({NestedX()}, true)[0])); };
  adam.Minimize([&] { return loss(n.outer); }, n.outer.TrainableVariables());
  SaveKerasModel(dir + "/nested.keras", n.outer, &adam, "mse");
  const std::map<std::string, std::string> members =
      keras_internal::ReadKerasArchive(dir + "/nested.keras");
  const Json config = Json::parse(members.at("config.json"));
  const Json& inner = config["config"]["layers"][1];
  EXPECT_EQ(inner["class_name"], "Functional");
  EXPECT_EQ(inner["name"], "inner");
  EXPECT_EQ(inner["inbound_nodes"].size(), 2u);
  EXPECT_EQ(inner["config"]["layers"][2]["class_name"], "Sequential");

  KerasModel loaded = LoadKerasModel(dir + "/nested.keras");
  ASSERT_NE(loaded.functional, nullptr);
  EXPECT_EQ(loaded.functional->CallMany({NestedX()}, false)[0].ToVector<float>(),
            n.outer(NestedX()).ToVector<float>());
  // The next step continues alike (Adam's slots of the nested layers); the
  // loaded Adam computes as Keras 3's (its layout), so the original does too.
  SetKerasLayout(adam, KerasLayout::kKeras3);
  adam.Minimize([&] { return loss(n.outer); }, n.outer.TrainableVariables());
  loaded.optimizer->Minimize([&] { return loss(*loaded.functional); },
                             loaded.functional->TrainableVariables());
  EXPECT_EQ(loaded.functional->CallMany({NestedX()}, false)[0].ToVector<float>(),
            n.outer(NestedX()).ToVector<float>());

  SaveKerasWeights(dir + "/nested.weights.h5", n.outer);
  const keras_internal::H5Contents contents =
      keras_internal::ReadH5File(dir + "/nested.weights.h5");
  for (const char* group :
       {"layers/functional/layers/dense/vars",
        "layers/functional/layers/sequential/layers/dense/vars", "layers/dense/vars"}) {
    EXPECT_EQ(contents.groups.count(group), 1u) << group;
  }

  // A functional Model inside a Sequential.
  Nested m;
  Sequential holder("holder");
  holder.Add(std::make_unique<InputLayer>(Shape{3}));
  holder.Add(m.inner);
  holder.Add(std::make_unique<Dense>(2, nullptr, true, 14, "after"));
  holder(NestedX());
  SaveKerasModel(dir + "/holder.keras", holder);
  KerasModel back = LoadKerasModel(dir + "/holder.keras");
  ASSERT_NE(back.model, nullptr);
  EXPECT_EQ((*back.model)(NestedX()).ToVector<float>(), holder(NestedX()).ToVector<float>());
}

TEST(KerasFunctionalFiles, ANestedModelsLayerEagerLacksIsNamed) {
  const std::string dir = testing::TempDir();
  Nested n;
  n.outer(NestedX());
  SaveKerasModel(dir + "/nested.keras", n.outer);
  const std::string bad = dir + "/nested_bad.keras";
  Rewrite(dir + "/nested.keras", bad, [](Json& c) {
    c["config"]["layers"][1]["config"]["layers"][1]["class_name"] = "EinsumDense";
  });
  std::string e = ErrorOf([&] { LoadKerasModel(bad); });
  EXPECT_NE(e.find("config.layers[1].config.layers[1].class_name: layer class 'EinsumDense'"),
            std::string::npos)
      << e;
  Rewrite(dir + "/nested.keras", bad, [](Json& c) {
    // [0] is the nested Sequential's InputLayer.
    c["config"]["layers"][1]["config"]["layers"][2]["config"]["layers"][1]["config"]["units"] = 5;
  });
  e = ErrorOf([&] { LoadKerasModel(bad); });  // the weights say 3 units
  EXPECT_NE(e.find("layers/functional/layers/sequential/layers/dense"), std::string::npos) << e;
  // output_layers count a nested Model's calls from 1, as Keras's do.
  Rewrite(dir + "/nested.keras", bad, [](Json& c) {
    c["config"]["output_layers"] = Json::array({"inner", 0, 0});
  });
  e = ErrorOf([&] { LoadKerasModel(bad); });
  EXPECT_NE(e.find("config.output_layers names node 0 of the nested Model 'inner'"),
            std::string::npos)
      << e;
  Rewrite(dir + "/nested.keras", bad, [](Json& c) {
    c["config"]["output_layers"] = Json::array({"inner", 1, 0});
  });
  KerasModel first_call = LoadKerasModel(bad);
  EXPECT_EQ(first_call.functional->CallMany({NestedX()}, false)[0].ToVector<float>(),
            n.inner(NestedX()).ToVector<float>());
  Rewrite(dir + "/nested.keras", bad, [](Json& c) {
    Json deep = c;
    for (int i = 0; i < 20; ++i) {
      Json wrapper = c;
      wrapper["config"]["layers"][1] = deep;
      wrapper["config"]["layers"][1]["name"] = "inner";
      wrapper["config"]["layers"][1]["inbound_nodes"] = c["config"]["layers"][1]["inbound_nodes"];
      deep = wrapper;
    }
    c = deep;
  });
  e = ErrorOf([&] { LoadKerasModel(bad); });
  EXPECT_NE(e.find("nests models over 16 deep"), std::string::npos) << e;
}

}  // namespace
}  // namespace eager
