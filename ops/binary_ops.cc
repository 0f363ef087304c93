#include "ops/binary_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/array_ops.h"
#include "ops/execute.h"
#include "ops/internal/broadcast.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/dynamic_shape.h"
#include "ops/internal/eigen_view.h"
#include "ops/internal/elementwise.h"
#include "ops/internal/scalar_like.h"
#include "ops/op_def.h"
#include "ops/parallel.h"
#include "ops/shape_ops.h"
#include "ops/unary_ops.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;

// Each functor maps two equally long Eigen array expressions to one.
struct AddFn {
  static auto Apply(const auto& a, const auto& b) { return a + b; }
};
struct SubFn {
  static auto Apply(const auto& a, const auto& b) { return a - b; }
};
struct MulFn {
  static auto Apply(const auto& a, const auto& b) { return a * b; }
};
struct DivFn {
  static auto Apply(const auto& a, const auto& b) { return a / b; }
};
// Scalar std::pow: Pow is rarely hot, and Eigen's AVX-512 pow packet trips a
// GCC 12 -Wuninitialized false positive in the intrinsics headers.
struct PowFn {
  static auto Apply(const auto& a, const auto& b) {
    using T = typename std::decay_t<decltype(a)>::Scalar;
    return a.binaryExpr(b, [](T x, T y) { return std::pow(x, y); });
  }
};
struct MaximumFn {
  static auto Apply(const auto& a, const auto& b) { return a.max(b); }
};
struct MinimumFn {
  static auto Apply(const auto& a, const auto& b) { return a.min(b); }
};
struct EqualFn {
  static auto Apply(const auto& a, const auto& b) { return a == b; }
};
struct NotEqualFn {
  static auto Apply(const auto& a, const auto& b) { return a != b; }
};
struct GreaterFn {
  static auto Apply(const auto& a, const auto& b) { return a > b; }
};
struct LessFn {
  static auto Apply(const auto& a, const auto& b) { return a < b; }
};
struct LessEqualFn {
  static auto Apply(const auto& a, const auto& b) { return a <= b; }
};
struct LogicalAndFn {
  static auto Apply(const auto& a, const auto& b) { return a && b; }
};
struct LogicalOrFn {
  static auto Apply(const auto& a, const auto& b) { return a || b; }
};
// TF's google_floor_div: rounds the quotient toward -infinity; integers
// without overflow (min / -1 wraps as two's complement, not UB), floats as
// floor(x / y).
template <typename T>
T FloorDivide(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    if (y == T(-1)) return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(x));
    const T q = x / y;
    return (x % y != 0 && ((x < 0) != (y < 0))) ? T(q - 1) : q;
  } else {
    return std::floor(x / y);
  }
}
// TF's google_floor_fmod / floor_mod: the remainder with the divisor's sign.
template <typename T>
T FloorModulo(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    if (y == T(-1)) return T(0);
    const T r = x % y;
    return (r != 0 && ((y < 0) != (r < 0))) ? T(r + y) : r;
  } else {
    const T r = std::fmod(x, y);
    return (r != 0 && ((y < 0) != (r < 0))) ? r + y : r;
  }
}
struct FloorDivFn {
  static constexpr std::string_view kIntegerDivision = "FloorDiv";
  static auto Apply(const auto& a, const auto& b) {
    using T = typename std::decay_t<decltype(a)>::Scalar;
    return a.binaryExpr(b, [](T x, T y) { return FloorDivide(x, y); });
  }
};
struct FloorModFn {
  static constexpr std::string_view kIntegerDivision = "FloorMod";
  static auto Apply(const auto& a, const auto& b) {
    using T = typename std::decay_t<decltype(a)>::Scalar;
    return a.binaryExpr(b, [](T x, T y) { return FloorModulo(x, y); });
  }
};

template <DTypeSet kSet, bool kBoolOutput>
OutputSpec InferBinary(std::span<const Tensor> in, const Attrs&) {
  internal::CheckSameDType(in[0], in[1]);
  internal::CheckDTypeIn(in[0], "x", kSet);
  return {internal::BroadcastShape(in[0].shape(), in[1].shape()),
          kBoolOutput ? DType::kBool : in[0].dtype()};
}

