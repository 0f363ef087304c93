#include "ops/reduction_ops.h"

#include <algorithm>
#include <array>
#include <limits>
#include <type_traits>
#include <vector>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/cumulative_ops.h"
#include "ops/execute.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/dynamic_shape.h"
#include "ops/internal/eigen_view.h"
#include "ops/internal/scalar_like.h"
#include "ops/parallel.h"
#include "ops/shape_ops.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;
using AxisMask = std::array<bool, Shape::kMaxRank>;

// Which dimensions the "axis" attr reduces; empty means none, as TF's
// reduction_indices (the public functions spell out "all"). Throws on an
// out-of-range or repeated axis, naming it and the shape.
AxisMask ReducedAxes(const Shape& shape, const std::vector<int64_t>& axes) {
  AxisMask mask{};
  for (int64_t axis : axes) {
    const int a = internal::NormalizeAxis(axis, shape);
    if (mask[a]) {
      throw InvalidArgumentError(StrCat("axis ", axis, " appears more than once in the reduction",
                                        " axes of a tensor of shape ", shape));
    }
    mask[a] = true;
  }
  return mask;
}

// x's shape with reduced dimensions set to 1 (keepdims) or removed.
Shape ReducedShape(const Shape& shape, const AxisMask& mask, bool keepdims) {
  std::array<int64_t, Shape::kMaxRank> dims{};
  int rank = 0;
  for (int i = 0; i < shape.rank(); ++i) {
    if (!mask[i]) {
      dims[rank++] = shape.dim(i);
    } else if (keepdims) {
      dims[rank++] = 1;
    }
  }
  // Partial: in a graph, kept dimensions may be unknown.
  return Shape::Partial(std::span<const int64_t>(dims.data(), static_cast<size_t>(rank)));
}

template <DTypeSet kSet>
OutputSpec InferReduce(std::span<const Tensor> in, const Attrs& attrs) {
  internal::CheckDTypeIn(in[0], "input", kSet);
  const AxisMask mask = ReducedAxes(in[0].shape(), attrs.GetInts("axis"));
  return {ReducedShape(in[0].shape(), mask, attrs.GetBool("keep_dims")), in[0].dtype()};
}

// The input's dimensions with size-1 ones dropped and neighbours of the same
// kind (reduced or kept) merged, so that a bias gradient (sum over rows) or a
// per-row sum becomes a two-level loop with a contiguous inner run.
struct ReducePlan {
  int rank = 0;
  std::array<int64_t, Shape::kMaxRank> dims{};
  std::array<bool, Shape::kMaxRank> reduced{};
  std::array<int64_t, Shape::kMaxRank> out_strides{};  // 0 along reduced dims
};

ReducePlan MakeReducePlan(const Shape& shape, const AxisMask& mask) {
  ReducePlan plan;
  for (int i = 0; i < shape.rank(); ++i) {
    if (shape.dim(i) == 1) continue;
    if (plan.rank > 0 && plan.reduced[plan.rank - 1] == mask[i]) {
      plan.dims[plan.rank - 1] *= shape.dim(i);
    } else {
      plan.dims[plan.rank] = shape.dim(i);
      plan.reduced[plan.rank] = mask[i];
      ++plan.rank;
    }
  }
  if (plan.rank == 0) {  // a single element
    plan.rank = 1;
    plan.dims[0] = 1;
    plan.reduced[0] = true;
  }
  int64_t stride = 1;
  for (int d = plan.rank - 1; d >= 0; --d) {
    plan.out_strides[d] = plan.reduced[d] ? 0 : stride;
    if (!plan.reduced[d]) stride *= plan.dims[d];
  }
  return plan;
}

enum class Reducer { kSum, kMax, kMin, kProd };

template <typename T, Reducer kReducer>
T Identity() {
  if constexpr (kReducer == Reducer::kMax) {
    return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::lowest();
  } else if constexpr (kReducer == Reducer::kMin) {
    return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::max();
  } else if constexpr (kReducer == Reducer::kProd) {
    return T(1);
  } else {
    return T(0);
  }
}

