#pragma once

// The main job's model, 784-256-10 with ReLU, and its training step;
// header-only, so that the training benchmark uses exactly this code without
// linking the example library.

#include <vector>

#include "autodiff/adam.h"
#include "autodiff/dense.h"
#include "autodiff/gradient_tape.h"
#include "autodiff/module.h"
#include "ops/nn_ops.h"
#include "ops/reduction_ops.h"
#include "ops/unary_ops.h"

namespace fashion_mnist {

struct Mlp : eager::Module {
  explicit Mlp(uint64_t seed = 0)
      : hidden(256, eager::Relu, /*use_bias=*/true, seed), logits(10, nullptr, true, seed + 1) {
    Track("hidden", hidden);
    Track("logits", logits);
  }
  // images [batch, 784] -> logits [batch, 10].
  eager::Tensor operator()(const eager::Tensor& images) { return logits(hidden(images)); }

  eager::Dense hidden;
  eager::Dense logits;
};

// One optimizer step on the mean sparse softmax cross entropy of
// (images [batch, 784] float32, labels [batch] int32); returns the loss.
// The first call builds the model.
inline float TrainStep(Mlp& model, eager::Optimizer& optimizer, const eager::Tensor& images,
                       const eager::Tensor& labels) {
  eager::GradientTape tape;
  const eager::Tensor loss =
      eager::ReduceMean(eager::SparseSoftmaxCrossEntropyWithLogits(labels, model(images)));
  const std::vector<eager::Variable*> variables = model.TrainableVariables();
  optimizer.ApplyGradients(tape.Gradient(loss, variables), variables);
  return loss.scalar<float>();
}

}  // namespace fashion_mnist