// Integer division by zero is undefined behaviour in C++; TensorFlow reports it.
template <typename T>
void CheckNoIntegerDivisionByZero(const Tensor& x, const Tensor& y,
                                  std::string_view op = "RealDiv") {
  if constexpr (std::is_integral_v<T>) {
    auto d = y.data<T>();
    if (std::find(d.begin(), d.end(), T(0)) != d.end()) {
      throw InvalidArgumentError(StrCat(op, ": Integer division by zero (x ", x.shape(), " / y ",
                                        y.shape(), ", dtype ", x.dtype(), ")"));
    }
  }
}

template <typename F, DTypeSet kSet, bool kBoolOutput>
Tensor BinaryKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& x = in[0];
  const Tensor& y = in[1];
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<kSet>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using O = std::conditional_t<kBoolOutput, bool, T>;
    using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;
    if constexpr (std::is_same_v<F, DivFn>) CheckNoIntegerDivisionByZero<T>(x, y);
    if constexpr (requires { F::kIntegerDivision; }) {
      CheckNoIntegerDivisionByZero<T>(x, y, F::kIntegerDivision);
    }
    const T* xp = x.data<T>().data();
    const T* yp = y.data<T>().data();
    O* op = internal::MutableData<O>(out);
    auto run = [&](int64_t xo, int64_t yo, int64_t oo, int64_t n, int64_t xs, int64_t ys) {
      if (n == 1) {  // one element (a scalar, or a broadcast run of one): no loop set-up
        using One = Eigen::Array<T, 1, 1>;
        Eigen::Map<Eigen::Array<O, 1, 1>>(op + oo) =
            F::Apply(Eigen::Map<const One>(xp + xo), Eigen::Map<const One>(yp + yo));
        return;
      }
      internal::ArrayMap<O> o(op + oo, n);
      if (xs == 1 && ys == 1) {
        o = F::Apply(internal::ConstArrayMap<T>(xp + xo, n),
                     internal::ConstArrayMap<T>(yp + yo, n));
      } else if (xs == 1) {
        o = F::Apply(internal::ConstArrayMap<T>(xp + xo, n), Vec::Constant(n, yp[yo]));
      } else if (ys == 1) {
        o = F::Apply(Vec::Constant(n, xp[xo]), internal::ConstArrayMap<T>(yp + yo, n));
      } else {
        o = F::Apply(Vec::Constant(n, xp[xo]), Vec::Constant(n, yp[yo]));
      }
    };
    // Fast path: same shapes (or one element each) are one contiguous run,
    // split over the pool when large (ops/parallel.h).
    const int64_t n = spec.shape.num_elements();
    auto contiguous = [&](int64_t xs, int64_t ys) {
      if (n <= internal::kElementwiseGrain) {  // one block: what ParallelFor would run, inline
        if (n > 0) run(0, 0, 0, n, xs, ys);
        return;
      }
      internal::ParallelFor(n, internal::kElementwiseGrain, internal::kParallelElementwiseMin,
                            [&](int64_t b, int64_t e) { run(b * xs, b * ys, b, e - b, xs, ys); });
    };
    if (x.shape() == y.shape()) {
      contiguous(1, 1);
    } else if (y.num_elements() == 1 && x.shape() == spec.shape) {
      contiguous(1, 0);
    } else if (x.num_elements() == 1 && y.shape() == spec.shape) {
      contiguous(0, 1);
    } else {
      internal::ForEachRun(internal::MakeBroadcastPlan(x.shape(), y.shape(), spec.shape), run);
    }
  });
  return out;
}

using Grads = std::vector<std::optional<Tensor>>;

// Each input's gradient is built only when the tape wants it
// (call.NeedsGradient): the bias of a Dense layer needs a reduction over the
// batch, its activations do not, and a constant operand needs nothing.
template <typename F>
std::optional<Tensor> IfNeeded(const OpCall& call, size_t i, F&& compute) {
  if (!call.NeedsGradient(i)) return std::nullopt;
  return compute();
}

Grads AddGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  return {IfNeeded(call, 0, [&] { return internal::SumToInput(grad, x, y, 0); }),
          IfNeeded(call, 1, [&] { return internal::SumToInput(grad, x, y, 1); })};
}

Grads SubGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  return {IfNeeded(call, 0, [&] { return internal::SumToInput(grad, x, y, 0); }),
          IfNeeded(call, 1, [&] { return internal::SumToInput(Neg(grad), x, y, 1); })};
}

