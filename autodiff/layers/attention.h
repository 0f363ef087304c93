#pragma once

// MultiHeadAttention: keras.layers.MultiHeadAttention (Keras 3 and tf_keras)
// with its masks, without attention dropout.
//
//   eager::layers::MultiHeadAttention mha(/*num_heads=*/4, /*key_dim=*/16);
//   eager::Tensor y = mha(x);                    // self-attention, x [B, T, D]
//   eager::Tensor z = mha.Attend(q, v);          // key = value, as Keras
//   auto [out, scores] = mha.AttendWithScores(q, v, k);  // return_attention_scores
//
// As Keras computes it, with N heads of size H (key_dim) and Hv (value_dim,
// key_dim by default):
//   q = query_dense(query) / sqrt(H)     [B, T, N, H]   (einsum "abc,cde->abde")
//   k = key_dense(key)                   [B, S, N, H]
//   v = value_dense(value)               [B, S, N, Hv]
//   scores = softmax over S of q . k     [B, N, T, S]
//   y = attention_output(scores @ v)     [B, T, E]      (einsum "abcd,cde->abe")
// E is output_dim, or the query's last dimension when 0 (Keras's default).
//
// Masks (AttentionMasks; Keras's call arguments and input masks): query i
// may attend to key j where every given mask allows it: attention_mask
// [B, T, S] (bool; else nonzero allows), query_mask [B, T] at i, value_mask
// [B, S] at j, and with use_causal_mask j <= i. Disallowed scores are
// replaced by -1e9 before the softmax, as Keras's masked softmax, so a fully
// masked row attends evenly to every key. In a Sequential the layer runs
// self-attention with the input's mask as query and value mask, and passes
// it on (Keras: the output keeps the query's mask).
// Built from MatMul, BatchMatMulV2, Transpose, Reshape and Softmax, so the
// tape differentiates it.
//
// Variables, created on the first call (or Build()) in the query's dtype:
// each projection has kernel [D, N, H] (value: [Dv, N, Hv]; output:
// [N, Hv, E]) drawn glorot-uniform with Keras's fans for that shape (fan_in
// = D * N, fan_out = D * H for [D, N, H]: the leading dimensions count as
// the receptive field), from `seed` + 0, 1, 2, 3 (default seed: derived from
// the name, as Dense), and bias [N, H] (output: [E]) zeros when use_bias.
// Variable names are tf_keras's: "<layer>/query/kernel:0", "key", "value",
// "attention_output".
//
// Checkpoint edges: "_query_dense", "_key_dense", "_value_dense",
// "_output_dense", each with "kernel" and "bias"; the kernel's edge is
// "_kernel" in kKeras3 (Keras 3's EinsumDense), as Dense's. A deferred
// restoration gives the variables their saved values at creation.
//
// In a graph the layer adds TF's nodes; the batch may be unknown for the
// forward pass (graph gradients are tested with a known batch only).
//
// Errors (InvalidArgumentError naming the layer): inputs that are not rank 3
// float, batch sizes or key/value lengths that differ, last dimensions or a
// dtype that differ from the built ones.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autodiff/layer.h"

namespace eager::layers {

struct MultiHeadAttentionConfig {
  int64_t value_dim = 0;   // 0: key_dim
  int64_t output_dim = 0;  // 0: the query's last dimension
  bool use_bias = true;
  std::optional<uint64_t> seed = std::nullopt;  // default: derived from the name
  std::string name = "";                        // default: "multi_head_attention", ...
};

// The masks a call may give (see above); none by default.
struct AttentionMasks {
  std::optional<Tensor> attention_mask = std::nullopt;  // [B, T, S]
  bool use_causal_mask = false;
  std::optional<Tensor> query_mask = std::nullopt;  // [B, T]
  std::optional<Tensor> value_mask = std::nullopt;  // [B, S]
};

// The output and the attention scores [B, N, T, S] (Keras's
// return_attention_scores=True).
struct AttentionOutput {
  Tensor output;
  Tensor scores;
};

class MultiHeadAttention : public Layer {
 public:
  // REQUIRES: num_heads > 0, key_dim > 0, value_dim and output_dim >= 0
  // (else InvalidArgumentError naming the layer).
  MultiHeadAttention(int64_t num_heads, int64_t key_dim, MultiHeadAttentionConfig config = {});
  ~MultiHeadAttention() override;

