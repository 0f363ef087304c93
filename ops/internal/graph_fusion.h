#pragma once

// Graph fusion: what TF's grappler remapper does to a graph before its
// Session runs it, done here to a Session's RunPlan once when it is made.
// A chain
//
//   Conv2D -> BiasAdd (or Add/AddV2 of a bias vector) [-> activation]
//   MatMul -> BiasAdd (or Add/AddV2 of a bias vector) [-> activation]
//
// becomes one plan step that calls eager's fused kernel (_FusedConv2D,
// _FusedMatMul, with the ReLU inside it) and, for Relu6, Elu and LeakyRelu,
// the activation's own kernel on that kernel's output: the separate bias pass
// and the tensors between the nodes go.
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
// kFused, the inputs (x, filter or weights, bias, then the chain's control
// inputs) and an entry in plan.fused (a FusedStep). Inputs and results are renumbered.
void FuseRunPlan(const Graph& graph, RunPlan& plan);

}  // namespace eager::internal