Grads MulGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  return {IfNeeded(call, 0, [&] { return internal::SumToInput(Mul(grad, y), x, y, 0); }),
          IfNeeded(call, 1, [&] { return internal::SumToInput(Mul(grad, x), x, y, 1); })};
}

// d(x/y) = dx / y - dy * x / y^2 (TF's _RealDivGrad).
Grads DivGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  return {IfNeeded(call, 0, [&] { return internal::SumToInput(Div(grad, y), x, y, 0); }),
          IfNeeded(call, 1, [&] {
            return internal::SumToInput(Mul(grad, Neg(Div(Div(x, y), y))), x, y, 1);
          })};
}

// TF's _PowGrad: dz/dx = y * x^(y-1); dz/dy = z * log(x) where x > 0, else 0.
Grads PowGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  const Tensor& z = call.output;
  return {IfNeeded(call, 0,
                   [&] {
                     Tensor one = internal::ScalarLike(1.0, y.dtype());
                     Tensor gx = Mul(grad, Mul(y, Pow(x, Sub(y, one))));
                     return internal::SumToInput(gx, x, y, 0);
                   }),
          IfNeeded(call, 1, [&] {
            Tensor gy = Mul(grad, Mul(z, Log(x)));
            // Broadcast x to gy's shape so the mask lines up, then select.
            // (from Shape(gy) when gy's shape is known only when a graph runs).
            Tensor x_full = x.shape() == gy.shape()       ? x
                            : gy.shape().IsFullyDefined() ? BroadcastTo(x, gy.shape())
                                                          : BroadcastTo(x, ShapeOf(gy));
            return internal::SumToInput(ReluGrad(gy, x_full) /* where(x > 0, gy, 0) */, x, y, 1);
          })};
}

// Maximum/Minimum route the gradient to x where x is selected (x == z, which
// includes ties) and to y elsewhere, as TF's _MaximumMinimumGrad with >=/<=.
Grads SelectGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  Tensor x_mask = Cast(Equal(x, call.output), grad.dtype());
  Tensor gx = Mul(grad, x_mask);
  return {IfNeeded(call, 0, [&] { return internal::SumToInput(gx, x, y, 0); }),
          IfNeeded(call, 1, [&] { return internal::SumToInput(Sub(grad, gx), x, y, 1); })};
}

// ---- GreaterEqual, SelectV2 ------------------------------------------------------------

// ---- GreaterEqual -------------------------------------------------------------

void CheckGreaterEqualDTypes(std::span<const Tensor> in) {
  internal::CheckSameDType(in[0], in[1]);
  internal::CheckDTypeIn(in[0], "x", DTypeSet::kNumeric);
}

OutputSpec InferGreaterEqual(std::span<const Tensor> in, const Attrs&) {
  CheckGreaterEqualDTypes(in);
  return {internal::BroadcastShape(in[0].shape(), in[1].shape()), DType::kBool};
}

Tensor GreaterEqualKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& x = in[0];
  const Tensor& y = in[1];
  Tensor out = internal::NewTensor(spec.shape, DType::kBool);
  bool* o = internal::MutableData<bool>(out);
  internal::Dispatch<DTypeSet::kNumeric>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = x.data<T>().data();
    const T* yp = y.data<T>().data();
    internal::ForEachRun(
        internal::MakeBroadcastPlan(x.shape(), y.shape(), spec.shape),
        [&](int64_t xo, int64_t yo, int64_t oo, int64_t n, int64_t xs, int64_t ys) {
          for (int64_t i = 0; i < n; ++i) o[oo + i] = xp[xo + i * xs] >= yp[yo + i * ys];
        });
  });
  return out;
}

// ---- SelectV2 -----------------------------------------------------------------

// The output dtype: t's.
DType SelectV2DType(std::span<const Tensor> in) {
  if (in[0].dtype() != DType::kBool) {
    throw InvalidArgumentError(StrCat("condition must be a bool tensor, got ", in[0].dtype()));
  }
  internal::CheckSameDType(in[1], in[2], "t", "e");
  if (in[1].dtype() == DType::kString) {
    throw UnimplementedError("SelectV2 of string tensors: eager selects fixed-size elements only");
  }
  return in[1].dtype();
}

