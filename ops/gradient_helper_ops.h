#pragma once

// Ops that TF's gradients() writes into graphs (issue 39), so that an
// imported TF training graph runs:
//
//   BiasAddGrad(out_backprop)        the sum over every axis but the
//                                    channels (BiasAdd's gradient), NHWC
//   ConcatOffset(concat_dim, shape...)  where each input of a ConcatV2
//                                    starts in its output (its gradient's
//                                    Slice begins): N outputs
//   ShapeN(input...)                 each input's shape: N outputs
//   Rank(input)                      the rank, an int32 scalar
//   InvertPermutation(x)             y[x[i]] = i (Transpose's gradient)
//
// ConcatOffset and ShapeN are graph-only node types (OpDef::run); the
// others are ops of kAllOps that also run eagerly. Bad input (shapes that
// do not concatenate, a concat_dim out of range, x not a permutation) is
// InvalidArgumentError naming the node (or the op) and what was expected.

#include <cstdint>

#include "ops/op_def.h"

namespace eager {

// BiasAdd's gradient for its bias: out_backprop [..., C] summed to [C]
// ("BiasAddGrad"). Its own gradient broadcasts back (TF's).
Tensor BiasAddGrad(const Tensor& out_backprop);
Tensor Rank(const Tensor& x);               // "Rank": int32 scalar
Tensor InvertPermutation(const Tensor& x);  // "InvertPermutation": int32/int64 vector

extern const OpDef kBiasAddGradOp;
extern const OpDef kRankOp;
extern const OpDef kInvertPermutationOp;
extern const OpDef kConcatOffsetOp;  // graph-only: N outputs (attrs N, shape_type)
extern const OpDef kShapeNOp;        // graph-only: N outputs (attrs N, T, out_type)

}  // namespace eager
