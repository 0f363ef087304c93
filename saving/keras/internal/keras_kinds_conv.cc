// Registrations of the convolution layers (keras_layer_kinds.h): Conv2D,
// Conv1D, DepthwiseConv2D, SeparableConv2D, Conv2DTranspose, with the
// variable orders Keras 3 writes (kernel then bias; SeparableConv2D
// depthwise, pointwise, bias).

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/layers/conv.h"
#include "runtime/errors.h"
#include "saving/keras/internal/keras_layer_kinds.h"

namespace eager::keras_internal {
namespace {

using layers::Conv1D;
using layers::Conv2D;
using layers::Conv2DTranspose;
using layers::DepthwiseConv2D;
using layers::SeparableConv2D;

std::string Describe(const char* cls, const Layer& layer) {
  return StrCat(cls, " '", layer.name(), "'");
}

Json Pair(const std::array<int64_t, 2>& a) { return Json::array({a[0], a[1]}); }

void NullRegularizers(Json& c, std::initializer_list<const char*> keys) {
  for (const char* k : keys) c[k] = nullptr;
}

// The arguments every 2-D convolution reads alike.
struct Conv2DArgs {
  std::array<int64_t, 2> strides;
  std::string padding;
  std::array<int64_t, 2> dilation;
  eager::Activation activation;
  bool use_bias;
};

std::array<int64_t, 2> Two(const std::vector<int64_t>& v) { return {v[0], v[1]}; }

Conv2DArgs ReadConv2DArgs(ConfigReader& r) {
  Conv2DArgs a;
  a.strides = Two(r.Ints("strides", 2, 1, kMaxConfigInt, 1));
  a.padding = r.String("padding", {"valid", "same"}, std::string("valid"));
  r.Expect("data_format", {Json("channels_last")});
  a.dilation = Two(r.Ints("dilation_rate", 2, 1, kMaxConfigInt, 1));
  a.activation = r.ActivationFn("activation");
  a.use_bias = r.Bool("use_bias", true);
  r.Ignore("bias_initializer");
  return a;
}

std::vector<Variable*> WithBias(Variable& kernel, Variable* bias) {
  std::vector<Variable*> vars{&kernel};
  if (bias != nullptr) vars.push_back(bias);
  return vars;
}

// ---- Conv2D, Conv1D ----

std::vector<Variable*> ConvVariables(Layer& layer) {
  auto& c = static_cast<Conv2D&>(layer);
  return WithBias(c.kernel(), c.config().use_bias ? c.bias() : nullptr);
}

void Conv2DBuild(Layer& layer, const std::vector<Shape>& shapes, DType dtype) {
  auto& c = static_cast<Conv2D&>(layer);
  if (c.built()) return;
  const std::string what = Describe("Conv2D", c);
  ExpectCount(what, shapes, c.config().use_bias ? 2 : 1);
  ExpectShape(what + " kernel", shapes[0],
              {c.kernel_size()[0], c.kernel_size()[1], -1, c.filters()});
  c.Build(shapes[0].dim(2), dtype);
}

void Conv1DBuild(Layer& layer, const std::vector<Shape>& shapes, DType dtype) {
  auto& c = static_cast<Conv1D&>(layer);
  if (c.built()) return;
  const std::string what = Describe("Conv1D", c);
  ExpectCount(what, shapes, c.config().use_bias ? 2 : 1);
  ExpectShape(what + " kernel", shapes[0], {c.kernel_size()[1], -1, c.filters()});
  c.Build(shapes[0].dim(1), dtype);
}

void ConvTail(Json& c, const eager::Activation& activation, bool use_bias, const std::string& name,
              const char* kernel_key) {
  c["activation"] = ActivationName(activation, name);
  c["use_bias"] = use_bias;
  c[kernel_key] = GlorotUniformJson();
  c["bias_initializer"] = InitializerJson("Zeros");
}

void Conv2DToConfig(Layer& layer, Json& c) {
  auto& l = static_cast<Conv2D&>(layer);
  c["filters"] = l.filters();
  c["kernel_size"] = Pair(l.kernel_size());
  c["strides"] = Pair(l.config().strides);
  c["padding"] = l.config().padding;
  c["data_format"] = "channels_last";
  c["dilation_rate"] = Pair(l.config().dilation_rate);
  c["groups"] = 1;
  ConvTail(c, l.config().activation, l.config().use_bias, l.name(), "kernel_initializer");
  NullRegularizers(c, {"kernel_regularizer", "bias_regularizer", "activity_regularizer",
                       "kernel_constraint", "bias_constraint"});
}

void Conv1DToConfig(Layer& layer, Json& c) {
  auto& l = static_cast<Conv1D&>(layer);
  c["filters"] = l.filters();
  c["kernel_size"] = Json::array({l.kernel_size()[1]});
  c["strides"] = Json::array({l.config().strides[1]});
  c["padding"] = l.causal() ? "causal" : l.config().padding;
  c["data_format"] = "channels_last";
  c["dilation_rate"] = Json::array({l.config().dilation_rate[1]});
  c["groups"] = 1;
  ConvTail(c, l.config().activation, l.config().use_bias, l.name(), "kernel_initializer");
  NullRegularizers(c, {"kernel_regularizer", "bias_regularizer", "activity_regularizer",
                       "kernel_constraint", "bias_constraint"});
}

std::unique_ptr<Layer> Conv2DFromConfig(ConfigReader& r, const std::string& name) {
  const int64_t filters = r.Int("filters", 1, kMaxConfigInt, std::nullopt);
  const auto kernel = Two(r.Ints("kernel_size", 2, 1, kMaxConfigInt, std::nullopt));
  r.Expect("groups", {Json(1)});
  r.Ignore("kernel_initializer");
  const Conv2DArgs a = ReadConv2DArgs(r);
  return std::make_unique<Conv2D>(filters, kernel,
                                  layers::Conv2DConfig{.strides = a.strides,
                                                       .padding = a.padding,
                                                       .dilation_rate = a.dilation,
                                                       .activation = a.activation,
                                                       .use_bias = a.use_bias,
                                                       .name = name});
}

std::unique_ptr<Layer> Conv1DFromConfig(ConfigReader& r, const std::string& name) {
  const int64_t filters = r.Int("filters", 1, kMaxConfigInt, std::nullopt);
  const int64_t kernel = r.Ints("kernel_size", 1, 1, kMaxConfigInt, std::nullopt)[0];
  r.Expect("groups", {Json(1)});
  r.Ignore("kernel_initializer");
  r.Expect("data_format", {Json("channels_last")});
  layers::Conv1DConfig config;
  config.strides = r.Ints("strides", 1, 1, kMaxConfigInt, 1)[0];
  config.padding = r.String("padding", {"valid", "same", "causal"}, std::string("valid"));
  config.dilation_rate = r.Ints("dilation_rate", 1, 1, kMaxConfigInt, 1)[0];
  config.activation = r.ActivationFn("activation");
  config.use_bias = r.Bool("use_bias", true);
  config.name = name;
  r.Ignore("bias_initializer");
  return std::make_unique<Conv1D>(filters, kernel, config);
}

// ---- DepthwiseConv2D ----

std::vector<Variable*> DepthwiseVariables(Layer& layer) {
  auto& c = static_cast<DepthwiseConv2D&>(layer);
  return WithBias(c.depthwise_kernel(), c.config().use_bias ? c.bias() : nullptr);
}

void DepthwiseBuild(Layer& layer, const std::vector<Shape>& shapes, DType dtype) {
  auto& c = static_cast<DepthwiseConv2D&>(layer);
  if (c.built()) return;
  const std::string what = Describe("DepthwiseConv2D", c);
  const int64_t dm = c.config().depth_multiplier;
  ExpectCount(what, shapes, c.config().use_bias ? 2 : 1);
  ExpectShape(what + " kernel", shapes[0], {c.kernel_size()[0], c.kernel_size()[1], -1, dm});
  if (shapes.size() > 1) ExpectShape(what + " bias", shapes[1], {shapes[0].dim(2) * dm});
  c.Build(shapes[0].dim(2), dtype);
}

void DepthwiseToConfig(Layer& layer, Json& c) {
  auto& l = static_cast<DepthwiseConv2D&>(layer);
  c["depth_multiplier"] = l.config().depth_multiplier;
  c["kernel_size"] = Pair(l.kernel_size());
  c["strides"] = Pair(l.config().strides);
  c["padding"] = l.config().padding;
  c["data_format"] = "channels_last";
  c["dilation_rate"] = Pair(l.config().dilation_rate);
  ConvTail(c, l.config().activation, l.config().use_bias, l.name(), "depthwise_initializer");
  NullRegularizers(c, {"depthwise_regularizer", "bias_regularizer", "activity_regularizer",
                       "depthwise_constraint", "bias_constraint"});
}

std::unique_ptr<Layer> DepthwiseFromConfig(ConfigReader& r, const std::string& name) {
  const int64_t dm = r.Int("depth_multiplier", 1, kMaxConfigInt, 1);
  const auto kernel = Two(r.Ints("kernel_size", 2, 1, kMaxConfigInt, std::nullopt));
  r.Ignore("depthwise_initializer");
  const Conv2DArgs a = ReadConv2DArgs(r);
  return std::make_unique<DepthwiseConv2D>(
      kernel, layers::DepthwiseConv2DConfig{.strides = a.strides,
                                            .padding = a.padding,
                                            .depth_multiplier = dm,
                                            .dilation_rate = a.dilation,
                                            .activation = a.activation,
                                            .use_bias = a.use_bias,
                                            .name = name});
}

// ---- SeparableConv2D ----

std::vector<Variable*> SeparableVariables(Layer& layer) {
  auto& c = static_cast<SeparableConv2D&>(layer);
  std::vector<Variable*> vars{&c.depthwise_kernel(), &c.pointwise_kernel()};
  if (c.config().use_bias) vars.push_back(c.bias());
  return vars;
}

void SeparableBuild(Layer& layer, const std::vector<Shape>& shapes, DType dtype) {
  auto& c = static_cast<SeparableConv2D&>(layer);
  if (c.built()) return;
  const std::string what = Describe("SeparableConv2D", c);
  const int64_t dm = c.config().depth_multiplier;
  ExpectCount(what, shapes, c.config().use_bias ? 3 : 2);
  ExpectShape(what + " depthwise kernel", shapes[0],
              {c.kernel_size()[0], c.kernel_size()[1], -1, dm});
  ExpectShape(what + " pointwise kernel", shapes[1], {1, 1, shapes[0].dim(2) * dm, c.filters()});
  c.Build(shapes[0].dim(2), dtype);
}

void SeparableToConfig(Layer& layer, Json& c) {
  auto& l = static_cast<SeparableConv2D&>(layer);
  c["depth_multiplier"] = l.config().depth_multiplier;
  c["filters"] = l.filters();
  c["kernel_size"] = Pair(l.kernel_size());
  c["strides"] = Pair(l.config().strides);
  c["padding"] = l.config().padding;
  c["data_format"] = "channels_last";
  c["dilation_rate"] = Pair(l.config().dilation_rate);
  ConvTail(c, l.config().activation, l.config().use_bias, l.name(), "depthwise_initializer");
  c["pointwise_initializer"] = GlorotUniformJson();
  NullRegularizers(c, {"depthwise_regularizer", "pointwise_regularizer", "bias_regularizer",
                       "activity_regularizer", "depthwise_constraint", "pointwise_constraint",
                       "bias_constraint"});
}

std::unique_ptr<Layer> SeparableFromConfig(ConfigReader& r, const std::string& name) {
  const int64_t dm = r.Int("depth_multiplier", 1, kMaxConfigInt, 1);
  const int64_t filters = r.Int("filters", 1, kMaxConfigInt, std::nullopt);
  const auto kernel = Two(r.Ints("kernel_size", 2, 1, kMaxConfigInt, std::nullopt));
  r.Ignore("depthwise_initializer");
  r.Ignore("pointwise_initializer");
  const Conv2DArgs a = ReadConv2DArgs(r);
  return std::make_unique<SeparableConv2D>(
      filters, kernel,
      layers::SeparableConv2DConfig{.strides = a.strides,
                                    .padding = a.padding,
                                    .depth_multiplier = dm,
                                    .dilation_rate = a.dilation,
                                    .activation = a.activation,
                                    .use_bias = a.use_bias,
                                    .name = name});
}

// ---- Conv2DTranspose ----

std::vector<Variable*> TransposeVariables(Layer& layer) {
  auto& c = static_cast<Conv2DTranspose&>(layer);
  return WithBias(c.kernel(), c.config().use_bias ? c.bias() : nullptr);
}

void TransposeBuild(Layer& layer, const std::vector<Shape>& shapes, DType dtype) {
  auto& c = static_cast<Conv2DTranspose&>(layer);
  if (c.built()) return;
  const std::string what = Describe("Conv2DTranspose", c);
  ExpectCount(what, shapes, c.config().use_bias ? 2 : 1);
  ExpectShape(what + " kernel", shapes[0],
              {c.kernel_size()[0], c.kernel_size()[1], c.filters(), -1});
  c.Build(shapes[0].dim(3), dtype);
}

void TransposeToConfig(Layer& layer, Json& c) {
  auto& l = static_cast<Conv2DTranspose&>(layer);
  c["filters"] = l.filters();
  c["kernel_size"] = Pair(l.kernel_size());
  c["strides"] = Pair(l.config().strides);
  c["padding"] = l.config().padding;
  c["output_padding"] = nullptr;
  c["data_format"] = "channels_last";
  c["dilation_rate"] = Pair(l.config().dilation_rate);
  ConvTail(c, l.config().activation, l.config().use_bias, l.name(), "kernel_initializer");
  NullRegularizers(c, {"kernel_regularizer", "bias_regularizer", "activity_regularizer",
                       "kernel_constraint", "bias_constraint"});
}

std::unique_ptr<Layer> TransposeFromConfig(ConfigReader& r, const std::string& name) {
  const int64_t filters = r.Int("filters", 1, kMaxConfigInt, std::nullopt);
  const auto kernel = Two(r.Ints("kernel_size", 2, 1, kMaxConfigInt, std::nullopt));
  r.Ignore("kernel_initializer");
  const Conv2DArgs a = ReadConv2DArgs(r);
  return std::make_unique<Conv2DTranspose>(filters, kernel,
                                           layers::Conv2DConfig{.strides = a.strides,
                                                                .padding = a.padding,
                                                                .dilation_rate = a.dilation,
                                                                .activation = a.activation,
                                                                .use_bias = a.use_bias,
                                                                .name = name});
}

// Each output pixel per input pixel: the strides, plus the kernel's reach
// ("valid" adds k_eff - stride per axis).
double TransposeGrowth(Layer& layer) {
  auto& c = static_cast<Conv2DTranspose&>(layer);
  double g = 1;
  for (int i = 0; i < 2; ++i) {
    g *= double(c.config().strides[i]) +
         double(c.config().dilation_rate[i]) * double(c.kernel_size()[i]);
  }
  return g;
}

}  // namespace

std::vector<KerasLayerKind> ConvKinds() {
  return {
      {"Conv2D", "conv2d", Is<Conv2D>, ConvVariables, Conv2DBuild, Conv2DToConfig,
       Conv2DFromConfig},
      {"Conv1D", "conv1d", Is<Conv1D>, ConvVariables, Conv1DBuild, Conv1DToConfig,
       Conv1DFromConfig},
      {"DepthwiseConv2D", "depthwise_conv2d", Is<DepthwiseConv2D>, DepthwiseVariables,
       DepthwiseBuild, DepthwiseToConfig, DepthwiseFromConfig},
      {"SeparableConv2D", "separable_conv2d", Is<SeparableConv2D>, SeparableVariables,
       SeparableBuild, SeparableToConfig, SeparableFromConfig},
      {"Conv2DTranspose", "conv2d_transpose", Is<Conv2DTranspose>, TransposeVariables,
       TransposeBuild, TransposeToConfig, TransposeFromConfig, TransposeGrowth},
  };
}

}  // namespace eager::keras_internal
