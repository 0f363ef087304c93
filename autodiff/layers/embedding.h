#pragma once

// Embedding: keras.layers.Embedding, rows of a trainable table picked by
// integer ids.
//
//   eager::Embedding embed(/*input_dim=*/1000, /*output_dim=*/64);  // "embedding"
//   eager::Tensor vectors = embed(ids);   // ids [batch, steps] -> [batch, steps, 64]
//
// The table "embeddings" [input_dim, output_dim] is created on the first call
// (or Build()), in `dtype` (float32 by default, Keras's floatx; the ids do not
// decide it), drawn as Keras's default initializer uniform(-0.05, 0.05) from
// a seeded generator: `seed` if given, else a seed derived from the layer's
// name, as Dense. Variable name "<layer>/embeddings:0".
//
// Ids: int32 or int64 of any shape; float ids are cast to int32 as Keras 3
// does. An id outside [0, input_dim) throws InvalidArgumentError (Gather's,
// naming the id). The gradient with respect to the table flows through
// Gather's (UnsortedSegmentSum of the output gradient by id).
//
// mask_zero: ComputeMask(ids) gives Keras's mask (ids != 0, a bool tensor of
// the ids' shape), which a Sequential hands to the next layers (a recurrent
// layer skips the masked steps); the layer's own output is the same either
// way, as in Keras.
//
// Checkpoint edges by Keras layout (SetKerasLayout, runtime/trackable.h):
// "embeddings", or "_embeddings" in kKeras3 (Keras 3 keeps the table as
// `_embeddings`); the variable name does not change. A deferred restoration
// gives the table its saved value at creation.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "autodiff/layer.h"

namespace eager::layers {

class Embedding : public Layer {
 public:
  // REQUIRES: input_dim > 0, output_dim > 0, dtype float32 or float64 (else
  // InvalidArgumentError naming the layer).
  Embedding(int64_t input_dim, int64_t output_dim, bool mask_zero = false,
            std::optional<uint64_t> seed = std::nullopt, DType dtype = DType::kFloat32,
            std::string_view name = "");
  ~Embedding() override;

  // ids -> ids.shape + [output_dim]; builds on the first call. Throws
  // InvalidArgumentError for non-numeric ids or ids out of range.
  Tensor Call(const Tensor& ids) override;

  // Creates the table now. Throws FailedPreconditionError when already built.
  void Build();

  // Keras's compute_mask: ids != 0 when mask_zero, else nullopt.
  std::optional<Tensor> ComputeMask(const Tensor& ids) const;
  // Layer's form: the same, whatever the ids' own mask (Keras's Embedding
  // makes a new one).
  std::optional<Tensor> ComputeMask(const Tensor& ids, const std::optional<Tensor>& mask) override {
    (void)mask;
    return ComputeMask(ids);
  }

  // With mask_zero, a new mask: Keras 3 records its NotEqual of the ids.
  KerasMaskRule KerasMasking() const override {
    return {.output = mask_zero_ ? KerasMaskOutput::kNotEqual : KerasMaskOutput::kNone};
  }

  bool built() const { return embeddings_ != nullptr; }
  int64_t input_dim() const { return input_dim_; }
  int64_t output_dim() const { return output_dim_; }
  bool mask_zero() const { return mask_zero_; }
  uint64_t seed() const { return seed_; }
  DType dtype() const { return dtype_; }
  // REQUIRES: built() (else FailedPreconditionError naming the layer).
  Variable& embeddings() const;

  // Trackable: the table's edge follows the layout.
  std::vector<Child> Children() override;
  void UseKerasLayout(KerasLayout layout) override { layout_ = layout; }

 private:
  const char* TableEdge() const {
    return layout_ == KerasLayout::kKeras3 ? "_embeddings" : "embeddings";
  }

  int64_t input_dim_;
  int64_t output_dim_;
  bool mask_zero_;
  uint64_t seed_;
  DType dtype_;
  Variable* embeddings_ = nullptr;  // owned by Module
  KerasLayout layout_ = KerasLayout::kKeras2Legacy;
};

}  // namespace eager::layers
