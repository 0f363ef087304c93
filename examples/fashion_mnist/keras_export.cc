#include "examples/fashion_mnist/keras_export.h"

#include <utility>

#include "autodiff/dense.h"
#include "autodiff/flatten.h"
#include "autodiff/input_layer.h"
#include "autodiff/layers/conv.h"
#include "autodiff/layers/pooling.h"
#include "autodiff/layers/reshaping.h"
#include "examples/fashion_mnist/cnn.h"
#include "examples/fashion_mnist/dataset.h"
#include "examples/fashion_mnist/mlp.h"
#include "ops/unary_ops.h"
#include "runtime/errors.h"
#include "saving/keras/keras_model.h"

namespace fashion_mnist {
namespace {

// A Dense layer named `name` holding a copy of `trained`'s weights.
std::unique_ptr<eager::Dense> CopyDense(const eager::Dense& trained, std::string_view name) {
  auto dense = std::make_unique<eager::Dense>(trained.units(), trained.activation(),
                                              trained.use_bias(), trained.seed(), name);
  const eager::Tensor& kernel = trained.kernel().value();
  dense->Build(kernel.shape().dim(0), kernel.dtype());
  dense->kernel().Assign(kernel);
  if (trained.bias() != nullptr) dense->bias()->Assign(trained.bias()->value());
  return dense;
}

std::unique_ptr<eager::layers::Conv2D> CopyConv(const ConvRelu& trained, std::string_view name) {
  eager::layers::Conv2DConfig config;
  config.padding = "same";
  config.activation = eager::Relu;
  config.name = std::string(name);
  auto conv = std::make_unique<eager::layers::Conv2D>(
      trained.filters(), std::array<int64_t, 2>{trained.kernel_size(), trained.kernel_size()},
      std::move(config));
  const eager::Tensor& kernel = trained.kernel().value();
  conv->Build(kernel.shape().dim(2), kernel.dtype());
  conv->kernel().Assign(kernel);
  conv->bias()->Assign(trained.bias().value());
  return conv;
}

}  // namespace

std::unique_ptr<eager::Sequential> AsKerasSequential(const Classifier& model) {
  if (!model.built()) {
    throw eager::FailedPreconditionError(
        "AsKerasSequential: the model is not built (train or call it first)");
  }
  auto keras = std::make_unique<eager::Sequential>("fashion_mnist");
  keras->Add(std::make_unique<eager::InputLayer>(eager::Shape{kImageSize}, "images"));
  if (const auto* mlp = dynamic_cast<const Mlp*>(&model)) {
    keras->Add(CopyDense(mlp->hidden, "hidden"));
    keras->Add(CopyDense(mlp->logits, "logits"));
    (*keras)(eager::Tensor::Zeros(eager::Shape{1, kImageSize}, eager::DType::kFloat32));
    return keras;
  }
  if (const auto* cnn = dynamic_cast<const Cnn*>(&model)) {
    keras->Add(std::make_unique<eager::layers::Reshape>(std::vector<int64_t>{28, 28, 1}, "image"));
    keras->Add(CopyConv(cnn->conv1, "conv1"));
    keras->Add(std::make_unique<eager::layers::MaxPooling2D>(
        std::array<int64_t, 2>{2, 2}, eager::layers::Pooling2DConfig{.name = "pool1"}));
    keras->Add(CopyConv(cnn->conv2, "conv2"));
    keras->Add(std::make_unique<eager::layers::MaxPooling2D>(
        std::array<int64_t, 2>{2, 2}, eager::layers::Pooling2DConfig{.name = "pool2"}));
    keras->Add(std::make_unique<eager::Flatten>("flatten"));
    keras->Add(CopyDense(cnn->hidden, "hidden"));
    keras->Add(CopyDense(cnn->logits, "logits"));
    (*keras)(eager::Tensor::Zeros(eager::Shape{1, kImageSize}, eager::DType::kFloat32));
    return keras;
  }
  throw eager::InvalidArgumentError(
      "AsKerasSequential: the model is neither the main job's MLP nor its CNN");
}

void SaveAsKeras(const Classifier& model, const std::string& path) {
  const std::unique_ptr<eager::Sequential> keras = AsKerasSequential(model);
  eager::SaveKerasModel(path, *keras);
}

}  // namespace fashion_mnist
