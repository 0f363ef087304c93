#include "ops/fused_lstm_cell.h"

#include <algorithm>
#include <vector>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/execute.h"
#include "ops/fp_contract_off.h"
#include "ops/internal/eigen_view.h"
#include "ops/parallel.h"
#include "ops/recorder.h"
#include "ops/shape_ops.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using Grads = std::vector<std::optional<Tensor>>;
using internal::ArrayMap;
using internal::ConstArrayMap;

// Rows per block of work: at least 16K elements of z, so a block is worth a
// thread's wake-up.
int64_t RowGrain(int64_t units) { return std::max<int64_t>(1, (int64_t{1} << 14) / (4 * units)); }

// units, after checking z [batch, 4 units] against state [batch, units].
int64_t CheckShapes(const Tensor& z, const Tensor& state, const char* op, const char* state_name) {
  const bool ok = z.rank() == 2 && state.rank() == 2 && z.shape().dim(1) % 4 == 0 &&
                  state.shape().dim(0) == z.shape().dim(0) &&
                  state.shape().dim(1) * 4 == z.shape().dim(1) && z.dtype() == state.dtype() &&
                  (z.dtype() == DType::kFloat32 || z.dtype() == DType::kFloat64);
  if (!ok) {
    throw InvalidArgumentError(StrCat(op, ": expected z [batch, 4 units] and ", state_name,
                                      " [batch, units], both float32 or float64; got z ", z.dtype(),
                                      " ", z.shape(), " and ", state_name, " ", state.dtype(), " ",
                                      state.shape()));
  }
  return state.shape().dim(1);
}

// Graph mode, some dimensions unknown (-1): the ranks and dtypes, and the
// dimensions both sides know.
OutputSpec InferPartial(std::span<const Tensor> in, const Attrs&) {
  const Tensor& z = in[0];
  const Tensor& state = in[1];
  const auto fits = [](int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; };
  const bool ok = z.rank() == 2 && state.rank() == 2 && z.dtype() == state.dtype() &&
                  fits(z.shape().dim(0), state.shape().dim(0)) &&
                  (z.shape().dim(1) < 0 || state.shape().dim(1) < 0 ||
                   z.shape().dim(1) == 4 * state.shape().dim(1));
  if (!ok) {
    throw InvalidArgumentError(
        StrCat("expected z [batch, 4 units] and a state [batch, units]; got z ", z.dtype(), " ",
               z.shape(), " and ", state.dtype(), " ", state.shape()));
  }
  return {state.shape(), state.dtype()};
}

OutputSpec InferState(std::span<const Tensor> in, const Attrs&) {
  CheckShapes(in[0], in[1], "_LstmCellState", "c_prev");
  return {in[1].shape(), in[1].dtype()};
}
OutputSpec InferOutput(std::span<const Tensor> in, const Attrs&) {
  CheckShapes(in[0], in[1], "_LstmCellOutput", "c");
  return {in[1].shape(), in[1].dtype()};
}

// Columns [gate * units, (gate + 1) * units) of z; StridedSlice, as
// autodiff/layers/recurrent.cc, so a graph with an unknown batch builds.
Tensor GateOf(const Tensor& z, int gate, int64_t units) {
  return StridedSlice(z, {0, gate * units}, {0, (gate + 1) * units}, {1, 1},
                      {.begin = 1, .end = 1});
}

// The unfused ops, for graph mode and float64 (whose Tanh kernel is not
// Eigen's, so the fused kernel's float64 path serves direct calls only).
Tensor UnfusedState(const Tensor& z, const Tensor& c_prev, int64_t units) {
  const Tensor i = Sigmoid(GateOf(z, 0, units));
  const Tensor f = Sigmoid(GateOf(z, 1, units));
  return Add(Mul(f, c_prev), Mul(i, Tanh(GateOf(z, 2, units))));
}
Tensor UnfusedOutput(const Tensor& z, const Tensor& c, int64_t units) {
  return Mul(Sigmoid(GateOf(z, 3, units)), Tanh(c));
}

// The Sigmoid and Tanh gradients of eager's ops, as Eigen expressions of
// the output y and its gradient dy: dy * (y * (1 - y)), dy * (1 - y * y).
template <typename A, typename B>
auto SigmoidBack(const A& y, const B& dy) {
  return dy * (y * (typename A::Scalar(1) - y));
}
template <typename A, typename B>
auto TanhBack(const A& y, const B& dy) {
  return dy * (typename A::Scalar(1) - y.square());
}
template <typename A>
auto SigmoidOf(const A& x) {
  // The Sigmoid kernel's expression.
  return (typename A::Scalar(1) + (-x).exp()).inverse();
}