template <typename T, Reducer kReducer>
T Combine(T a, T b) {
  if constexpr (kReducer == Reducer::kSum) {
    return a + b;
  } else if constexpr (kReducer == Reducer::kMax) {
    return std::max(a, b);
  } else if constexpr (kReducer == Reducer::kMin) {
    return std::min(a, b);
  } else {
    return a * b;
  }
}

// A contiguous run reduced to one value (Eigen's vectorized reductions).
template <typename T, Reducer kReducer, typename Run>
T RunValue(const Run& run) {
  if constexpr (kReducer == Reducer::kSum) {
    return run.sum();
  } else if constexpr (kReducer == Reducer::kMax) {
    return run.maxCoeff();
  } else if constexpr (kReducer == Reducer::kMin) {
    return run.minCoeff();
  } else {
    return run.prod();
  }
}

// acc[i] = Combine(acc[i], run[i]) for a run of kept outputs.
template <typename T, Reducer kReducer, typename Acc, typename Run>
void CombineInto(Acc& acc, const Run& run) {
  if constexpr (kReducer == Reducer::kSum) {
    acc += run;
  } else if constexpr (kReducer == Reducer::kMax) {
    acc = acc.max(run);
  } else if constexpr (kReducer == Reducer::kMin) {
    acc = acc.min(run);
  } else {
    acc *= run;
  }
}

template <typename T, Reducer kReducer>
void Reduce(const T* in, int64_t in_size, T* out, int64_t out_size, const ReducePlan& plan) {
  using Vec = internal::ArrayMap<T>;
  using ConstVec = internal::ConstArrayMap<T>;
  Vec(out, out_size).setConstant(Identity<T, kReducer>());
  if (in_size == 0) return;
  const int last = plan.rank - 1;
  const int64_t n = plan.dims[last];
  std::array<int64_t, Shape::kMaxRank> index{};
  int64_t o = 0;
  for (int64_t i = 0; i < in_size; i += n) {
    ConstVec run(in + i, n);
    if (plan.reduced[last]) {
      out[o] = Combine<T, kReducer>(out[o], RunValue<T, kReducer>(run));
    } else {
      Vec acc(out + o, n);
      CombineInto<T, kReducer>(acc, run);
    }
    for (int d = last - 1; d >= 0; --d) {
      o += plan.out_strides[d];
      if (++index[d] < plan.dims[d]) break;
      o -= plan.out_strides[d] * plan.dims[d];
      index[d] = 0;
    }
  }
}

// Large reductions run over the pool (ops/parallel.h) in an order fixed by
// the shape alone, so results are bit-identical for any thread count:
//  - outputs in independent blocks (rows of an outer kept dimension, or
//    column ranges of a [reduced, kept] sum such as a bias gradient): each
//    output element is accumulated exactly as on one thread, input by input;
//  - a whole contiguous input to one value: the input is cut into blocks of
//    kReduceBlock elements, each block reduced alone (Eigen's vectorized
//    sum/max), then the block results combined left to right from the
//    identity: ((0 + s0) + s1) + ... Below kParallelElementwiseMin elements
//    (and for the other plans) one thread reduces as before.
inline constexpr int64_t kReduceBlock = int64_t{1} << 15;

