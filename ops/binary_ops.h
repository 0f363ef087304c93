#pragma once

// Elementwise binary ops with NumPy broadcasting, as tf.math.
//
// Both inputs must have the same dtype (no implicit promotion, as in
// TensorFlow); shapes broadcast from the right, a dimension of 1 stretching
// to the other's size. Incompatible shapes or dtypes throw
// InvalidArgumentError naming both ("AddV2: Incompatible shapes: [2,3] vs. [4]").
// Gradients are summed back to each input's shape.

#include <vector>

#include "ops/op_def.h"

namespace eager {

Tensor Add(const Tensor& x, const Tensor& y);      // "AddV2"
Tensor Sub(const Tensor& x, const Tensor& y);      // "Sub"
Tensor Mul(const Tensor& x, const Tensor& y);      // "Mul"
Tensor Div(const Tensor& x, const Tensor& y);      // "RealDiv" (integer dtypes truncate)
Tensor Pow(const Tensor& x, const Tensor& y);      // "Pow"
Tensor Maximum(const Tensor& x, const Tensor& y);  // "Maximum"; ties send the gradient to x
Tensor Minimum(const Tensor& x, const Tensor& y);  // "Minimum"; ties send the gradient to x
// Elementwise x == y as a bool tensor; not differentiable.
Tensor Equal(const Tensor& x, const Tensor& y);  // "Equal"

// The dropout mask ops: GreaterEqual (TF >= 1.14: uniform >= rate is the
// mask) and SelectV2 (TF 2.x: where(mask, x * scale, 0)), broadcasting as NumPy.
//
// x >= y elementwise, a bool tensor ("GreaterEqual"); same dtype, numeric;
// not differentiable, as TF.
Tensor GreaterEqual(const Tensor& x, const Tensor& y);

// condition ? t : e elementwise ("SelectV2"): `condition` bool, t and e of
// one dtype (any but string), the three shapes broadcast together. Gradients
// (TF's _SelectGradV2): grad where condition to t, elsewhere to e, each
// summed back to its input's shape; none for the condition.
Tensor SelectV2(const Tensor& condition, const Tensor& t, const Tensor& e);
// TF1's select ("Select", tf.compat.v1.where(c, t, e)): t and e of one
// shape, condition a scalar, of that shape, or a vector along t's first
// dimension (it picks whole rows). No broadcasting otherwise
// (InvalidArgumentError naming the shapes). Gradients as TF's _SelectGrad.
Tensor Select(const Tensor& condition, const Tensor& t, const Tensor& e);

// (x - y)^2 elementwise, with broadcasting; numeric dtypes.
Tensor SquaredDifference(const Tensor& x, const Tensor& y);  // "SquaredDifference"

// Comparisons (bool results, broadcasting, no gradient): numeric dtypes;
// NotEqual also bool. LogicalAnd / LogicalOr take bool tensors.
Tensor Greater(const Tensor& x, const Tensor& y);     // "Greater"
Tensor Less(const Tensor& x, const Tensor& y);        // "Less"
Tensor LessEqual(const Tensor& x, const Tensor& y);   // "LessEqual"
Tensor NotEqual(const Tensor& x, const Tensor& y);    // "NotEqual"
Tensor LogicalAnd(const Tensor& x, const Tensor& y);  // "LogicalAnd"
Tensor LogicalOr(const Tensor& x, const Tensor& y);   // "LogicalOr"
// x / y rounded toward -infinity (Python's //), numeric dtypes ("FloorDiv");
// an integer division by zero is InvalidArgumentError. No gradient, as TF.
Tensor FloorDiv(const Tensor& x, const Tensor& y);
// The remainder of FloorDiv, with y's sign (Python's %), numeric dtypes
// ("FloorMod"); gradients dx = grad, dy = -grad * FloorDiv(x, y), as TF.
Tensor FloorMod(const Tensor& x, const Tensor& y);
// The sum of one or more tensors of one shape and dtype ("AddN"), in TF's
// order of summation; each input's gradient is grad.
Tensor AddN(const std::vector<Tensor>& inputs);
// x / y, but 0 where y is 0 (even for x NaN or inf), float dtypes,
// broadcasting ("DivNoNan", tf.math.divide_no_nan). Gradients as TF's
// _DivNoNanGrad: dx = DivNoNan(grad, y), dy = grad * DivNoNan(DivNoNan(-x, y), y).
Tensor DivNoNan(const Tensor& x, const Tensor& y);

extern const OpDef kAddOp;
extern const OpDef kSubOp;
extern const OpDef kMulOp;
extern const OpDef kDivOp;
extern const OpDef kPowOp;
extern const OpDef kMaximumOp;
extern const OpDef kMinimumOp;
extern const OpDef kEqualOp;
extern const OpDef kGreaterEqualOp;
extern const OpDef kSelectV2Op;
extern const OpDef kSelectOp;
extern const OpDef kSquaredDifferenceOp;
extern const OpDef kGreaterOp;
extern const OpDef kLessOp;
extern const OpDef kLessEqualOp;
extern const OpDef kNotEqualOp;
extern const OpDef kLogicalAndOp;
extern const OpDef kLogicalOrOp;
extern const OpDef kFloorDivOp;
extern const OpDef kFloorModOp;
extern const OpDef kAddNOp;
extern const OpDef kDivNoNanOp;

}  // namespace eager