template <typename T>
Tensor StateKernelImpl(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& z = in[0];
  const Tensor& c_prev = in[1];
  const int64_t units = c_prev.shape().dim(1);
  Tensor c = internal::NewTensor(spec.shape, spec.dtype);
  const T* zd = z.data<T>().data();
  const T* cp = c_prev.data<T>().data();
  T* cd = internal::MutableData<T>(c);
  internal::ParallelFor(c.shape().dim(0), RowGrain(units), 2, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* zr = zd + r * 4 * units;
      const ConstArrayMap<T> zi(zr, units), zf(zr + units, units), zc(zr + 2 * units, units);
      ArrayMap<T>(cd + r * units, units) =
          SigmoidOf(zf) * ConstArrayMap<T>(cp + r * units, units) + SigmoidOf(zi) * zc.tanh();
    }
  });
  return c;
}

Tensor StateKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  return in[0].dtype() == DType::kFloat64 ? StateKernelImpl<double>(in, attrs, spec)
                                          : StateKernelImpl<float>(in, attrs, spec);
}

template <typename T>
Tensor OutputKernelImpl(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& z = in[0];
  const Tensor& c = in[1];
  const int64_t units = c.shape().dim(1);
  Tensor h = internal::NewTensor(spec.shape, spec.dtype);
  const T* zd = z.data<T>().data();
  const T* cd = c.data<T>().data();
  T* hd = internal::MutableData<T>(h);
  internal::ParallelFor(h.shape().dim(0), RowGrain(units), 2, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const ConstArrayMap<T> zo(zd + r * 4 * units + 3 * units, units);
      ArrayMap<T>(hd + r * units, units) =
          SigmoidOf(zo) * ConstArrayMap<T>(cd + r * units, units).tanh();
    }
  });
  return h;
}

Tensor OutputKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  return in[0].dtype() == DType::kFloat64 ? OutputKernelImpl<double>(in, attrs, spec)
                                          : OutputKernelImpl<float>(in, attrs, spec);
}

// d/dz and d/dc_prev of c given dc. Fused: one pass writes both (z's o
// columns get zeros); recorded: the unfused ops' gradients as ops.
template <typename T>
Grads StateGradientImpl(const OpCall& call, const Tensor& dc) {
  const Tensor& z = call.inputs[0];
  const Tensor& c_prev = call.inputs[1];
  const int64_t units = c_prev.shape().dim(1);
  if (IsRecording()) {
    const Tensor i = Sigmoid(GateOf(z, 0, units));
    const Tensor f = Sigmoid(GateOf(z, 1, units));
    const Tensor g = Tanh(GateOf(z, 2, units));
    const Tensor one = Ones(Shape{}, z.dtype());
    const Tensor dz_i = Mul(Mul(dc, g), Mul(i, Sub(one, i)));
    const Tensor dz_f = Mul(Mul(dc, c_prev), Mul(f, Sub(one, f)));
    const Tensor dz_c = Mul(Mul(dc, i), Sub(one, Square(g)));
    return {Concat({dz_i, dz_f, dz_c, ZerosLike(dz_i)}, 1), Mul(dc, f)};
  }
  Tensor dz = internal::NewTensor(z.shape(), z.dtype());
  Tensor dc_prev = internal::NewTensor(c_prev.shape(), c_prev.dtype());
  const T* zd = z.data<T>().data();
  const T* cp = c_prev.data<T>().data();
  const T* g = dc.data<T>().data();
  T* dzd = internal::MutableData<T>(dz);
  T* dcp = internal::MutableData<T>(dc_prev);
  internal::ParallelFor(z.shape().dim(0), RowGrain(units), 2, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* zr = zd + r * 4 * units;
      T* dzr = dzd + r * 4 * units;
      const ConstArrayMap<T> zi(zr, units), zf(zr + units, units), zc(zr + 2 * units, units);
      const ConstArrayMap<T> grad(g + r * units, units), prev(cp + r * units, units);
      const Eigen::Array<T, Eigen::Dynamic, 1> i = SigmoidOf(zi), f = SigmoidOf(zf), t = zc.tanh();
      ArrayMap<T>(dzr, units) = SigmoidBack(i, grad * t);
      ArrayMap<T>(dzr + units, units) = SigmoidBack(f, grad * prev);
      ArrayMap<T>(dzr + 2 * units, units) = TanhBack(t, grad * i);
      ArrayMap<T>(dzr + 3 * units, units).setZero();
      ArrayMap<T>(dcp + r * units, units) = grad * f;
    }
  });
  return {std::move(dz), std::move(dc_prev)};
}

