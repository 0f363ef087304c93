#pragma once

// The LSTM cell's gate math in two fused ops, for Keras's LSTM with its
// default activations (sigmoid gates, tanh cell): z [batch, 4 units] holds
// the pre-activations of Keras's gates in its order i, f, c, o (x K + h R +
// b), and
//
//   c = sigmoid(z_f) * c_prev + sigmoid(z_i) * tanh(z_c)   LstmCellState
//   h = sigmoid(z_o) * tanh(c)                             LstmCellOutput
//
// with the same Eigen expressions, so the same per-element rounding, as the
// Sigmoid, Tanh, Mul and Add kernels they replace (ten ops and four column
// slices per time step, each a pass over memory and a tape record). Their
// gradients are TF's SigmoidGrad and TanhGrad formulas in one pass that
// gives both inputs' gradients; when a tape records the backward pass
// (higher-order gradients, a persistent tape) they are built from those
// public ops instead, so it can be differentiated again. Rows are split
// between threads.
//
// float32 only in one fused pass; other dtypes and graph mode (whose nodes
// must be TF's) get the unfused ops. Shapes: z [batch, 4 * units], c_prev
// and c [batch, units]; anything else is InvalidArgumentError naming both.

#include "ops/op_def.h"

namespace eager {

Tensor LstmCellState(const Tensor& z, const Tensor& c_prev);  // "_LstmCellState"
Tensor LstmCellOutput(const Tensor& z, const Tensor& c);      // "_LstmCellOutput"

extern const OpDef kLstmCellStateOp;
extern const OpDef kLstmCellOutputOp;

}  // namespace eager
