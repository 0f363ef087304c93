#pragma once

// Elementwise unary ops, as tf.math / tf.nn. Float dtypes unless noted;
// an unsupported dtype throws InvalidArgumentError naming op and dtype.

#include <string>

#include "ops/op_def.h"

namespace eager {

Tensor Neg(const Tensor& x);      // "Neg" (any numeric dtype)
Tensor Exp(const Tensor& x);      // "Exp"
Tensor Log(const Tensor& x);      // "Log"
Tensor Sqrt(const Tensor& x);     // "Sqrt"
Tensor Square(const Tensor& x);   // "Square" (any numeric dtype)
Tensor Relu(const Tensor& x);     // "Relu"; gradient 0 at 0, as TensorFlow
Tensor Sigmoid(const Tensor& x);  // "Sigmoid"
Tensor Tanh(const Tensor& x);     // "Tanh"
// The identity whose gradient is none: tf.stop_gradient.
Tensor StopGradient(const Tensor& x);  // "StopGradient"
// The identity whose gradient is an error naming `message`
// (tf.raw_ops.PreventGradient; TF's gradient of
// SparseSoftmaxCrossEntropyWithLogits puts one on its backprop output).
Tensor PreventGradient(const Tensor& x, const std::string& message = "");  // "PreventGradient"
// Relu's gradient: `gradients` where features > 0, else 0 (TF's "ReluGrad",
// also tf.where(features > 0, gradients, 0)). Same shapes and float dtype.
// Differentiable with respect to `gradients` only.
Tensor ReluGrad(const Tensor& gradients, const Tensor& features);  // "ReluGrad"

// Elu: the exponential linear unit (tf.nn.elu), x where x > 0 else exp(x) - 1.
// Float dtypes; any shape.
Tensor Elu(const Tensor& features);  // "Elu"
// Elu's gradient from its output y: gradients where y > 0, else
// gradients * (y + 1) (TF's "EluGrad"). Same shapes and float dtype.
Tensor EluGrad(const Tensor& gradients, const Tensor& outputs);  // "EluGrad"

// Rounds toward -infinity, float32/float64 ("Floor"). Its gradient is none,
// as TF's (_FloorGrad returns None): a graph gradient through it is zero.
Tensor Floor(const Tensor& x);

// 1 / sqrt(x), float dtypes.
Tensor Rsqrt(const Tensor& x);  // "Rsqrt"
// Rsqrt's gradient from its output y: dy * -0.5 * y^3 (TF's "RsqrtGrad").
// Same shapes and float dtype.
Tensor RsqrtGrad(const Tensor& y, const Tensor& dy);  // "RsqrtGrad"

// |x|, numeric dtypes ("Abs"); gradient grad * sign(x), as TF.
Tensor Abs(const Tensor& x);
// -1, 0 or 1 by x's sign, numeric dtypes ("Sign"); no gradient (TF's is zero).
Tensor Sign(const Tensor& x);
// min(max(features, 0), 6), float dtypes ("Relu6", tf.nn.relu6).
Tensor Relu6(const Tensor& features);
// Relu6's gradient: gradients where 0 < features < 6, else 0 ("Relu6Grad").
Tensor Relu6Grad(const Tensor& gradients, const Tensor& features);
// features where > 0, else alpha * features, float dtypes ("LeakyRelu",
// attr alpha, TF's default 0.2).
Tensor LeakyRelu(const Tensor& features, double alpha = 0.2);
// LeakyRelu's gradient: gradients where features > 0, else alpha * gradients.
Tensor LeakyReluGrad(const Tensor& gradients, const Tensor& features, double alpha = 0.2);
// Sigmoid's and Tanh's gradients from the output y, as TF's gradient graphs
// have them: dy * y * (1 - y) ("SigmoidGrad"), dy * (1 - y^2) ("TanhGrad").
Tensor SigmoidGrad(const Tensor& y, const Tensor& dy);
Tensor TanhGrad(const Tensor& y, const Tensor& dy);
// !x of a bool tensor ("LogicalNot").
Tensor LogicalNot(const Tensor& x);
// 1 / x, float dtypes ("Reciprocal", tf.math.reciprocal); gradient
// ReciprocalGrad(y, grad) from the output, as TF's.
Tensor Reciprocal(const Tensor& x);
// Reciprocal's gradient from its output y: -dy * y * y ("ReciprocalGrad").
Tensor ReciprocalGrad(const Tensor& y, const Tensor& dy);
// log(1 + x), accurate near 0 (std::log1p), float dtypes ("Log1p");
// gradient grad / (1 + x).
Tensor Log1p(const Tensor& x);

extern const OpDef kNegOp;
extern const OpDef kExpOp;
extern const OpDef kLogOp;
extern const OpDef kSqrtOp;
extern const OpDef kSquareOp;
extern const OpDef kReluOp;
extern const OpDef kSigmoidOp;
extern const OpDef kTanhOp;
extern const OpDef kStopGradientOp;
extern const OpDef kPreventGradientOp;  // attr message
extern const OpDef kReluGradOp;
extern const OpDef kEluOp;
extern const OpDef kEluGradOp;
extern const OpDef kFloorOp;
extern const OpDef kRsqrtOp;
extern const OpDef kRsqrtGradOp;
extern const OpDef kAbsOp;
extern const OpDef kSignOp;
extern const OpDef kRelu6Op;
extern const OpDef kRelu6GradOp;
extern const OpDef kLeakyReluOp;
extern const OpDef kLeakyReluGradOp;
extern const OpDef kLogicalNotOp;
extern const OpDef kSigmoidGradOp;
extern const OpDef kTanhGradOp;
extern const OpDef kReciprocalOp;
extern const OpDef kReciprocalGradOp;
extern const OpDef kLog1pOp;

}  // namespace eager
