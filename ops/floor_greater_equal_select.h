#pragma once

// The elementwise ops of TF1's dropout graphs besides Mul/RealDiv/Cast:
// Floor (TF < 1.14: floor(keep_prob + uniform) is the 0/1 mask),
// GreaterEqual (TF >= 1.14: uniform >= rate is the mask) and SelectV2
// (TF 2.x: where(mask, x * scale, 0)).
//
//   eager::Tensor keep = eager::GreaterEqual(noise, rate);         // bool
//   eager::Tensor y = eager::SelectV2(keep, x, eager::Tensor(0.0f));
//
// GreaterEqual and SelectV2 broadcast as NumPy (SelectV2 all three inputs
// together, as tf.where in TF 2.x); a mismatch throws InvalidArgumentError
// naming the shapes.

#include "runtime/tensor.h"

namespace eager {

struct OpDef;

// Rounds toward -infinity, float32/float64 ("Floor"). Its gradient is none,
// as TF's (_FloorGrad returns None): a graph gradient through it is zero.
Tensor Floor(const Tensor& x);

// x >= y elementwise, a bool tensor ("GreaterEqual"); same dtype, numeric;
// not differentiable, as TF.
Tensor GreaterEqual(const Tensor& x, const Tensor& y);

// condition ? t : e elementwise ("SelectV2"): `condition` bool, t and e of
// one dtype (any but string), the three shapes broadcast together. Gradients
// (TF's _SelectGradV2): grad where condition to t, elsewhere to e, each
// summed back to its input's shape; none for the condition.
Tensor SelectV2(const Tensor& condition, const Tensor& t, const Tensor& e);

extern const OpDef kFloorOp;
extern const OpDef kGreaterEqualOp;
extern const OpDef kSelectV2Op;

}  // namespace eager