template <typename T, Reducer kReducer>
void ReduceLarge(const T* in, int64_t in_size, T* out, int64_t out_size, const ReducePlan& plan) {
  using internal::ParallelFor;
  constexpr int64_t kMin = internal::kParallelElementwiseMin;
  if (in_size < kMin || out_size == 0) {
    Reduce<T, kReducer>(in, in_size, out, out_size, plan);
    return;
  }
  if (plan.rank == 1 && plan.reduced[0]) {  // everything to one value
    const int64_t blocks = (in_size + kReduceBlock - 1) / kReduceBlock;
    std::vector<T> partial(static_cast<size_t>(blocks));
    ParallelFor(blocks, 1, 2, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t begin = b * kReduceBlock;
        const int64_t n = std::min(kReduceBlock, in_size - begin);
        internal::ConstArrayMap<T> run(in + begin, n);
        partial[static_cast<size_t>(b)] = RunValue<T, kReducer>(run);
      }
    });
    T acc = Identity<T, kReducer>();
    for (const T& p : partial) acc = Combine<T, kReducer>(acc, p);
    out[0] = acc;
    return;
  }
  if (!plan.reduced[0]) {  // outer kept dimension: blocks of whole rows
    const int64_t rows = plan.dims[0];
    const int64_t in_row = in_size / rows;
    const int64_t out_row = out_size / rows;
    const int64_t rows_per_block = std::max<int64_t>(1, kReduceBlock / in_row);
    ParallelFor(rows, rows_per_block, 0, [&](int64_t r0, int64_t r1) {
      ReducePlan block = plan;
      block.dims[0] = r1 - r0;
      Reduce<T, kReducer>(in + r0 * in_row, (r1 - r0) * in_row, out + r0 * out_row,
                          (r1 - r0) * out_row, block);
    });
    return;
  }
  if (plan.rank == 2) {  // [reduced R, kept C]: column ranges, rows in order
    const int64_t rows = plan.dims[0];
    const int64_t cols = plan.dims[1];
    const int64_t width = (std::max<int64_t>(1, kReduceBlock / rows) + 15) / 16 * 16;
    ParallelFor(cols, width, 0, [&](int64_t c0, int64_t c1) {
      internal::ArrayMap<T> acc(out + c0, c1 - c0);
      acc.setConstant(Identity<T, kReducer>());
      for (int64_t r = 0; r < rows; ++r) {
        internal::ConstArrayMap<T> run(in + r * cols + c0, c1 - c0);
        CombineInto<T, kReducer>(acc, run);
      }
    });
    return;
  }
  Reduce<T, kReducer>(in, in_size, out, out_size, plan);
}

// Integer sums and products wrap as TF's do (two's complement), without
// the undefined behaviour of signed overflow (the fuzzer's int64 Prod): they
// run in the unsigned type of the same width, whose arithmetic is that wrap.
// Narrower integers are promoted to int by C++, whose range holds any sum or
// product of two of them but uint16's product, which a reduction of uint16
// may still wrap through int.
template <typename T, Reducer kReducer,
          bool = std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) >= sizeof(int) &&
                 (kReducer == Reducer::kSum || kReducer == Reducer::kProd)>
struct ReducedAs {
  using type = T;
};
template <typename T, Reducer kReducer>
struct ReducedAs<T, kReducer, true> {
  using type = std::make_unsigned_t<T>;
};

template <Reducer kReducer, bool kMean>
Tensor ReduceKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Tensor& x = in[0];
  const ReducePlan plan = MakeReducePlan(x.shape(), ReducedAxes(x.shape(), attrs.GetInts("axis")));
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kNumeric>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = internal::MutableData<T>(out);
    using R = typename ReducedAs<T, kReducer>::type;
    // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast): T and R are
    // the signed and unsigned types of one width, which may alias.
    ReduceLarge<R, kReducer>(reinterpret_cast<const R*>(x.data<T>().data()), x.num_elements(),
                             reinterpret_cast<R*>(o), out.num_elements(), plan);
    // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast)
    if constexpr (kMean) {
      const int64_t count = out.num_elements() == 0 ? 0 : x.num_elements() / out.num_elements();
      // Integer means divide (truncating) as TensorFlow's do; 0/0 stays NaN for floats.
      if (count > 1 || (count == 0 && std::is_floating_point_v<T>)) {
        internal::MutableFlatView<T>(out) /= static_cast<T>(count);
      }
    }
  });
  return out;
}