Grads StateGradient(const OpCall& call, const Tensor& dc) {
  return call.inputs[0].dtype() == DType::kFloat64 ? StateGradientImpl<double>(call, dc)
                                                   : StateGradientImpl<float>(call, dc);
}

// d/dz and d/dc of h given dh (z's i, f, c columns get zeros).
template <typename T>
Grads OutputGradientImpl(const OpCall& call, const Tensor& dh) {
  const Tensor& z = call.inputs[0];
  const Tensor& c = call.inputs[1];
  const int64_t units = c.shape().dim(1);
  if (IsRecording()) {
    const Tensor o = Sigmoid(GateOf(z, 3, units));
    const Tensor t = Tanh(c);
    const Tensor one = Ones(Shape{}, z.dtype());
    const Tensor dz_o = Mul(Mul(dh, t), Mul(o, Sub(one, o)));
    const Tensor zeros = ZerosLike(dz_o);
    return {Concat({zeros, zeros, zeros, dz_o}, 1), Mul(Mul(dh, o), Sub(one, Square(t)))};
  }
  Tensor dz = internal::NewTensor(z.shape(), z.dtype());
  Tensor dc = internal::NewTensor(c.shape(), c.dtype());
  const T* zd = z.data<T>().data();
  const T* cd = c.data<T>().data();
  const T* g = dh.data<T>().data();
  T* dzd = internal::MutableData<T>(dz);
  T* dcd = internal::MutableData<T>(dc);
  internal::ParallelFor(z.shape().dim(0), RowGrain(units), 2, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      T* dzr = dzd + r * 4 * units;
      const ConstArrayMap<T> zo(zd + r * 4 * units + 3 * units, units);
      const ConstArrayMap<T> grad(g + r * units, units);
      const Eigen::Array<T, Eigen::Dynamic, 1> o = SigmoidOf(zo);
      const Eigen::Array<T, Eigen::Dynamic, 1> t = ConstArrayMap<T>(cd + r * units, units).tanh();
      std::fill(dzr, dzr + 3 * units, T(0));
      ArrayMap<T>(dzr + 3 * units, units) = SigmoidBack(o, grad * t);
      ArrayMap<T>(dcd + r * units, units) = TanhBack(t, grad * o);
    }
  });
  return {std::move(dz), std::move(dc)};
}

Grads OutputGradient(const OpCall& call, const Tensor& dh) {
  return call.inputs[0].dtype() == DType::kFloat64 ? OutputGradientImpl<double>(call, dh)
                                                   : OutputGradientImpl<float>(call, dh);
}

bool Fused(const Tensor& z) { return Graph::Current() == nullptr && z.dtype() == DType::kFloat32; }

}  // namespace

const OpDef kLstmCellStateOp = {.type = "_LstmCellState",
                                .num_inputs = 2,
                                .infer = InferState,
                                .compute = StateKernel,
                                .gradient = StateGradient,
                                .infer_partial = InferPartial,
                                .eager_only = true};
const OpDef kLstmCellOutputOp = {.type = "_LstmCellOutput",
                                 .num_inputs = 2,
                                 .infer = InferOutput,
                                 .compute = OutputKernel,
                                 .gradient = OutputGradient,
                                 .infer_partial = InferPartial,
                                 .eager_only = true};

Tensor LstmCellState(const Tensor& z, const Tensor& c_prev) {
  const int64_t units = CheckShapes(z, c_prev, "_LstmCellState", "c_prev");
  if (!Fused(z)) return UnfusedState(z, c_prev, units);
  return Execute(kLstmCellStateOp, {z, c_prev});
}

Tensor LstmCellOutput(const Tensor& z, const Tensor& c) {
  const int64_t units = CheckShapes(z, c, "_LstmCellOutput", "c");
  if (!Fused(z)) return UnfusedOutput(z, c, units);
  return Execute(kLstmCellOutputOp, {z, c});
}

}  // namespace eager
