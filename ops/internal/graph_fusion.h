#pragma once

// Graph fusion: what TF's grappler remapper does to a graph before its
// Session runs it, done here to a Session's RunPlan once when it is made.
// A chain
//
//   Conv2D -> BiasAdd (or Add/AddV2 of a bias vector) [-> activation]
//   MatMul -> BiasAdd (or Add/AddV2 of a bias vector) [-> activation]
//   Conv2D [-> BiasAdd] -> FusedBatchNormV3 (inference) [-> activation]
//   Conv2D [-> BiasAdd] -> Mul(., s) -> Add/AddV2(., o) [-> activation]
//
// becomes one plan step that calls eager's fused kernel (_FusedConv2D,
// _FusedMatMul, with the ReLU inside it) and, for Relu6, Elu and LeakyRelu,
// the activation's own kernel on that kernel's output: the separate bias pass
// and the tensors between the nodes go. The batch normalization is folded
// into the convolution, as the remapper's _FusedConv2D with FusedBatchNorm
// does: on each run, from the values its inputs have then (variables may
// change between runs), s = scale / sqrt(variance + epsilon) multiplies the
// filter's output channels and (bias - mean) * s + offset is the bias.
// The Mul/Add chain is Keras 3's inference BatchNormalization (its graphs
// hold tf.nn.batch_normalization's x * s + o, s and o computed from the
// variables by other nodes): s scales the filter, bias * s + o is the bias.
//
// Why each rewrite is safe (computes what the nodes compute):
//  - Only when nothing else in the run reads the Conv2D/MatMul output or
//    the bias sum: each is read once, by the next node of the chain, is not
//    fetched, and is the target of no control input. Fetching either (or a
//    second consumer) keeps the nodes as they are.
//  - Plans with Switch/Merge are left alone: a dead input must make the
//    whole chain dead, which the unfused steps already get right.
//  - Every node of the chain must pass the checks its own step would make
//    before its kernel first runs (TF's signature, NHWC layout); a node that
//    fails them is not fused, so it throws as it would unfused.
//  - Add/AddV2 is a bias only when, at run time, one operand is a vector of
//    the output's channel count and of the same floating dtype (TF's
//    IsBiasSemanticAdd); otherwise the step runs the three kernels one after
//    the other, as unfused, so a broadcast add or an error stays what it was.
//    x + b and b + x round alike (addition is commutative in IEEE 754).
//  - A FusedBatchNormV3 fuses only with is_training false, data_format
//    NHWC, T and U float32, and none of its outputs but y read or fetched
//    (batch_mean and the others are its inputs at inference, but a reader
//    keeps the node). At run time, a filter, bias or normalization vector
//    that is not float32 of the filter's output channels runs the nodes one
//    by one, so errors stay the unfused ones. The values match the unfused
//    nodes' to float32 rounding: w * s is rounded once per filter element,
//    where the unfused node rounds the convolution's sum before scaling it.
//  - The Mul and the Add fold only when, at run time, s and o are float32
//    vectors of the filter's output channels (either operand of each);
//    otherwise (a scalar, a [1, 1, 1, C] or any broadcast) the step runs
//    the nodes one by one. Float32 rounding, as for the batch norm.
//  - _FusedMatMul is bit-identical to MatMul, BiasAdd, Relu
//    (ops/fused_matmul.h). _FusedConv2D on oneDNN adds the bias inside the
//    convolution, which can round differently from a separate BiasAdd (as
//    TF's own _FusedConv2D does); float32 rounding, not bits
//    (ops/fused_conv.h).
//
// Not part of the public API; SessionOptions::fuse_ops turns it off.

#include "ops/internal/run_plan.h"
#include "runtime/graph.h"

namespace eager::internal {

// Rewrites `plan` (just built by BuildRunPlan) with the fusions above: the
// chain's first nodes leave the steps, its last node's step gets PlanStep::
// kFused, the inputs (x, filter or weights, the bias if any, the batch
// norm's scale, offset, mean and variance if any, then the chain's control
// inputs) and an entry in plan.fused (a FusedStep). Inputs and results are
// renumbered.
void FuseRunPlan(const Graph& graph, RunPlan& plan);

}  // namespace eager::internal
