// Registrations of the core layers: Dense, Flatten, nested Sequential,
// Embedding, Dropout, Masking, the normalizations and the shape layers
// (keras_layer_kinds.h). Keras's config keys and variable orders are those
// keras 3.15's get_config() and build() write (checked with h5py on files
// TF 2.21's Keras saves).

#include <array>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autodiff/dense.h"
#include "autodiff/flatten.h"
#include "autodiff/functional.h"
#include "autodiff/input_layer.h"
#include "autodiff/layers/embedding.h"
#include "autodiff/layers/masking.h"
#include "autodiff/layers/normalization.h"
#include "autodiff/layers/regularization.h"
#include "autodiff/layers/reshaping.h"
#include "autodiff/sequential.h"
#include "runtime/errors.h"
#include "saving/keras/internal/keras_layer_kinds.h"

namespace eager::keras_internal {
namespace {

using layers::BatchNormalization;
using layers::Cropping2D;
using layers::Dropout;
using layers::Embedding;
using layers::LayerNormalization;
using layers::Permute;
using layers::RepeatVector;
using layers::Reshape;
using layers::ZeroPadding2D;

std::string Describe(const char* cls, const Layer& layer) {
  return StrCat(cls, " '", layer.name(), "'");
}

Json Sides(const std::array<int64_t, 4>& s) {
  return Json::array({Json::array({s[0], s[1]}), Json::array({s[2], s[3]})});
}

// ---- Dense ----

std::vector<Variable*> DenseVariables(Layer& layer) {
  auto& d = static_cast<Dense&>(layer);
  std::vector<Variable*> vars{&d.kernel()};
  if (d.use_bias()) vars.push_back(d.bias());
  return vars;
}

void DenseBuild(Layer& layer, const std::vector<Shape>& shapes, DType dtype) {
  auto& d = static_cast<Dense&>(layer);
  if (d.built()) return;
  const std::string what = Describe("Dense", d);
  ExpectCount(what, shapes, d.use_bias() ? 2 : 1);
  ExpectShape(what + " kernel", shapes[0], {-1, d.units()});
  d.Build(shapes[0].dim(0), dtype);
}

void DenseToConfig(Layer& layer, Json& c) {
  auto& d = static_cast<Dense&>(layer);
  c["units"] = d.units();
  c["activation"] = ActivationName(d.activation(), d.name());
  c["use_bias"] = d.use_bias();
  c["kernel_initializer"] = GlorotUniformJson();
  c["bias_initializer"] = InitializerJson("Zeros");
  for (const char* k : {"kernel_regularizer", "bias_regularizer", "kernel_constraint",
                        "bias_constraint", "quantization_config"})
    c[k] = nullptr;
}

std::unique_ptr<Layer> DenseFromConfig(ConfigReader& r, const std::string& name) {
  const int64_t units = r.Int("units", 1, kMaxConfigInt, std::nullopt);
  eager::Activation activation = r.ActivationFn("activation");
  const bool use_bias = r.Bool("use_bias", true);
  r.Ignore("kernel_initializer");
  r.Ignore("bias_initializer");
  return std::make_unique<Dense>(units, activation, use_bias, std::nullopt, name);
}

// ---- Embedding ----

std::vector<Variable*> EmbeddingVariables(Layer& layer) {
  return {&static_cast<Embedding&>(layer).embeddings()};
}

void EmbeddingBuild(Layer& layer, const std::vector<Shape>& shapes, DType) {
  auto& e = static_cast<Embedding&>(layer);
  if (e.built()) return;
  const std::string what = Describe("Embedding", e);
  ExpectCount(what, shapes, 1);
  ExpectShape(what + " embeddings", shapes[0], {e.input_dim(), e.output_dim()});
  e.Build();
}

void EmbeddingToConfig(Layer& layer, Json& c) {
  auto& e = static_cast<Embedding&>(layer);
  c["input_dim"] = e.input_dim();
  c["output_dim"] = e.output_dim();
  c["embeddings_initializer"] =
      InitializerJson("RandomUniform", {{"seed", nullptr}, {"minval", -0.05}, {"maxval", 0.05}});
  c["embeddings_regularizer"] = nullptr;
  c["activity_regularizer"] = nullptr;
  c["embeddings_constraint"] = nullptr;
  c["mask_zero"] = e.mask_zero();
}

std::unique_ptr<Layer> EmbeddingFromConfig(ConfigReader& r, const std::string& name) {
  const int64_t input_dim = r.Int("input_dim", 1, kMaxConfigInt, std::nullopt);
  const int64_t output_dim = r.Int("output_dim", 1, kMaxConfigInt, std::nullopt);
  const bool mask_zero = r.Bool("mask_zero", false);
  r.Ignore("embeddings_initializer");
  r.Ignore("input_length");  // tf_keras's; the ids' shape decides
  return std::make_unique<Embedding>(input_dim, output_dim, mask_zero, std::nullopt,
                                     DType::kFloat32, name);
}

// ---- BatchNormalization, LayerNormalization ----

std::vector<Variable*> BatchNormVariables(Layer& layer) {
  auto& b = static_cast<BatchNormalization&>(layer);
  std::vector<Variable*> vars;
  if (b.scale()) vars.push_back(b.gamma());
  if (b.center()) vars.push_back(b.beta());
  vars.push_back(&b.moving_mean());
  vars.push_back(&b.moving_variance());
  return vars;
}

void BatchNormBuild(Layer& layer, const std::vector<Shape>& shapes, DType dtype) {
  auto& b = static_cast<BatchNormalization&>(layer);
  if (b.built()) return;
  const std::string what = Describe("BatchNormalization", b);
  ExpectCount(what, shapes, 2 + b.scale() + b.center());
  ExpectShape(what + " variable 0", shapes[0], {-1});
  for (size_t i = 1; i < shapes.size(); ++i)
    ExpectShape(StrCat(what, " variable ", i), shapes[i], {shapes[0].dim(0)});
  b.Build(shapes[0].dim(0), dtype);
}

void BatchNormToConfig(Layer& layer, Json& c) {
  auto& b = static_cast<BatchNormalization&>(layer);
  c["axis"] = -1;
  c["momentum"] = b.momentum();
  c["epsilon"] = b.epsilon();
  c["center"] = b.center();
  c["scale"] = b.scale();
  c["beta_initializer"] = InitializerJson("Zeros");
  c["gamma_initializer"] = InitializerJson("Ones");
  c["moving_mean_initializer"] = InitializerJson("Zeros");
  c["moving_variance_initializer"] = InitializerJson("Ones");
  for (const char* k :
       {"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"})
    c[k] = nullptr;
  c["synchronized"] = false;
}

void IgnoreNormInitializers(ConfigReader& r) {
  for (const char* k : {"beta_initializer", "gamma_initializer", "moving_mean_initializer",
                        "moving_variance_initializer"})
    r.Ignore(k);
}

std::unique_ptr<Layer> BatchNormFromConfig(ConfigReader& r, const std::string& name) {
  r.Expect("axis", {Json(-1), Json::array({-1})});
  const double momentum = r.Float("momentum", 0, 1, 0.99);
  const double epsilon = r.Float("epsilon", 1e-30, 1e6, 1e-3);
  const bool center = r.Bool("center", true);
  const bool scale = r.Bool("scale", true);
  r.Expect("synchronized", {Json(false)});
  r.Expect("renorm", {Json(false)});
  r.Ignore("renorm_momentum");  // unused without renorm
  IgnoreNormInitializers(r);
  return std::make_unique<BatchNormalization>(momentum, epsilon, center, scale, name);
}

std::vector<Variable*> LayerNormVariables(Layer& layer) {
  auto& l = static_cast<LayerNormalization&>(layer);
  std::vector<Variable*> vars;
  if (l.scale()) vars.push_back(l.gamma());
  if (l.center()) vars.push_back(l.beta());
  return vars;
}

void LayerNormBuild(Layer& layer, const std::vector<Shape>& shapes, DType dtype) {
  auto& l = static_cast<LayerNormalization&>(layer);
  if (l.built() || (!l.scale() && !l.center())) return;  // weightless: builds when called
  const std::string what = Describe("LayerNormalization", l);
  ExpectCount(what, shapes, static_cast<size_t>(l.scale() + l.center()));
  ExpectShape(what + " variable 0", shapes[0], {-1});
  for (size_t i = 1; i < shapes.size(); ++i)
    ExpectShape(StrCat(what, " variable ", i), shapes[i], {shapes[0].dim(0)});
  l.Build(shapes[0].dim(0), dtype);
}

void LayerNormToConfig(Layer& layer, Json& c) {
  auto& l = static_cast<LayerNormalization&>(layer);
  c["axis"] = Json::array({-1});
  c["epsilon"] = l.epsilon();
  c["center"] = l.center();
  c["scale"] = l.scale();
  c["rms_scaling"] = false;
  c["beta_initializer"] = InitializerJson("Zeros");
  c["gamma_initializer"] = InitializerJson("Ones");
  for (const char* k :
       {"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"})
    c[k] = nullptr;
}

std::unique_ptr<Layer> LayerNormFromConfig(ConfigReader& r, const std::string& name) {
  r.Expect("axis", {Json::array({-1}), Json(-1)});
  const double epsilon = r.Float("epsilon", 1e-30, 1e6, 1e-3);
  const bool center = r.Bool("center", true);
  const bool scale = r.Bool("scale", true);
  r.Expect("rms_scaling", {Json(false)});
  IgnoreNormInitializers(r);
  return std::make_unique<LayerNormalization>(epsilon, center, scale, name);
}

// ---- weightless layers ----

void FlattenToConfig(Layer&, Json& c) { c["data_format"] = "channels_last"; }

std::unique_ptr<Layer> FlattenFromConfig(ConfigReader& r, const std::string& name) {
  r.Expect("data_format", {Json("channels_last")});
  return std::make_unique<Flatten>(name);
}

void DropoutToConfig(Layer& layer, Json& c) {
  c["rate"] = static_cast<Dropout&>(layer).rate();
  c["seed"] = nullptr;  // eager's generator is not Keras's: no seed means the same to both
  c["noise_shape"] = nullptr;
}

std::unique_ptr<Layer> DropoutFromConfig(ConfigReader& r, const std::string& name) {
  const double rate = r.Float("rate", 0, 1, std::nullopt);
  std::optional<uint64_t> seed;
  if (r.Has("seed"))
    seed = static_cast<uint64_t>(r.Int("seed", 0, std::numeric_limits<int64_t>::max(), 0));
  return std::make_unique<Dropout>(rate, seed, name);
}

void MaskingToConfig(Layer& layer, Json& c) {
  c["mask_value"] = static_cast<layers::Masking&>(layer).mask_value();
}

std::unique_ptr<Layer> MaskingFromConfig(ConfigReader& r, const std::string& name) {
  const double value = r.Float("mask_value", -std::numeric_limits<double>::max(),
                               std::numeric_limits<double>::max(), 0.0);
  return std::make_unique<layers::Masking>(value, name);
}

void ActivationToConfig(Layer& layer, Json& c) {
  c["activation"] = static_cast<layers::Activation&>(layer).activation_name();
}

std::unique_ptr<Layer> ActivationFromConfig(ConfigReader& r, const std::string& name) {
  const std::string activation = r.Activation("activation");
  return std::make_unique<layers::Activation>(activation, name);
}

void ReshapeToConfig(Layer& layer, Json& c) {
  c["target_shape"] = static_cast<Reshape&>(layer).target_shape();
}

std::unique_ptr<Layer> ReshapeFromConfig(ConfigReader& r, const std::string& name) {
  return std::make_unique<Reshape>(r.IntList("target_shape", -1, kMaxConfigInt), name);
}

void PermuteToConfig(Layer& layer, Json& c) { c["dims"] = static_cast<Permute&>(layer).dims(); }

std::unique_ptr<Layer> PermuteFromConfig(ConfigReader& r, const std::string& name) {
  return std::make_unique<Permute>(r.IntList("dims", 1, 8), name);
}

void RepeatVectorToConfig(Layer& layer, Json& c) {
  c["n"] = static_cast<RepeatVector&>(layer).times();
}

std::unique_ptr<Layer> RepeatVectorFromConfig(ConfigReader& r, const std::string& name) {
  return std::make_unique<RepeatVector>(r.Int("n", 1, kMaxConfigInt, std::nullopt), name);
}

double RepeatVectorGrowth(Layer& layer) {
  return static_cast<double>(static_cast<RepeatVector&>(layer).times());
}

double ZeroPaddingGrowth(Layer& layer) {
  const std::array<int64_t, 4> p = static_cast<ZeroPadding2D&>(layer).padding();
  return double(1 + p[0] + p[1]) * double(1 + p[2] + p[3]);
}

void ZeroPaddingToConfig(Layer& layer, Json& c) {
  c["padding"] = Sides(static_cast<ZeroPadding2D&>(layer).padding());
  c["data_format"] = "channels_last";
}

std::unique_ptr<Layer> ZeroPaddingFromConfig(ConfigReader& r, const std::string& name) {
  const std::vector<int64_t> p = r.Sides("padding", kMaxConfigInt);
  r.Expect("data_format", {Json("channels_last")});
  return std::make_unique<ZeroPadding2D>(p[0], p[1], p[2], p[3], name);
}

void CroppingToConfig(Layer& layer, Json& c) {
  c["cropping"] = Sides(static_cast<Cropping2D&>(layer).cropping());
  c["data_format"] = "channels_last";
}

std::unique_ptr<Layer> CroppingFromConfig(ConfigReader& r, const std::string& name) {
  const std::vector<int64_t> p = r.Sides("cropping", kMaxConfigInt);
  r.Expect("data_format", {Json("channels_last")});
  return std::make_unique<Cropping2D>(p[0], p[1], p[2], p[3], name);
}

}  // namespace

std::vector<KerasLayerKind> CoreKinds() {
  return {
      {"Dense", "dense", Is<Dense>, DenseVariables, DenseBuild, DenseToConfig, DenseFromConfig},
      {"Flatten", "flatten", Is<Flatten>, nullptr, nullptr, FlattenToConfig, FlattenFromConfig},
      // Nested: weights only (its layers are saved under its group).
      {"Sequential", "sequential", Is<Sequential>},
      // In a functional Model's layers (weightless), and a nested Model.
      {"InputLayer", "input_layer", Is<InputLayer>},
      {"Functional", "functional", Is<Model>},
      {"Embedding", "embedding", Is<Embedding>, EmbeddingVariables, EmbeddingBuild,
       EmbeddingToConfig, EmbeddingFromConfig},
      {"BatchNormalization", "batch_normalization", Is<BatchNormalization>, BatchNormVariables,
       BatchNormBuild, BatchNormToConfig, BatchNormFromConfig},
      {"LayerNormalization", "layer_normalization", Is<LayerNormalization>, LayerNormVariables,
       LayerNormBuild, LayerNormToConfig, LayerNormFromConfig},
      {"Dropout", "dropout", Is<Dropout>, nullptr, nullptr, DropoutToConfig, DropoutFromConfig},
      {"Masking", "masking", Is<layers::Masking>, nullptr, nullptr, MaskingToConfig,
       MaskingFromConfig},
      {"Activation", "activation", Is<layers::Activation>, nullptr, nullptr, ActivationToConfig,
       ActivationFromConfig},
      {"Reshape", "reshape", Is<Reshape>, nullptr, nullptr, ReshapeToConfig, ReshapeFromConfig},
      {"Permute", "permute", Is<Permute>, nullptr, nullptr, PermuteToConfig, PermuteFromConfig},
      {"RepeatVector", "repeat_vector", Is<RepeatVector>, nullptr, nullptr, RepeatVectorToConfig,
       RepeatVectorFromConfig, RepeatVectorGrowth},
      {"ZeroPadding2D", "zero_padding2d", Is<ZeroPadding2D>, nullptr, nullptr, ZeroPaddingToConfig,
       ZeroPaddingFromConfig, ZeroPaddingGrowth},
      {"Cropping2D", "cropping2d", Is<Cropping2D>, nullptr, nullptr, CroppingToConfig,
       CroppingFromConfig},
  };
}

}  // namespace eager::keras_internal
