#pragma once

// The main job's default model, 784-256-10 with ReLU (its training step is
// classifier.h's TrainStep); header-only, so that the training benchmark uses
// exactly this code without linking the example library.

#include <vector>

#include "autodiff/adam.h"
#include "autodiff/dense.h"
#include "examples/fashion_mnist/classifier.h"
#include "ops/unary_ops.h"

namespace fashion_mnist {

struct Mlp : Classifier {
  explicit Mlp(uint64_t seed = 0)
      : hidden(256, eager::Relu, /*use_bias=*/true, seed), logits(10, nullptr, true, seed + 1) {
    Track("hidden", hidden);
    Track("logits", logits);
  }
  // images [batch, 784] -> logits [batch, 10].
  eager::Tensor operator()(const eager::Tensor& images) override { return logits(hidden(images)); }
  bool built() const override { return hidden.built(); }

  eager::Dense hidden;
  eager::Dense logits;
};

}  // namespace fashion_mnist
