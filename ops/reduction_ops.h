#pragma once

// Reductions over axes, as tf.reduce_*. `axes` empty means all axes; axes may
// be negative; a repeated or out-of-range axis throws InvalidArgumentError.
// keepdims keeps each reduced axis with size 1.

#include <cstdint>
#include <vector>

#include "ops/op_def.h"

namespace eager {

Tensor ReduceSum(const Tensor& x, const std::vector<int64_t>& axes = {},
                 bool keepdims = false);  // "Sum"
Tensor ReduceMean(const Tensor& x, const std::vector<int64_t>& axes = {},
                  bool keepdims = false);  // "Mean"
// Gradient flows to every element equal to the maximum, divided among ties
// (as TensorFlow's _MaxGrad).
Tensor ReduceMax(const Tensor& x, const std::vector<int64_t>& axes = {},
                 bool keepdims = false);  // "Max"
// Ties with the minimum share the gradient, as for ReduceMax (TF's _MinGrad).
Tensor ReduceMin(const Tensor& x, const std::vector<int64_t>& axes = {},
                 bool keepdims = false);  // "Min"
// The gradient of each element is the product of the others in its group,
// exact with zeros in the input (TF's _ProdGrad).
Tensor ReduceProd(const Tensor& x, const std::vector<int64_t>& axes = {},
                  bool keepdims = false);  // "Prod"
// Index of the largest element along `axis` (the first on ties), as int64.
Tensor ArgMax(const Tensor& x, int64_t axis);  // "ArgMax"; not differentiable

// Logical and / or of a bool tensor over axes ("All", "Any",
// tf.reduce_all / tf.reduce_any); an empty group is true for All, false for
// Any. Not differentiable.
Tensor ReduceAll(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);
Tensor ReduceAny(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);

extern const OpDef kSumOp;
extern const OpDef kAllOp;
extern const OpDef kAnyOp;
extern const OpDef kMeanOp;
extern const OpDef kMaxOp;
extern const OpDef kMinOp;
extern const OpDef kProdOp;
extern const OpDef kArgMaxOp;

}  // namespace eager