// The output gradient laid out like x: reshaped to keepdims and broadcast.
Tensor SpreadToInput(const OpCall& call, const Tensor& grad) {
  const Shape& x_shape = call.inputs[0].shape();
  if (x_shape.unknown_rank()) {
    throw UnimplementedError(
        StrCat("the gradient of ", call.op->type, " needs its input's rank, which is unknown"));
  }
  if (const Tensor* axes = call.TensorAttr("axis")) {  // axes known when the graph runs
    const Shape kept = Shape::Partial(std::vector<int64_t>(x_shape.rank(), Shape::kUnknownDim));
    return internal::BroadcastToTensor(
        internal::ReshapeToTensor(grad, internal::KeptDimsShape(call.inputs[0], *axes), kept),
        ShapeOf(call.inputs[0]), x_shape);
  }
  const AxisMask mask = ReducedAxes(x_shape, call.attrs.GetInts("axis"));
  if (!x_shape.IsFullyDefined()) {  // graph mode: x's shape from the Shape op when it runs
    const std::span<const bool> reduced(mask.data(), static_cast<size_t>(x_shape.rank()));
    const Shape kept = ReducedShape(x_shape, mask, true);
    return internal::BroadcastToTensor(
        internal::ReshapeToTensor(grad, internal::KeptDimsShape(call.inputs[0], reduced), kept),
        ShapeOf(call.inputs[0]), x_shape);
  }
  Tensor kept = Reshape(grad, ReducedShape(x_shape, mask, true).ToVector());
  return BroadcastTo(kept, x_shape);
}

Grads SumGradient(const OpCall& call, const Tensor& grad) { return {SpreadToInput(call, grad)}; }

Grads MeanGradient(const OpCall& call, const Tensor& grad) {
  if (call.TensorAttr("axis") != nullptr) {
    // TF's _MeanGrad: size(x) / max(size(output), 1), from the shapes at run time.
    const Tensor spread = SpreadToInput(call, grad);
    const Tensor one = Tensor::FromVector<int32_t>({1}, Shape{});
    const Tensor factor = Div(ReduceProd(ShapeOf(call.inputs[0]), {0}),
                              Maximum(ReduceProd(ShapeOf(call.output), {0}), one));
    return {Div(spread, Cast(factor, grad.dtype()))};
  }
  if (const Shape& x_shape = call.inputs[0].shape(); !x_shape.IsFullyDefined()) {
    const Tensor spread = SpreadToInput(call, grad);  // throws for an unknown rank
    const AxisMask mask = ReducedAxes(x_shape, call.attrs.GetInts("axis"));
    const std::span<const bool> reduced(mask.data(), static_cast<size_t>(x_shape.rank()));
    return {Div(spread, internal::ReducedCount(call.inputs[0], reduced, grad.dtype()))};
  }
  const int64_t in = call.inputs[0].num_elements();
  const int64_t out = call.output.num_elements();
  const double scale = out == 0 ? 0.0 : static_cast<double>(out) / static_cast<double>(in);
  return {Mul(SpreadToInput(call, grad), internal::ScalarLike(scale, grad.dtype()))};
}

// TF's _MaxGrad: the gradient is shared equally among the elements equal to
// the maximum.
// In a graph where x's shape is not fully known, the kept-dims shape comes
// from Shape(x) when it runs (TF's reduced_shape).
Grads MaxGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  if (x.shape().unknown_rank()) {
    throw UnimplementedError(
        StrCat("the gradient of ", call.op->type, " needs its input's rank, which is unknown"));
  }
  if (const Tensor* axes = call.TensorAttr("axis")) {  // axes known when the graph runs
    const Shape kept = Shape::Partial(std::vector<int64_t>(x.rank(), Shape::kUnknownDim));
    const Tensor kept_shape = internal::KeptDimsShape(x, *axes);
    const auto to_kept = [&](const Tensor& t) {
      return internal::ReshapeToTensor(t, kept_shape, kept);
    };
    Tensor indicators = Cast(Equal(x, to_kept(call.output)), grad.dtype());
    Tensor num_selected = to_kept(internal::SumOverTensor(indicators, *axes));
    // Reshaped to Shape(x) to carry x's static shape on (the kept shape's
    // dimensions are all unknown statically).
    return {internal::ReshapeToTensor(Mul(Div(indicators, num_selected), to_kept(grad)), ShapeOf(x),
                                      x.shape())};
  }
  const AxisMask mask = ReducedAxes(x.shape(), call.attrs.GetInts("axis"));
  const Shape kept = ReducedShape(x.shape(), mask, true);
  const auto to_kept = [&](const Tensor& t) {
    if (kept.IsFullyDefined()) return Reshape(t, kept.ToVector());
    const std::span<const bool> reduced(mask.data(), static_cast<size_t>(x.rank()));
    return internal::ReshapeToTensor(t, internal::KeptDimsShape(x, reduced), kept);
  };
  Tensor indicators = Cast(Equal(x, to_kept(call.output)), grad.dtype());
  Tensor num_selected = ReduceSum(indicators, call.attrs.GetInts("axis"), /*keepdims=*/true);
  return {Mul(Div(indicators, num_selected), to_kept(grad))};
}

