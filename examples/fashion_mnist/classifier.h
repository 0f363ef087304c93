#pragma once

// What the main job's training loop needs of a model: a Module that maps a
// batch of flattened images [batch, 784] to logits [batch, 10] and builds
// its variables on the first call. Mlp (mlp.h) and Cnn (cnn.h) are the two.

#include <vector>

#include "autodiff/gradient_tape.h"
#include "autodiff/module.h"
#include "autodiff/optimizer.h"
#include "ops/nn_ops.h"
#include "ops/reduction_ops.h"

namespace fashion_mnist {

struct Classifier : eager::Module {
  // images [batch, 784] float32 -> logits [batch, 10]. Builds on the first call.
  virtual eager::Tensor operator()(const eager::Tensor& images) = 0;
  // Whether the first call has created the variables.
  virtual bool built() const = 0;
};

// One optimizer step on the mean sparse softmax cross entropy of
// (images [batch, 784] float32, labels [batch] int32); returns the loss.
// The first call builds the model. Header-only, so that the benchmarks run
// exactly this code without linking the example library.
inline float TrainStep(Classifier& model, eager::Optimizer& optimizer, const eager::Tensor& images,
                       const eager::Tensor& labels) {
  eager::GradientTape tape;
  const eager::Tensor loss =
      eager::ReduceMean(eager::SparseSoftmaxCrossEntropyWithLogits(labels, model(images)));
  const std::vector<eager::Variable*> variables = model.TrainableVariables();
  optimizer.ApplyGradients(tape.Gradient(loss, variables), variables);
  return loss.scalar<float>();
}

}  // namespace fashion_mnist
