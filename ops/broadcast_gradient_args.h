#pragma once

// BroadcastGradientArgs (TF's op of that name): given the shapes s0, s1 of
// the two inputs of a broadcasting op (AddV2, Mul, ...), the axes of the
// output that the gradient of each input must be summed over (r0, r1).
//
//   auto [r0, r1] = eager::BroadcastGradientArgs(ShapeOf(x), ShapeOf(y));
//   // x [5, 3], y [1, 3]: r0 = [], r1 = [0]
//
// Graph gradients use it where the static shapes do not say which axes were
// broadcast (x [?, 3] + y [?, 3]: either may be 1 at run time), as TF's
// math_grad does: Reshape(Sum(grad, r0), Shape(x)).
//
// TF's semantics: equal shapes reduce nothing; otherwise r_k lists the axes
// of the broadcast output (shapes aligned at the right, missing leading
// dimensions counted as 1) where s_k's dimension is 1. The node has TF's
// signature: inputs s0, s1 and outputs r0, r1 of type T (int32, TF's
// default, or int64).

#include <utility>

#include "runtime/tensor.h"

namespace eager {

// s0, s1: int32 or int64 vectors of one dtype; results of that dtype. In a
// graph adds the node (whose outputs have static shape [?]); eagerly
// computes at once. Throws InvalidArgumentError when an input is not such a
// vector or the shapes do not broadcast ("Incompatible shapes: [2,3] vs.
// [4]"). Negative entries are not refused: as TF 2.21's kernel, they are
// numbers like the others ([-1, 3] vs. [1, 3]: r1 = [0]; [-1] vs. [5]:
// incompatible).
std::pair<Tensor, Tensor> BroadcastGradientArgs(const Tensor& s0, const Tensor& s1);

struct OpDef;
// "BroadcastGradientArgs": graph-only (OpDef::run), two outputs.
extern const OpDef kBroadcastGradientArgsOp;

}  // namespace eager