// The product of the other elements of each element's reduction group,
// times the incoming gradient, as TF's _ProdGrad: the reduced axes are
// transposed to the front (in the order the "axis" attr lists them, then the
// kept axes in order) and folded into one of length R, the kept ones into one
// of length O; along R, the exclusive cumulative product from the left times
// the one from the right is each element's "others". No division: zeros need
// no special case, and a product that overflows or underflows does not drag
// the others' products with it (prod / x gives inf for all of [1e200, 1e200,
// 1e-100], whose first two others' products are 1e100). The same
// multiplications in the same order as TF's, so the same bits. In a graph
// where x's shape is partly unknown, R, O and the permuted shape come from
// Shape(x) when it runs.
Grads ProdGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor spread = SpreadToInput(call, grad);  // throws for an unknown rank
  const Shape& shape = x.shape();
  const std::vector<int64_t>& axes = call.attrs.GetInts("axis");
  const AxisMask mask = ReducedAxes(shape, axes);
  std::vector<int64_t> perm;
  perm.reserve(static_cast<size_t>(shape.rank()));
  for (const int64_t axis : axes) perm.push_back(internal::NormalizeAxis(axis, shape));
  for (int i = 0; i < shape.rank(); ++i) {
    if (!mask[i]) perm.push_back(i);
  }
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = i;
  const Tensor permuted = Transpose(x, perm);
  Tensor others;
  if (shape.IsFullyDefined()) {
    int64_t reduced_num = 1, other_num = 1;
    for (int i = 0; i < shape.rank(); ++i) (mask[i] ? reduced_num : other_num) *= shape.dim(i);
    const Tensor folded = Reshape(permuted, {reduced_num, other_num});
    others = Reshape(Mul(Cumprod(folded, 0, /*exclusive=*/true),
                         Cumprod(folded, 0, /*exclusive=*/true, /*reverse=*/true)),
                     permuted.shape().ToVector());
  } else {
    const std::span<const bool> reduced(mask.data(), static_cast<size_t>(shape.rank()));
    AxisMask kept_mask{};
    for (int i = 0; i < shape.rank(); ++i) kept_mask[i] = !mask[i];
    const std::span<const bool> kept(kept_mask.data(), static_cast<size_t>(shape.rank()));
    const auto count = [&](std::span<const bool> which) {
      return Reshape(internal::ReducedCount(x, which, DType::kInt32), {1});
    };
    const Tensor folded_shape = Concat({count(reduced), count(kept)}, 0);
    const Tensor folded = internal::ReshapeToTensor(
        permuted, folded_shape, Shape::Partial({Shape::kUnknownDim, Shape::kUnknownDim}));
    others = internal::ReshapeToTensor(
        Mul(Cumprod(folded, 0, /*exclusive=*/true), Cumprod(folded, 0, /*exclusive=*/true,
                                                            /*reverse=*/true)),
        ShapeOf(permuted), permuted.shape());
  }
  return {Mul(spread, Transpose(others, inverse))};
}

// TF's output_type: int64 (the default) or int32, which must hold every
// index along the axis.
DType ArgMaxOutputType(const Tensor& x, int axis, const Attrs& attrs) {
  const DType type = attrs.Has("output_type") ? attrs.GetType("output_type") : DType::kInt64;
  if (type != DType::kInt64 && type != DType::kInt32) {
    throw InvalidArgumentError(
        StrCat("output_type must be int32 or int64, got ", type, " (input shape ", x.shape(), ")"));
  }
  if (type == DType::kInt32 && x.shape().dim(axis) > std::numeric_limits<int32_t>::max()) {
    throw InvalidArgumentError(
        StrCat("output_type int32 cannot index axis ", axis, " of shape ", x.shape()));
  }
  return type;
}