OutputSpec InferSelectV2(std::span<const Tensor> in, const Attrs&) {
  const DType dtype = SelectV2DType(in);
  return {internal::BroadcastShape(internal::BroadcastShape(in[0].shape(), in[1].shape()),
                                   in[2].shape()),
          dtype};
}

// The broadcast of partially known shapes (graph mode): a dimension known in
// one input and unknown in another is the known one unless that is 1, which
// an unknown dimension may stretch. REQUIRES: known ranks.
Shape BroadcastPartial(std::span<const Tensor> in) {
  int rank = 0;
  for (const Tensor& t : in) rank = std::max(rank, t.rank());
  std::vector<int64_t> dims(static_cast<size_t>(rank), 1);
  std::vector<bool> stretchable(static_cast<size_t>(rank), false);  // an unknown dim seen
  for (const Tensor& t : in) {
    const int offset = rank - t.rank();
    for (int d = 0; d < t.rank(); ++d) {
      const auto i = static_cast<size_t>(d) + static_cast<size_t>(offset);
      const int64_t dim = t.shape().dim(d);
      if (dim == Shape::kUnknownDim) {
        stretchable[i] = true;
      } else if (dims[i] == 1) {
        dims[i] = dim;
      } else if (dim != 1 && dim != dims[i]) {
        throw InvalidArgumentError(StrCat("Incompatible shapes: dimension ", i, " is ", dims[i],
                                          " in one input and ", dim, " in another"));
      }
    }
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (stretchable[i] && dims[i] == 1) dims[i] = Shape::kUnknownDim;
  }
  return Shape::Partial(dims);
}

OutputSpec InferGreaterEqualPartial(std::span<const Tensor> in, const Attrs&) {
  CheckGreaterEqualDTypes(in);
  return {BroadcastPartial(in), DType::kBool};
}

OutputSpec InferSelectV2Partial(std::span<const Tensor> in, const Attrs&) {
  const DType dtype = SelectV2DType(in);
  return {BroadcastPartial(in), dtype};
}

// Element strides of `shape` broadcast to `out` (0 along stretched dimensions).
std::array<int64_t, Shape::kMaxRank> BroadcastStrides(const Shape& shape, const Shape& out) {
  std::array<int64_t, Shape::kMaxRank> strides{};
  int64_t stride = 1;
  const int offset = out.rank() - shape.rank();
  for (int d = shape.rank() - 1; d >= 0; --d) {
    strides[static_cast<size_t>(d) + static_cast<size_t>(offset)] = shape.dim(d) == 1 ? 0 : stride;
    stride *= shape.dim(d);
  }
  return strides;
}

// Copies elements of `size` bytes: out[i] = c[i] ? t[i] : e[i], each input
// read through its broadcast strides (an odometer over the output).
Tensor SelectV2Kernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& c = in[0];
  const Tensor& t = in[1];
  const Tensor& e = in[2];
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const int64_t n = spec.shape.num_elements();
  if (n == 0) return out;
  const size_t size = DTypeSize(spec.dtype);
  const bool* cp = c.data<bool>().data();
  const auto* tp = static_cast<const std::byte*>(internal::RawData(t));
  const auto* ep = static_cast<const std::byte*>(internal::RawData(e));
  auto* op = static_cast<std::byte*>(internal::MutableRawData(out));
  const int rank = spec.shape.rank();
  const auto cs = BroadcastStrides(c.shape(), spec.shape);
  const auto ts = BroadcastStrides(t.shape(), spec.shape);
  const auto es = BroadcastStrides(e.shape(), spec.shape);
  std::array<int64_t, Shape::kMaxRank> index{};
  int64_t ci = 0;
  int64_t ti = 0;
  int64_t ei = 0;
  for (int64_t i = 0; i < n; ++i) {
    const std::byte* from =
        cp[ci] ? tp + ti * static_cast<int64_t>(size) : ep + ei * static_cast<int64_t>(size);
    std::memcpy(op + i * static_cast<int64_t>(size), from, size);
    for (int d = rank - 1; d >= 0; --d) {  // odometer, innermost first
      const auto u = static_cast<size_t>(d);
      ci += cs[u];
      ti += ts[u];
      ei += es[u];
      if (++index[u] < spec.shape.dim(d)) break;
      ci -= cs[u] * spec.shape.dim(d);
      ti -= ts[u] * spec.shape.dim(d);
      ei -= es[u] * spec.shape.dim(d);
      index[u] = 0;
    }
  }
  return out;
}

