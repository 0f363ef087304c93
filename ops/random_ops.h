#pragma once

// The RandomUniform graph op (tf.random.uniform in a TF1 graph, the noise of
// tf.nn.dropout): a tensor of the shape its input holds, uniform in [0, 1).
//
//   eager::Graph graph;
//   eager::Graph::AsDefault in(graph);
//   eager::Tensor x = eager::Placeholder(eager::DType::kFloat32, eager::Shape::Partial({-1, 4}));
//   eager::Tensor noise = eager::RandomUniformNode(eager::ShapeOf(x), eager::DType::kFloat32,
//                                                  /*seed=*/87654321, /*seed2=*/5);
//
// A stateful node, as in TF: each Session keeps one generator per node
// (NodeContext::state), so successive Session::Run calls give new numbers,
// and a new Session starts the sequence again. The seeds follow TF's op-seed
// rules as TF's Python resolved them into the node's attributes: seed and
// seed2 both 0 means nondeterministic (fresh random seeds per Session);
// otherwise the sequence is a function of (seed, seed2) alone.
//
// With nonzero seeds the numbers are TF's, bit for bit: the generator is
// Philox4x32-10 keyed as TF's kernel keys it (ops/internal/philox.h), each
// run takes the next values of TF's sequence (one 128-bit block per 4
// float32, half or bfloat16 values or 2 float64 ones; as TF's kernel
// reserves, the next run starts 256 blocks per element of this run's output
// further on), and TF's conversion makes the values (multiples of 2^-23 for
// float32, 2^-52 float64, 2^-10 half, 2^-7 bfloat16).
// tests/tf_graphs/dropout_test.py compares them with TF's own. With both
// seeds 0 the numbers differ from TF's run to run, as TF's own do.
//
// Not differentiable (TF registers no gradient for it); a graph gradient never
// needs one, as nothing flows from a variable into it.

#include <cstdint>

#include "runtime/tensor.h"

namespace eager {

struct OpDef;

// Adds a "RandomUniform" node (attrs seed, seed2, dtype, T) whose input is
// `shape`, an int32 or int64 vector (a graph tensor such as ShapeOf(x), or a
// value, which becomes a Const node). Its static shape is the value's when
// `shape` is a value, else of the vector's length with unknown dimensions.
// Throws FailedPreconditionError outside a graph (eagerly, use
// RandomGenerator, ops/random_ops.h) and InvalidArgumentError for a shape
// that is not an int32/int64 vector or a dtype other than float32, float64,
// half or bfloat16.
Tensor RandomUniformNode(const Tensor& shape, DType dtype = DType::kFloat32, int64_t seed = 0,
                         int64_t seed2 = 0);

// tf.random.stateless_uniform(shape, seed=[seed0, seed1]) in [0, 1), eagerly:
// TF's StatelessRandomUniformV2 with the Philox algorithm (the CPU's choice),
// its key and counter scrambled from the seed pair as TF's
// StatelessRandomGetKeyCounter does (one Philox block of the seeds under a
// fixed key), then filled as RandomUniform fills. A pure function of (shape,
// seeds, dtype): the same arguments give the same tensor, bit for bit TF's
// (tests/tf_keras/keras_masks_test.py compares them). Keras 3's TF backend
// draws its dropout masks so, from seed pairs [seed, step]. dtype float32,
// float64, half or bfloat16 (else InvalidArgumentError); not differentiable.
Tensor StatelessRandomUniform(const Shape& shape, int64_t seed0, int64_t seed1,
                              DType dtype = DType::kFloat32);

// "RandomUniform": graph-only (OpDef::run), stateful per Session.
extern const OpDef kRandomUniformOp;
// "RandomStandardNormal" and "TruncatedNormal" (tf.random.normal and
// tf.random.truncated_normal, the initializers of TF1 graphs): the same node
// form, seeds and per-run reservation as RandomUniform, normals made as TF's
// kernels make them, bit for bit with nonzero seeds: Box-Muller on pairs of
// uniforms (TF's BoxMullerFloat / BoxMullerDouble); TruncatedNormal keeps
// the normals of magnitude below 2 in the order drawn, each group of 4 (2
// for float64) values from its own reserved stretch of the sequence, as
// TF's variable-sample fill.
extern const OpDef kRandomStandardNormalOp;
extern const OpDef kTruncatedNormalOp;

}  // namespace eager