OutputSpec InferArgMax(std::span<const Tensor> in, const Attrs& attrs) {
  const Tensor& x = in[0];
  internal::CheckDTypeIn(x, "input", DTypeSet::kNumeric);
  const int axis = internal::NormalizeAxis(attrs.GetInt("axis"), x.shape());
  if (x.shape().dim(axis) == 0) {
    throw InvalidArgumentError(StrCat("Reduction axis ", axis, " is empty in shape ", x.shape()));
  }
  return {ReducedShape(
              x.shape(),
              [&] {
                AxisMask m{};
                m[axis] = true;
                return m;
              }(),
              false),
          ArgMaxOutputType(x, axis, attrs)};
}

Tensor ArgMaxKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Tensor& x = in[0];
  const int axis = internal::NormalizeAxis(attrs.GetInt("axis"), x.shape());
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= x.shape().dim(i);
  for (int i = axis + 1; i < x.rank(); ++i) inner *= x.shape().dim(i);
  const int64_t len = x.shape().dim(axis);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const auto argmax = [&](auto* o) {
    using Index = std::remove_pointer_t<decltype(o)>;
    internal::Dispatch<DTypeSet::kNumeric>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* p = x.data<T>().data();
      for (int64_t a = 0; a < outer; ++a) {
        for (int64_t b = 0; b < inner; ++b) {
          const T* base = p + a * len * inner + b;
          int64_t best = 0;
          for (int64_t k = 1; k < len; ++k) {
            if (base[k * inner] > base[best * inner]) best = k;  // first index wins ties
          }
          o[a * inner + b] = static_cast<Index>(best);
        }
      }
    });
  };
  if (spec.dtype == DType::kInt32) {
    argmax(internal::MutableData<int32_t>(out));
  } else {
    argmax(internal::MutableData<int64_t>(out));
  }
  return out;
}

}  // namespace

// TF passes reduction axes as an int32 input tensor.
constexpr InputAttr kReductionInputs[] = {{"axis", "reduction_indices", InputAttr::Kind::kInts}};
constexpr TypeAttr kReductionTypes[] = {{"T", 0}, {"Tidx", TypeAttr::kInt32}};
constexpr InputAttr kArgMaxInputs[] = {{"axis", "dimension", InputAttr::Kind::kInt}};

const OpDef kSumOp = {.type = "Sum",
                      .num_inputs = 1,
                      .infer = InferReduce<DTypeSet::kNumeric>,
                      .compute = ReduceKernel<Reducer::kSum, false>,
                      .gradient = SumGradient,
                      .input_attrs = kReductionInputs,
                      .type_attrs = kReductionTypes,
                      .gradient_takes_tensor_attrs = true};
const OpDef kMeanOp = {.type = "Mean",
                       .num_inputs = 1,
                       .infer = InferReduce<DTypeSet::kNumeric>,
                       .compute = ReduceKernel<Reducer::kSum, true>,
                       .gradient = MeanGradient,
                       .input_attrs = kReductionInputs,
                       .type_attrs = kReductionTypes,
                       .gradient_takes_tensor_attrs = true};
const OpDef kMaxOp = {.type = "Max",
                      .num_inputs = 1,
                      .infer = InferReduce<DTypeSet::kNumeric>,
                      .compute = ReduceKernel<Reducer::kMax, false>,
                      .gradient = MaxGradient,
                      .input_attrs = kReductionInputs,
                      .type_attrs = kReductionTypes,
                      .gradient_takes_tensor_attrs = true};
// TF's _MinGrad is _MaxGrad: ties with the minimum share the gradient.
const OpDef kMinOp = {.type = "Min",
                      .num_inputs = 1,
                      .infer = InferReduce<DTypeSet::kNumeric>,
                      .compute = ReduceKernel<Reducer::kMin, false>,
                      .gradient = MaxGradient,
                      .input_attrs = kReductionInputs,
                      .type_attrs = kReductionTypes,
                      .gradient_takes_tensor_attrs = true};
const OpDef kProdOp = {.type = "Prod",
                       .num_inputs = 1,
                       .infer = InferReduce<DTypeSet::kNumeric>,
                       .compute = ReduceKernel<Reducer::kProd, false>,
                       .gradient = ProdGradient,
                       .input_attrs = kReductionInputs,
                       .type_attrs = kReductionTypes};