// g (the output's shape) summed back to `input`'s shape. Where input's shape
// is partly unknown in a graph, the axes it was broadcast along show only
// when the graph runs (each of the three inputs may broadcast against the
// other two): as TF's _SelectGradV2, BroadcastGradientArgs(Shape(input),
// Shape(output)) names them, and the sum is reshaped to Shape(input).
Tensor SumToSelectInput(const Tensor& g, const Tensor& input, const Tensor& output) {
  const Shape& shape = input.shape();
  if (shape.IsFullyDefined() && !g.shape().unknown_rank()) return internal::SumToShape(g, shape);
  const Tensor input_shape = ShapeOf(input);
  const Tensor axes = BroadcastGradientArgs(input_shape, ShapeOf(output)).first;
  return internal::ReshapeToTensor(internal::SumOverTensor(g, axes), input_shape, shape);
}

Grads SelectV2Gradient(const OpCall& call, const Tensor& grad) {
  const Tensor& c = call.inputs[0];
  const Tensor zero = internal::ScalarLike(0.0, grad.dtype());
  Grads grads(3);
  if (call.NeedsGradient(1)) {
    grads[1] = SumToSelectInput(SelectV2(c, grad, zero), call.inputs[1], call.output);
  }
  if (call.NeedsGradient(2)) {
    grads[2] = SumToSelectInput(SelectV2(c, zero, grad), call.inputs[2], call.output);
  }
  return grads;
}

// ---- Select (v1: tf.compat.v1.where) -------------------------------------------------

// TF's SelectOp: t and e of one shape; condition a scalar (all of t or all
// of e), of that shape, or a vector along t's first dimension (whole rows).
void CheckSelectShapes(const Shape& c, const Shape& t, const Shape& e) {
  if (t != e) {
    throw InvalidArgumentError(
        StrCat("Select: 't' and 'e' must have the same shape, got ", t, " vs. ", e));
  }
  if (c.rank() == 0 || c == t) return;
  if (c.rank() == 1 && t.rank() >= 1 && c.dim(0) == t.dim(0)) return;
  throw InvalidArgumentError(StrCat("Select: condition must be a scalar, a vector of ", t.dim(0),
                                    " (t's first dimension) or of t's shape ", t, ", got ", c));
}

OutputSpec InferSelect(std::span<const Tensor> in, const Attrs&) {
  const DType dtype = SelectV2DType(in);
  CheckSelectShapes(in[0].shape(), in[1].shape(), in[2].shape());
  return {in[1].shape(), dtype};
}

OutputSpec InferSelectPartial(std::span<const Tensor> in, const Attrs&) {
  const DType dtype = SelectV2DType(in);
  return {in[1].shape().IsFullyDefined() ? in[1].shape() : in[2].shape(), dtype};
}

// The vector condition as [n, 1, ...] broadcasts along the rows: SelectV2's
// kernel does the rest.
Tensor SelectKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Tensor& c = in[0];
  if (c.rank() != 1 || in[1].rank() <= 1) return SelectV2Kernel(in, attrs, spec);
  std::vector<int64_t> dims(static_cast<size_t>(in[1].rank()), 1);
  dims[0] = c.shape().dim(0);
  const Tensor rows[] = {internal::WithShape(c, Shape(dims)), in[1], in[2]};
  return SelectV2Kernel(rows, attrs, spec);
}

// TF's _SelectGrad: grad where condition to t, elsewhere to e (same shapes);
// none for the condition.
Grads SelectV1Gradient(const OpCall& call, const Tensor& grad) {
  const Tensor& c = call.inputs[0];
  const Tensor zeros = ZerosLike(grad);
  Grads grads(3);
  if (call.NeedsGradient(1)) grads[1] = Select(c, grad, zeros);
  if (call.NeedsGradient(2)) grads[2] = Select(c, zeros, grad);
  return grads;
}

// ---- SquaredDifference -----------------------------------------------------------------

OutputSpec InferSquaredDifference(std::span<const Tensor> in, const Attrs&) {
  internal::CheckSameDType(in[0], in[1]);
  internal::CheckDTypeIn(in[0], "x", DTypeSet::kNumeric);
  return {internal::BroadcastShape(in[0].shape(), in[1].shape()), in[0].dtype()};
}

