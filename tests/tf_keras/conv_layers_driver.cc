// conv_layers_driver: eager's side of the convolution and pooling layers
// against TF 2.21's Keras (tests/tf_keras/keras_conv_layers_test.py).
//
//   conv_layers_driver restore LAYOUT CASE FEEDS CKPT OUT
//   conv_layers_driver save    LAYOUT CASE FEEDS CKPT_PREFIX OUT
//
// CASE names one layer configuration, the same as the Python side's CASES.
// The layer sits in tf.train.Checkpoint(layer=...) with SetKerasLayout
// (LAYOUT "keras2" or "keras3") before it is built. FEEDS is a bundle with
// "x" (float32) and "bias" (float32 [filters], for cases with a bias).
//
// restore: restores CKPT into the fresh layer, calls it on x (the build
//          restores the variables on creation), asserts the restore was
//          consumed and writes its output "y" to the bundle OUT.
// save:    calls the layer on x (its own seeded glorot kernel), assigns the
//          fed bias, saves tf.train.Checkpoint(layer=...) as CKPT_PREFIX-1 and
//          the output "y" of the saved weights to OUT.
#include <exception>
#include <iostream>
#include <memory>
#include <string>

#include "eager.h"

namespace {

using namespace eager::layers;  // NOLINT: the Keras names, as in Python

std::unique_ptr<eager::Layer> MakeLayer(const std::string& name) {
  if (name == "conv2d_same_s2_relu") {
    return std::make_unique<Conv2D>(
        4, std::array<int64_t, 2>{3, 3},
        Conv2DConfig{.strides = {2, 2}, .padding = "same", .activation = eager::Relu});
  }
  if (name == "conv2d_dilated_tanh") {
    return std::make_unique<Conv2D>(
        3, std::array<int64_t, 2>{3, 2},
        Conv2DConfig{.dilation_rate = {2, 1}, .activation = eager::Tanh});
  }
  if (name == "conv2d_no_bias") {
    return std::make_unique<Conv2D>(5, std::array<int64_t, 2>{1, 2},
                                    Conv2DConfig{.strides = {1, 2}, .use_bias = false});
  }
  if (name == "conv1d_causal_dilated") {
    return std::make_unique<Conv1D>(5, 3, Conv1DConfig{.padding = "causal", .dilation_rate = 2});
  }
  if (name == "conv1d_same_s2") {
    return std::make_unique<Conv1D>(2, 4, Conv1DConfig{.strides = 2, .padding = "same"});
  }
  if (name == "depthwise_same_m2_relu") {
    return std::make_unique<DepthwiseConv2D>(std::array<int64_t, 2>{3, 2},
                                             DepthwiseConv2DConfig{.strides = {2, 1},
                                                                   .padding = "same",
                                                                   .depth_multiplier = 2,
                                                                   .activation = eager::Relu});
  }
  if (name == "depthwise_dilated") {
    return std::make_unique<DepthwiseConv2D>(std::array<int64_t, 2>{2, 2},
                                             DepthwiseConv2DConfig{.dilation_rate = {2, 2}});
  }
  if (name == "separable_same_m2_relu") {
    return std::make_unique<SeparableConv2D>(4, std::array<int64_t, 2>{3, 2},
                                             SeparableConv2DConfig{.strides = {2, 1},
                                                                   .padding = "same",
                                                                   .depth_multiplier = 2,
                                                                   .activation = eager::Relu});
  }
  if (name == "separable_dilated_no_bias") {
    return std::make_unique<SeparableConv2D>(
        3, std::array<int64_t, 2>{2, 2},
        SeparableConv2DConfig{.dilation_rate = {2, 2}, .use_bias = false});
  }
  if (name == "conv2d_transpose_same_s2") {
    return std::make_unique<Conv2DTranspose>(
        4, std::array<int64_t, 2>{3, 3},
        Conv2DConfig{.strides = {2, 2}, .padding = "same", .activation = eager::Relu});
  }
  if (name == "conv2d_transpose_valid_s2x1") {
    return std::make_unique<Conv2DTranspose>(3, std::array<int64_t, 2>{3, 2},
                                             Conv2DConfig{.strides = {2, 1}});
  }
  if (name == "max_pooling2d_same") {
    return std::make_unique<MaxPooling2D>(
        std::array<int64_t, 2>{3, 2},
        Pooling2DConfig{.strides = std::array<int64_t, 2>{2, 1}, .padding = "same"});
  }
  if (name == "average_pooling2d_same") {
    return std::make_unique<AveragePooling2D>(
        std::array<int64_t, 2>{3, 2},
        Pooling2DConfig{.strides = std::array<int64_t, 2>{2, 1}, .padding = "same"});
  }
  if (name == "average_pooling2d_valid") return std::make_unique<AveragePooling2D>();
  if (name == "max_pooling1d") return std::make_unique<MaxPooling1D>(3);
  if (name == "average_pooling1d_same") {
    return std::make_unique<AveragePooling1D>(3, Pooling1DConfig{.strides = 2, .padding = "same"});
  }
  if (name == "global_average_pooling2d") return std::make_unique<GlobalAveragePooling2D>();
  if (name == "global_max_pooling2d_keepdims") {
    return std::make_unique<GlobalMaxPooling2D>(/*keepdims=*/true);
  }
  if (name == "global_average_pooling1d") return std::make_unique<GlobalAveragePooling1D>();
  if (name == "global_max_pooling1d") return std::make_unique<GlobalMaxPooling1D>();
  if (name == "sequential_cnn") {  // tf_keras only: layer-N / layer_with_weights-N edges
    auto model = std::make_unique<eager::Sequential>();
    model->Add(
        std::make_unique<Conv2D>(4, std::array<int64_t, 2>{3, 3},
                                 Conv2DConfig{.padding = "same", .activation = eager::Relu}));
    model->Add(std::make_unique<MaxPooling2D>());
    model->Add(std::make_unique<DepthwiseConv2D>(std::array<int64_t, 2>{2, 2}));
    model->Add(std::make_unique<GlobalAveragePooling2D>());
    model->Add(std::make_unique<eager::Dense>(3));
    return model;
  }
  throw eager::InvalidArgumentError("unknown case '" + name + "'");
}

eager::KerasLayout ParseLayout(const std::string& name) {
  for (auto layout : {eager::KerasLayout::kKeras2Legacy, eager::KerasLayout::kKeras2,
                      eager::KerasLayout::kKeras3}) {
    if (eager::KerasLayoutName(layout) == name) return layout;
  }
  throw eager::InvalidArgumentError("unknown layout '" + name + "'");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (argc != 7 || (mode != "save" && mode != "restore")) {
    std::cerr << "usage: conv_layers_driver restore|save LAYOUT CASE FEEDS CKPT OUT\n";
    return 2;
  }
  try {
    const eager::KerasLayout layout = ParseLayout(argv[2]);
    std::unique_ptr<eager::Layer> layer = MakeLayer(argv[3]);
    const eager::BundleReader feeds(argv[4]);
    eager::Checkpoint checkpoint({{"layer", layer.get()}});
    eager::SetKerasLayout(checkpoint, layout);
    const eager::Tensor x = feeds.Read("x");
    eager::Tensor y;
    if (mode == "restore") {
      eager::CheckpointLoadStatus status = checkpoint.Restore(argv[5]);
      y = (*layer)(x);
      status.AssertConsumed();
    } else {
      (*layer)(x);
      eager::Variable* bias = nullptr;
      if (auto* conv = dynamic_cast<Conv2D*>(layer.get())) bias = conv->bias();
      if (auto* dw = dynamic_cast<DepthwiseConv2D*>(layer.get())) bias = dw->bias();
      if (auto* sep = dynamic_cast<SeparableConv2D*>(layer.get())) bias = sep->bias();
      if (auto* t = dynamic_cast<Conv2DTranspose*>(layer.get())) bias = t->bias();
      if (bias != nullptr) bias->Assign(feeds.Read("bias"));
      y = (*layer)(x);
      checkpoint.Save(argv[5]);  // CKPT_PREFIX-1, with the save_counter as TF's save()
    }
    eager::BundleWriter out(argv[6]);
    out.Add("y", y);
    out.Finish();
    std::cout << mode << " " << argv[3] << " (" << layer->name() << ") in the "
              << eager::KerasLayoutName(layout) << " layout: y " << y.shape() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "conv_layers_driver: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
