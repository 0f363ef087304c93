#pragma once

// Split and SplitV (tf.split): the pieces of a tensor along one axis, as
// TF's LSTM / GRU graphs cut their gates.
//
//   Split(split_dim, value)               attr num_split: equal pieces
//   SplitV(value, size_splits, split_dim) attr num_split: pieces of the
//                                         given sizes, one of them -1 (the rest)
//
// Both are graph-only node types with num_split outputs (OpDef::run);
// eagerly each piece is an eager-only "_SplitOutput" call (attrs axis,
// begin, size), whose gradient is the piece's gradient padded with zeros
// to the input's shape, so that the tape's sum over the pieces is TF's
// gradient (Concat of the pieces' gradients, zeros for unused ones). An
// axis out of [-rank, rank), a size that does not divide (Split) or sizes
// that do not add up (SplitV), or a num_split that disagrees is
// InvalidArgumentError naming the node (or the op) and what was expected.

#include <cstdint>
#include <vector>

#include "ops/op_def.h"

namespace eager {

// num_split equal pieces of `value` along `axis` ("Split").
std::vector<Tensor> Split(const Tensor& value, int64_t num_split, int64_t axis = 0);
// Pieces of sizes `sizes` along `axis`, at most one -1: what the others
// leave ("SplitV").
std::vector<Tensor> SplitV(const Tensor& value, const std::vector<int64_t>& sizes,
                           int64_t axis = 0);

extern const OpDef kSplitOp;
extern const OpDef kSplitVOp;
extern const OpDef kSplitOutputOp;  // eager-only: one piece, attrs axis, begin, size

}  // namespace eager
