#pragma once

// Smooth activations, as tf.nn / tf.math, with TF's op names, shape rules
// and gradient ops. Float dtypes (float32, float64), any shape; another
// dtype throws InvalidArgumentError naming the op and the dtype. Keras's
// activations by name (autodiff/activations.h) are built on these.
//
// Kernels are vectorized: the transcendental part runs as one Eigen array
// expression (SIMD exp / log1p / erf), and the branch of a piecewise function
// is a plain loop the compiler turns into blends. (Eigen's Array::select is
// evaluated one coefficient at a time: ops/unary_ops.cc's Elu says what
// that cost.) Results equal TF's functors' within float rounding.

#include "ops/op_def.h"

namespace eager {

// scale * x where x > 0, else scale * alpha * (exp(x) - 1), with TF's
// constants scale = 1.0507009873554805, alpha = 1.6732632423543772
// ("Selu", tf.nn.selu).
Tensor Selu(const Tensor& features);
// Selu's gradient from its output y: gradients * scale where y > 0, else
// gradients * (y + scale * alpha) ("SeluGrad").
Tensor SeluGrad(const Tensor& gradients, const Tensor& outputs);

// log(1 + exp(x)) ("Softplus", tf.nn.softplus), computed as TF does: x for
// large x, exp(x) for very negative x (no overflow or cancellation).
Tensor Softplus(const Tensor& features);
// Softplus's gradient: gradients / (1 + exp(-features)) ("SoftplusGrad").
Tensor SoftplusGrad(const Tensor& gradients, const Tensor& features);

// x / (1 + |x|) ("Softsign", tf.nn.softsign).
Tensor Softsign(const Tensor& features);
// Softsign's gradient: gradients / (1 + |features|)^2 ("SoftsignGrad").
Tensor SoftsignGrad(const Tensor& gradients, const Tensor& features);

// The error function ("Erf", tf.math.erf); its gradient is
// grad * 2 / sqrt(pi) * exp(-x^2), as TF's _ErfGrad.
Tensor Erf(const Tensor& x);

extern const OpDef kSeluOp;
extern const OpDef kSeluGradOp;
extern const OpDef kSoftplusOp;
extern const OpDef kSoftplusGradOp;
extern const OpDef kSoftsignOp;
extern const OpDef kSoftsignGradOp;
extern const OpDef kErfOp;

}  // namespace eager