  // Self-attention: Attend(x, x).
  Tensor Call(const Tensor& x) override;
  // query [B, T, D], value [B, S, Dv], key [B, S, Dk] (nullopt: value).
  Tensor Attend(const Tensor& query, const Tensor& value,
                const std::optional<Tensor>& key = std::nullopt, const AttentionMasks& masks = {});
  AttentionOutput AttendWithScores(const Tensor& query, const Tensor& value,
                                   const std::optional<Tensor>& key = std::nullopt,
                                   const AttentionMasks& masks = {});
  // A functional model's call, Keras's mha(query, value[, key]): inputs
  // {query, value} or {query, value, key} (else InvalidArgumentError naming
  // the layer); returns {the output}.
  std::vector<Tensor> CallMany(const std::vector<Tensor>& inputs, bool training) override;
  // Self-attention with the input's Keras mask as query and value mask.
  Tensor CallMasked(const Tensor& x, const std::optional<Tensor>& mask, bool training) override;
  // CallMany with the inputs' Keras masks as query, value and key masks
  // (Keras 3 reads them from its query, value and key tensors).
  std::vector<Tensor> CallManyMasked(const std::vector<Tensor>& inputs,
                                     const std::vector<std::optional<Tensor>>& masks,
                                     bool training) override;
  // Keras's supports_masking: the query's mask passes on.
  KerasMaskRule KerasMasking() const override { return {.output = KerasMaskOutput::kInput}; }

  // Creates the variables for the given last dimensions now. Throws
  // FailedPreconditionError when already built, InvalidArgumentError for a
  // dimension <= 0 or a non-float dtype.
  void Build(int64_t query_dim, int64_t value_dim, int64_t key_dim, DType dtype = DType::kFloat32);

  bool built() const { return built_; }
  int64_t num_heads() const { return num_heads_; }
  int64_t key_dim() const { return key_dim_; }
  int64_t value_dim() const { return value_dim_; }
  const MultiHeadAttentionConfig& config() const { return config_; }
  uint64_t seed() const { return seed_; }

  // One projection (Keras's EinsumDense sublayer). kernel() REQUIRES the
  // layer built (else FailedPreconditionError); bias() is nullptr without
  // use_bias.
  class Projection : public Module {
   public:
    explicit Projection(std::string_view name) : Module(name) {}
    Variable& kernel() const;
    Variable* bias() const { return bias_; }
    void Create(const Shape& kernel_shape, const Shape& bias_shape, bool use_bias, uint64_t seed,
                DType dtype);
    std::vector<Child> Children() override;
    void UseKerasLayout(KerasLayout layout) override { layout_ = layout; }

   private:
    const char* KernelEdge() const {
      return layout_ == KerasLayout::kKeras3 ? "_kernel" : "kernel";
    }
    Variable* kernel_ = nullptr;  // owned by Module
    Variable* bias_ = nullptr;
    KerasLayout layout_ = KerasLayout::kKeras2Legacy;
  };
  Projection& query_dense() { return query_; }
  Projection& key_dense() { return key_; }
  Projection& value_dense() { return value_; }
  Projection& output_dense() { return output_; }

 private:
  // The masks combined into one bool [B or 1, T, S], nullopt when none is
  // given; throws InvalidArgumentError naming the mask of a wrong shape.
  std::optional<Tensor> CombinedMask(const AttentionMasks& masks, const Shape& query,
                                     const Shape& value) const;
  // x [B, T, D] through a [D, N, H] projection: [B, T, N, H].
  Tensor Project(const Projection& p, const Tensor& x) const;

  std::string who_;
  int64_t num_heads_;
  int64_t key_dim_;
  int64_t value_dim_;
  MultiHeadAttentionConfig config_;
  uint64_t seed_;
  bool built_ = false;
  Projection query_{"query"};
  Projection key_{"key"};
  Projection value_{"value"};
  Projection output_{"attention_output"};
};

}  // namespace eager::layers