// (x - y) once, then squared: the bits of TF's (x - y) * (x - y).
Tensor SquaredDifferenceKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec&) {
  const Tensor difference = RunKernel(kSubOp, in);
  return RunKernel(kSquareOp, {&difference, 1});
}
// TF's _SquaredDifferenceGrad: 2 grad (x - y), summed back to each input.
Grads SquaredDifferenceGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  const Tensor x_grad = Mul(Mul(internal::ScalarLike(2.0, grad), grad), Sub(x, y));
  std::optional<Tensor> dx, dy;
  if (call.NeedsGradient(0)) dx = internal::SumToInput(x_grad, x, y, 0);
  if (call.NeedsGradient(1)) dy = internal::SumToInput(Neg(x_grad), x, y, 1);
  return {dx, dy};
}

}  // namespace

const OpDef kAddOp = {
    .type = "AddV2",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kNumeric, false>,
    .compute = BinaryKernel<AddFn, DTypeSet::kNumeric, false>,
    .gradient = AddGradient,
    .node_name = "add",
};
const OpDef kSubOp = {
    .type = "Sub",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kNumeric, false>,
    .compute = BinaryKernel<SubFn, DTypeSet::kNumeric, false>,
    .gradient = SubGradient,
    .node_name = "sub",
};
const OpDef kMulOp = {
    .type = "Mul",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kNumeric, false>,
    .compute = BinaryKernel<MulFn, DTypeSet::kNumeric, false>,
    .gradient = MulGradient,
    .node_name = "mul",
};
const OpDef kDivOp = {
    .type = "RealDiv",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kNumeric, false>,
    .compute = BinaryKernel<DivFn, DTypeSet::kNumeric, false>,
    .gradient = DivGradient,
    .node_name = "truediv",
};
const OpDef kPowOp = {
    .type = "Pow",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kFloat, false>,
    .compute = BinaryKernel<PowFn, DTypeSet::kFloat, false>,
    .gradient = PowGradient,
};
const OpDef kMaximumOp = {
    .type = "Maximum",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kNumeric, false>,
    .compute = BinaryKernel<MaximumFn, DTypeSet::kNumeric, false>,
    .gradient = SelectGradient,
};
const OpDef kMinimumOp = {
    .type = "Minimum",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kNumeric, false>,
    .compute = BinaryKernel<MinimumFn, DTypeSet::kNumeric, false>,
    .gradient = SelectGradient,
};
const OpDef kEqualOp = {
    .type = "Equal",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kNumericOrBool, true>,
    .compute = BinaryKernel<EqualFn, DTypeSet::kNumericOrBool, true>,
    .gradient = nullptr,  // a comparison: no gradient, as tf.equal
};

Tensor Add(const Tensor& x, const Tensor& y) { return Execute(kAddOp, x, y); }
Tensor Sub(const Tensor& x, const Tensor& y) { return Execute(kSubOp, x, y); }
Tensor Mul(const Tensor& x, const Tensor& y) { return Execute(kMulOp, x, y); }
Tensor Div(const Tensor& x, const Tensor& y) { return Execute(kDivOp, x, y); }
Tensor Pow(const Tensor& x, const Tensor& y) { return Execute(kPowOp, x, y); }
Tensor Maximum(const Tensor& x, const Tensor& y) { return Execute(kMaximumOp, x, y); }
Tensor Minimum(const Tensor& x, const Tensor& y) { return Execute(kMinimumOp, x, y); }
Tensor Equal(const Tensor& x, const Tensor& y) { return Execute(kEqualOp, x, y); }

const OpDef kGreaterEqualOp = {
    .type = "GreaterEqual",
    .num_inputs = 2,
    .infer = InferGreaterEqual,
    .compute = GreaterEqualKernel,
    .gradient = nullptr,  // a comparison: no gradient, as TF
    .infer_partial = InferGreaterEqualPartial,
};
// T is t's dtype (input 0 is the bool condition).
constexpr TypeAttr kSelectTypes[] = {{"T", 1}};
const OpDef kSelectV2Op = {
    .type = "SelectV2",
    .num_inputs = 3,
    .infer = InferSelectV2,
    .compute = SelectV2Kernel,
    .gradient = SelectV2Gradient,
    .type_attrs = kSelectTypes,
    .infer_partial = InferSelectV2Partial,
};

