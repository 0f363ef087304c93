#pragma once

// The frame of an elementwise op whose output has its inputs' shape (Relu,
// Exp, Elu, Rsqrt, and the gradient ops ReluGrad, EluGrad, RsqrtGrad):
// the shape rules and the kernel loop, written once, so that such an op's
// definition is its Eigen expression, its shape rule's input names and its
// gradient. Private to ops/ (Eigen types).
//
//   Tensor EluKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
//     return internal::ElementwiseKernel<1, DTypeSet::kFloat>(in, spec, [](const auto& x) {
//       using T = internal::ScalarOf<decltype(x)>;
//       return (x < T(0)).select(x.exp() - T(1), x);
//     });
//   }
//
// The kernel runs f on contiguous blocks of kElementwiseGrain elements over
// the pool (ops/parallel.h). Blocks start at multiples of the grain,
// so each element goes through the same vector or scalar code on any thread
// count: results do not depend on it.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "ops/internal/dispatch.h"
#include "ops/internal/eigen_view.h"
#include "ops/op_def.h"
#include "ops/parallel.h"
#include "runtime/errors.h"
#include "runtime/tensor_access.h"

namespace eager::internal {

// The element type of an Eigen array expression (or a reference to one).
template <typename A>
using ScalarOf = typename std::decay_t<A>::Scalar;

// Shape rule of a one-input op: x's shape and dtype. Throws
// InvalidArgumentError naming `name` unless the dtype is in `set`.
inline OutputSpec SameShapeSpec(std::span<const Tensor> in, DTypeSet set, std::string_view name) {
  CheckDTypeIn(in[0], name, set);
  return {in[0].shape(), in[0].dtype()};
}

// Shape rule of a two-input op whose inputs have one shape and one dtype, in
// `set`: "gradients and features must have the same shape, got [2] vs. [3]"
// (InvalidArgumentError) otherwise, with the inputs' names.
inline OutputSpec SameShapeSpec(std::span<const Tensor> in, DTypeSet set, std::string_view name0,
                                std::string_view name1) {
  CheckSameDType(in[0], in[1], name0, name1);
  CheckDTypeIn(in[0], name0, set);
  if (in[0].shape() != in[1].shape()) [[unlikely]] {
    throw InvalidArgumentError(StrCat(name0, " and ", name1, " must have the same shape, got ",
                                      in[0].shape(), " vs. ", in[1].shape()));
  }
  return {in[0].shape(), in[0].dtype()};
}

// The shape rules of TF's float activations and their gradients, by TF's
// input names (which the errors name): Elu, Selu, Softplus, ... take
// "features"; ReluGrad-like gradients ("gradients", "features"); EluGrad,
// SeluGrad ("gradients", "outputs"); Erf "x".
inline OutputSpec InferFloatFeatures(std::span<const Tensor> in, const Attrs&) {
  return SameShapeSpec(in, DTypeSet::kFloat, "features");
}
inline OutputSpec InferFloatGradientsFeatures(std::span<const Tensor> in, const Attrs&) {
  return SameShapeSpec(in, DTypeSet::kFloat, "gradients", "features");
}
inline OutputSpec InferFloatGradientsOutputs(std::span<const Tensor> in, const Attrs&) {
  return SameShapeSpec(in, DTypeSet::kFloat, "gradients", "outputs");
}
inline OutputSpec InferFloatX(std::span<const Tensor> in, const Attrs&) {
  return SameShapeSpec(in, DTypeSet::kFloat, "x");
}

// A new tensor of `spec` whose element i is f(in[0][i], ..., in[N-1][i]),
// f taking N Eigen array maps (one block of each input) and returning an
// array expression of their length. f is instantiated for each dtype in kSet.
// REQUIRES: in[0..N) have spec's shape and dtype (SameShapeSpec checked it).
template <size_t N, DTypeSet kSet, typename F>
Tensor ElementwiseKernel(std::span<const Tensor> in, const OutputSpec& spec, const F& f) {
  Tensor out = NewTensor(spec.shape, spec.dtype);
  Dispatch<kSet>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::array<const T*, N> x;
    for (size_t i = 0; i < N; ++i) x[i] = in[i].template data<T>().data();
    T* o = MutableData<T>(out);
    ParallelFor(out.num_elements(), kElementwiseGrain, kParallelElementwiseMin,
                [&](int64_t b, int64_t e) {
                  [&]<size_t... I>(std::index_sequence<I...>) {
                    ArrayMap<T>(o + b, e - b) = f(ConstArrayMap<T>(x[I] + b, e - b)...);
                  }
                  (std::make_index_sequence<N>{});
                });
  });
  return out;
}

// As ElementwiseKernel, for a kernel that is not one array expression: f
// writes a block of the output itself, f(out, in...) with `out` a mutable
// array map of the block and `in` const maps of the inputs' same block.
template <size_t N, DTypeSet kSet, typename F>
Tensor ElementwiseBlockKernel(std::span<const Tensor> in, const OutputSpec& spec, const F& f) {
  Tensor out = NewTensor(spec.shape, spec.dtype);
  Dispatch<kSet>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::array<const T*, N> x;
    for (size_t i = 0; i < N; ++i) x[i] = in[i].template data<T>().data();
    T* o = MutableData<T>(out);
    ParallelFor(out.num_elements(), kElementwiseGrain, kParallelElementwiseMin,
                [&](int64_t b, int64_t e) {
                  [&]<size_t... I>(std::index_sequence<I...>) {
                    auto block = ArrayMap<T>(o + b, e - b);
                    f(block, ConstArrayMap<T>(x[I] + b, e - b)...);
                  }
                  (std::make_index_sequence<N>{});
                });
  });
  return out;
}

}  // namespace eager::internal
