#pragma once

// A small classifier and a fixed global batch for the data-parallel tests:
// every rank builds the same model (same seeds) and the same global batch,
// then works on its share of it.

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "autodiff/dense.h"
#include "autodiff/gradient_tape.h"
#include "autodiff/module.h"
#include "ops/array_ops.h"
#include "ops/nn_ops.h"
#include "ops/reduction_ops.h"
#include "ops/unary_ops.h"
#include "runtime/tensor.h"

namespace eager::testing {

struct SmallMlp : Module {
  SmallMlp() : hidden(16, Relu, true, 7), logits(4, nullptr, true, 8) {
    Track("hidden", hidden);
    Track("logits", logits);
  }
  Tensor operator()(const Tensor& x) { return logits(hidden(x)); }
  Dense hidden;
  Dense logits;
};

// 12 examples (a multiple of 1, 2, 3 and 4 ranks' shares) of 10 features.
inline constexpr int64_t kGlobalBatch = 12;
inline constexpr int64_t kFeatures = 10;

struct Batch {
  Tensor x;  // [n, kFeatures] float32
  Tensor y;  // [n] int32
};

// Global batch number `step`, the same on every rank.
inline Batch GlobalBatch(int step) {
  std::mt19937 random(static_cast<uint32_t>(1000 + step));
  std::normal_distribution<float> normal;
  std::vector<float> x(static_cast<size_t>(kGlobalBatch * kFeatures));
  for (float& v : x) v = normal(random);
  std::vector<int32_t> y(static_cast<size_t>(kGlobalBatch));
  for (int32_t& v : y) v = static_cast<int32_t>(random() % 4);
  return {Tensor::FromVector<float>(std::move(x), Shape{kGlobalBatch, kFeatures}),
          Tensor::FromVector<int32_t>(std::move(y), Shape{kGlobalBatch})};
}

// Rank `rank` of `size`'s contiguous share of `batch`.
inline Batch Share(const Batch& batch, int rank, int size) {
  const int64_t n = kGlobalBatch / size;
  return {Slice(batch.x, {rank * n, 0}, {n, kFeatures}), Slice(batch.y, {rank * n}, {n})};
}

inline Tensor MeanLoss(SmallMlp& model, const Batch& batch) {
  return ReduceMean(SparseSoftmaxCrossEntropyWithLogits(batch.y, model(batch.x)));
}

// Every variable's bytes, back to back: equal strings are bit-identical models.
inline std::string ParameterBytes(Module& model) {
  std::string bytes;
  for (Variable* v : model.Variables()) {
    const auto b = v->value().bytes();
    bytes.append(reinterpret_cast<const char*>(b.data()), b.size());
  }
  return bytes;
}

}  // namespace eager::testing