const OpDef kArgMaxOp = {.type = "ArgMax",
                         .num_inputs = 1,
                         .infer = InferArgMax,
                         .compute = ArgMaxKernel,
                         .gradient = nullptr,
                         .input_attrs = kArgMaxInputs,
                         .type_attrs = kReductionTypes};  // an index: not differentiable

namespace {
// The public functions' "no axes" means every axis (tf.reduce_sum(x)).
std::vector<int64_t> AxesOrAll(const Tensor& x, const std::vector<int64_t>& axes) {
  if (!axes.empty()) return axes;
  std::vector<int64_t> all(static_cast<size_t>(x.rank()));
  for (int i = 0; i < x.rank(); ++i) all[static_cast<size_t>(i)] = i;
  return all;
}
}  // namespace

Tensor ReduceSum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return Execute(kSumOp, x, Attrs{{"axis", AxesOrAll(x, axes)}, {"keep_dims", keepdims}});
}
Tensor ReduceMean(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return Execute(kMeanOp, x, Attrs{{"axis", AxesOrAll(x, axes)}, {"keep_dims", keepdims}});
}
Tensor ReduceMax(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return Execute(kMaxOp, x, Attrs{{"axis", AxesOrAll(x, axes)}, {"keep_dims", keepdims}});
}
Tensor ReduceMin(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return Execute(kMinOp, x, Attrs{{"axis", AxesOrAll(x, axes)}, {"keep_dims", keepdims}});
}
Tensor ReduceProd(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return Execute(kProdOp, x, Attrs{{"axis", AxesOrAll(x, axes)}, {"keep_dims", keepdims}});
}
Tensor ArgMax(const Tensor& x, int64_t axis) {
  return Execute(kArgMaxOp, x, Attrs{{"axis", axis}, {"output_type", DType::kInt64}});
}

// ---- All, Any ----------------------------------------------------------------------------

namespace {

// The bools as bytes (bool and uint8_t have one size, and unsigned char may
// alias anything), reduced by min (All) or max (Any); an empty group gives
// the byte identity, 255 or 0, which is then made a bool.
template <Reducer kReducer>
Tensor LogicalReduceKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  static_assert(sizeof(bool) == sizeof(uint8_t));
  const Tensor& x = in[0];
  const ReducePlan plan = MakeReducePlan(x.shape(), ReducedAxes(x.shape(), attrs.GetInts("axis")));
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  bool* o = internal::MutableData<bool>(out);
  // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast): bytes of bools.
  auto* bytes = reinterpret_cast<uint8_t*>(o);
  ReduceLarge<uint8_t, kReducer>(reinterpret_cast<const uint8_t*>(x.data<bool>().data()),
                                 x.num_elements(), bytes, out.num_elements(), plan);
  // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast)
  for (int64_t i = 0; i < out.num_elements(); ++i) o[i] = bytes[i] != 0;
  return out;
}

constexpr TypeAttr kLogicalReductionTypes[] = {{"Tidx", TypeAttr::kInt32}};

}  // namespace

const OpDef kAllOp = {.type = "All",
                      .num_inputs = 1,
                      .infer = InferReduce<DTypeSet::kBool>,
                      .compute = LogicalReduceKernel<Reducer::kMin>,
                      .input_attrs = kReductionInputs,
                      .type_attrs = kLogicalReductionTypes};
const OpDef kAnyOp = {.type = "Any",
                      .num_inputs = 1,
                      .infer = InferReduce<DTypeSet::kBool>,
                      .compute = LogicalReduceKernel<Reducer::kMax>,
                      .input_attrs = kReductionInputs,
                      .type_attrs = kLogicalReductionTypes};

Tensor ReduceAll(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return Execute(kAllOp, x, Attrs{{"axis", AxesOrAll(x, axes)}, {"keep_dims", keepdims}});
}
Tensor ReduceAny(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return Execute(kAnyOp, x, Attrs{{"axis", AxesOrAll(x, axes)}, {"keep_dims", keepdims}});
}

}  // namespace eager