const OpDef kSelectOp = {
    .type = "Select",
    .num_inputs = 3,
    .infer = InferSelect,
    .compute = SelectKernel,
    .gradient = SelectV1Gradient,
    .type_attrs = kSelectTypes,
    .infer_partial = InferSelectPartial,
};

Tensor GreaterEqual(const Tensor& x, const Tensor& y) { return Execute(kGreaterEqualOp, x, y); }
Tensor SelectV2(const Tensor& condition, const Tensor& t, const Tensor& e) {
  return Execute(kSelectV2Op, {condition, t, e});
}
Tensor Select(const Tensor& condition, const Tensor& t, const Tensor& e) {
  return Execute(kSelectOp, {condition, t, e});
}

const OpDef kSquaredDifferenceOp = {.type = "SquaredDifference",
                                    .num_inputs = 2,
                                    .infer = InferSquaredDifference,
                                    .compute = SquaredDifferenceKernel,
                                    .gradient = SquaredDifferenceGradient};
Tensor SquaredDifference(const Tensor& x, const Tensor& y) {
  return Execute(kSquaredDifferenceOp, {x, y});
}

// ---- Comparisons, logical ops, FloorDiv, FloorMod, AddN ---------------------------------

namespace {

using Grads = std::vector<std::optional<Tensor>>;

// TF's _FloorDivGrad: None, None.
Grads FloorDivGradient(const OpCall&, const Tensor&) { return {std::nullopt, std::nullopt}; }

// TF's _FloorModGrad: dx = grad, dy = -grad * floor_div(x, y), each summed
// back to its input's shape.
Grads FloorModGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  std::optional<Tensor> dx, dy;
  if (call.NeedsGradient(0)) dx = internal::SumToInput(grad, x, y, 0);
  if (call.NeedsGradient(1)) dy = internal::SumToInput(Mul(grad, Neg(FloorDiv(x, y))), x, y, 1);
  return {dx, dy};
}

OutputSpec InferAddN(std::span<const Tensor> in, const Attrs&) {
  if (in.empty()) throw InvalidArgumentError("AddN needs at least one input, got none");
  internal::CheckDTypeIn(in[0], "inputs[0]", DTypeSet::kNumeric);
  for (size_t i = 1; i < in.size(); ++i) {
    internal::CheckSameDType(in[0], in[i], "inputs[0]", StrCat("inputs[", i, "]"));
    if (in[i].shape() != in[0].shape()) {
      throw InvalidArgumentError(StrCat("inputs must have the same shape, got inputs[0] ",
                                        in[0].shape(), " and inputs[", i, "] ", in[i].shape()));
    }
  }
  return {in[0].shape(), in[0].dtype()};
}

// TF's AddN kernel's order of summation: the first N % 8 inputs (8 when N
// is a multiple of 8) added left to right, then each further group of 8
// summed left to right and added to the result (its Add8p functor).
Tensor AddNKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const int64_t n = spec.shape.num_elements();
  internal::Dispatch<DTypeSet::kNumeric>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = internal::MutableData<T>(out);
    std::vector<const T*> x;
    for (const Tensor& t : in) x.push_back(t.data<T>().data());
    size_t first = x.size() % 8;
    if (first == 0) first = std::min<size_t>(8, x.size());
    internal::ParallelFor(n, internal::kElementwiseGrain, internal::kParallelElementwiseMin,
                          [&](int64_t b, int64_t e) {
                            for (int64_t i = b; i < e; ++i) {
                              T sum = x[0][i];
                              for (size_t k = 1; k < first; ++k)
                                sum = static_cast<T>(sum + x[k][i]);
                              for (size_t g = first; g < x.size(); g += 8) {
                                T group = x[g][i];
                                for (size_t k = g + 1; k < g + 8; ++k)
                                  group = static_cast<T>(group + x[k][i]);
                                sum = static_cast<T>(sum + group);
                              }
                              o[i] = sum;
                            }
                          });
  });
  return out;
}

// Each input gets the gradient (TF's _AddNGrad).
Grads AddNGradient(const OpCall& call, const Tensor& grad) {
  return Grads(call.inputs.size(), grad);
}

}  // namespace

