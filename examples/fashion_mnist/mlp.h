#pragma once

// The main job's model: 784-256-10, ReLU, as a Module (header-only, so the
// training benchmark can use it without the example library).

#include "autodiff/dense.h"
#include "autodiff/module.h"
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

}  // namespace fashion_mnist
