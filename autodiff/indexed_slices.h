#pragma once

// IndexedSlices: a sparse gradient as TensorFlow's tape gives it for a
// variable read only through row lookups (tf.gather on axis 0, an Embedding):
// the rows `values[i]` belong at row `indices[i]` of a tensor of
// `dense_shape`; an index may repeat, and its rows then sum.
//
//   eager::GradientTape tape;
//   eager::Tensor loss = eager::ReduceSum(embedding(ids));
//   auto grads = tape.GradientKeepingSlices(loss, {&embedding.embeddings()});
//   const auto& slices = std::get<eager::IndexedSlices>(*grads[0]);
//   // slices.values: [ids.num_elements(), dim]; slices.indices: ids flattened
//
// Optimizers take it as TF's do (Optimizer::ApplyGradients): most sum the
// repeated rows first, which is the dense gradient; Keras 3's squares each
// row before summing, so an id looked up twice moves Adam's v differently.

#include <variant>

#include "runtime/shape.h"
#include "runtime/tensor.h"

namespace eager {

struct IndexedSlices {
  Tensor values;      // [n] + dense_shape[1:], floating
  Tensor indices;     // [n], int32 or int64, each in [0, dense_shape[0])
  Shape dense_shape;  // the shape of the tensor the rows belong to

  // The dense tensor: rows of the same index summed (UnsortedSegmentSum).
  // Throws InvalidArgumentError for an index out of range.
  Tensor ToDense() const;
  // The dense tensor of each row squared before the rows are summed: what
  // Keras 3's ops.square of an IndexedSlices gradient scatters.
  Tensor SquaresToDense() const;
};

// A gradient as TF's tape returns it: a dense Tensor, or IndexedSlices.
using GradientValue = std::variant<Tensor, IndexedSlices>;

// The dense tensor of either form.
Tensor ToDense(const GradientValue& gradient);

}  // namespace eager