// LogicalAnd / LogicalOr have no type attr (bool inputs by signature).
constexpr TypeAttr kNoTypeAttrs[] = {{}};
// A comparison or logical op: bool output, no gradient.
template <typename Fn, DTypeSet kSet>
constexpr OpDef Comparison(std::string_view type) {
  return OpDef{.type = type,
               .num_inputs = 2,
               .infer = InferBinary<kSet, true>,
               .compute = BinaryKernel<Fn, kSet, true>,
               .gradient = nullptr,
               .type_attrs = kSet == DTypeSet::kBool ? std::span<const TypeAttr>(kNoTypeAttrs)
                                                     : std::span<const TypeAttr>()};
}
constexpr OpDef kGreaterOp = Comparison<GreaterFn, DTypeSet::kNumeric>("Greater");
constexpr OpDef kLessOp = Comparison<LessFn, DTypeSet::kNumeric>("Less");
constexpr OpDef kLessEqualOp = Comparison<LessEqualFn, DTypeSet::kNumeric>("LessEqual");
constexpr OpDef kNotEqualOp = Comparison<NotEqualFn, DTypeSet::kNumericOrBool>("NotEqual");
constexpr OpDef kLogicalAndOp = Comparison<LogicalAndFn, DTypeSet::kBool>("LogicalAnd");
constexpr OpDef kLogicalOrOp = Comparison<LogicalOrFn, DTypeSet::kBool>("LogicalOr");

const OpDef kFloorDivOp = {
    .type = "FloorDiv",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kNumeric, false>,
    .compute = BinaryKernel<FloorDivFn, DTypeSet::kNumeric, false>,
    .gradient = FloorDivGradient,
};
const OpDef kFloorModOp = {
    .type = "FloorMod",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kNumeric, false>,
    .compute = BinaryKernel<FloorModFn, DTypeSet::kNumeric, false>,
    .gradient = FloorModGradient,
};
const OpDef kAddNOp = {
    .type = "AddN",
    .num_inputs = OpDef::kVariadic,
    .infer = InferAddN,
    .compute = AddNKernel,
    .gradient = AddNGradient,
};

Tensor Greater(const Tensor& x, const Tensor& y) { return Execute(kGreaterOp, x, y); }
Tensor Less(const Tensor& x, const Tensor& y) { return Execute(kLessOp, x, y); }
Tensor LessEqual(const Tensor& x, const Tensor& y) { return Execute(kLessEqualOp, x, y); }
Tensor NotEqual(const Tensor& x, const Tensor& y) { return Execute(kNotEqualOp, x, y); }
Tensor LogicalAnd(const Tensor& x, const Tensor& y) { return Execute(kLogicalAndOp, x, y); }
Tensor LogicalOr(const Tensor& x, const Tensor& y) { return Execute(kLogicalOrOp, x, y); }
Tensor FloorDiv(const Tensor& x, const Tensor& y) { return Execute(kFloorDivOp, x, y); }
Tensor FloorMod(const Tensor& x, const Tensor& y) { return Execute(kFloorModOp, x, y); }
Tensor AddN(const std::vector<Tensor>& inputs) {
  return Execute(kAddNOp, std::span<const Tensor>(inputs.data(), inputs.size()));
}

// ---- DivNoNan (TF1 estimator graphs' metrics) -----------------------------------------

namespace {

struct DivNoNanFn {
  static auto Apply(const auto& a, const auto& b) {
    using T = typename std::decay_t<decltype(a)>::Scalar;
    return a.binaryExpr(b, [](T x, T y) { return y == T(0) ? T(0) : x / y; });
  }
};

Grads DivNoNanGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  return {IfNeeded(call, 0, [&] { return internal::SumToInput(DivNoNan(grad, y), x, y, 0); }),
          IfNeeded(call, 1, [&] {
            return internal::SumToInput(Mul(grad, DivNoNan(DivNoNan(Neg(x), y), y)), x, y, 1);
          })};
}

}  // namespace

const OpDef kDivNoNanOp = {.type = "DivNoNan",
                           .num_inputs = 2,
                           .infer = InferBinary<DTypeSet::kFloat, false>,
                           .compute = BinaryKernel<DivNoNanFn, DTypeSet::kFloat, false>,
                           .gradient = DivNoNanGradient};
Tensor DivNoNan(const Tensor& x, const Tensor& y) { return Execute(kDivNoNanOp, {x, y}); }

}  // namespace eager
