#include "ops/matmul.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>

#include "ops/execute.h"
#include "ops/internal/blocked_gemm.h"
#include "ops/internal/broadcast.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/eigen_view.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

// Integer matrix products wrap as TF's (two's complement): they are
// computed in the unsigned type of the same width, since signed overflow is
// undefined in C++. Floating point types stay themselves.
template <typename T, bool = std::is_integral_v<T>&& std::is_signed_v<T>>
struct WrappingOf {
  using type = T;
};
template <typename T>
struct WrappingOf<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
using Wrapping = typename WrappingOf<T>::type;

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;

OutputSpec InferMatMul(std::span<const Tensor> in, const Attrs& attrs) {
  const Tensor& a = in[0];
  const Tensor& b = in[1];
  internal::CheckSameDType(a, b, "a", "b");
  internal::CheckDTypeIn(a, "a", DTypeSet::kNumeric);
  if (a.rank() != 2 || b.rank() != 2) {
    throw InvalidArgumentError(
        StrCat("expected rank-2 matrices, got a: ", a.shape(), " and b: ", b.shape()));
  }
  const bool ta = attrs.GetBool("transpose_a");
  const bool tb = attrs.GetBool("transpose_b");
  const int64_t k_a = a.shape().dim(ta ? 0 : 1);
  const int64_t k_b = b.shape().dim(tb ? 1 : 0);
  if (k_a != k_b) {
    throw InvalidArgumentError(StrCat("Matrix size-incompatible: In[0]: ", a.shape(), ", In[1]: ",
                                      b.shape(), " (transpose_a=", ta, ", transpose_b=", tb,
                                      "): inner dimensions ", k_a, " and ", k_b, " differ"));
  }
  return {Shape{a.shape().dim(ta ? 1 : 0), b.shape().dim(tb ? 0 : 1)}, a.dtype()};
}

Tensor MatMulKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Tensor& a = in[0];
  const Tensor& b = in[1];
  const bool ta = attrs.GetBool("transpose_a");
  const bool tb = attrs.GetBool("transpose_b");
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const int64_t m = spec.shape.dim(0);
  const int64_t n = spec.shape.dim(1);
  const int64_t k = a.shape().dim(ta ? 0 : 1);
  internal::Dispatch<DTypeSet::kNumeric>(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto c = internal::MutableMatrixView<T>(out, m, n);
    if (m == 0 || n == 0) return;
    if (k == 0) {
      c.setZero();  // an empty inner dimension sums nothing
      return;
    }
    // float and double: OpenBLAS (benchmarks/README.md says why: 1.4-1.9x
    // Eigen's GEMM on this machine's AVX-512 cores), beta = 0, so the output
    // is written, never zero-filled first. Integers: Eigen's GEMM over
    // row-major maps; a transposed operand is a transposed view, never a copy.
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* ap = a.data<T>().data();
      const T* bp = b.data<T>().data();
      T* cp = internal::MutableData<T>(out);
      const int64_t lda = a.shape().dim(1);
      const int64_t ldb = b.shape().dim(1);
      // The larger output dimension is cut into blocks, each one
      // single-threaded GEMM, chosen so that any thread count gives the
      // same bits (ops/internal/gemm.h).
      internal::BlockedGemm<T>(ta, tb, m, n, k, ap, lda, bp, ldb, cp,
                               [](int64_t, int64_t, int64_t, int64_t) {});
      return;
    }
    auto am = internal::MatrixView<T>(a, a.shape().dim(0), a.shape().dim(1));
    auto bm = internal::MatrixView<T>(b, b.shape().dim(0), b.shape().dim(1));
    if (!ta && !tb) {
      c.noalias() = am * bm;
    } else if (!ta && tb) {
      c.noalias() = am * bm.transpose();
    } else if (ta && !tb) {
      c.noalias() = am.transpose() * bm;
    } else {
      c.noalias() = am.transpose() * bm.transpose();
    }
  });
  return out;
}

// TF's _MatMulGrad, one case per transpose combination, so that no explicit
// transpose is ever materialized. An input nobody differentiates (the
// images of a first layer) costs nothing.
Grads MatMulGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& a = call.inputs[0];
  const Tensor& b = call.inputs[1];
  const bool ta = call.attrs.GetBool("transpose_a");
  const bool tb = call.attrs.GetBool("transpose_b");
  Grads grads(2);
  if (call.NeedsGradient(0)) {
    if (!ta) {
      grads[0] = tb ? MatMul(grad, b, false, false) : MatMul(grad, b, false, true);
    } else {
      grads[0] = tb ? MatMul(b, grad, true, true) : MatMul(b, grad, false, true);
    }
  }
  if (call.NeedsGradient(1)) {
    if (!tb) {
      grads[1] = ta ? MatMul(a, grad, false, false) : MatMul(a, grad, true, false);
    } else {
      grads[1] = ta ? MatMul(grad, a, true, true) : MatMul(grad, a, true, false);
    }
  }
  return grads;
}

}  // namespace

const OpDef kMatMulOp = {.type = "MatMul",
                         .num_inputs = 2,
                         .infer = InferMatMul,
                         .compute = MatMulKernel,
                         .gradient = MatMulGradient};

Tensor MatMul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  return Execute(kMatMulOp, a, b,
                 Attrs{{"transpose_a", transpose_a}, {"transpose_b", transpose_b}});
}

// ---- BatchMatMulV2 -----------------------------------------------------------------------
// Keras's attention and EinsumDense graphs: matrix products over the last
// two dimensions, the batch dimensions before them broadcast (NumPy's
// matmul), adj_x / adj_y transposing a side (real dtypes: the adjoint).

namespace {

Shape BatchPart(const Shape& s) {
  return Shape(std::span<const int64_t>(s.dims().data(), static_cast<size_t>(s.rank() - 2)));
}

OutputSpec InferBatchMatMul(std::span<const Tensor> in, const Attrs& attrs) {
  const Tensor& x = in[0];
  const Tensor& y = in[1];
  internal::CheckSameDType(x, y, "x", "y");
  internal::CheckDTypeIn(x, "x", DTypeSet::kNumeric);
  if (x.rank() < 2 || y.rank() < 2) {
    throw InvalidArgumentError(
        StrCat("x and y must have rank >= 2, got x: ", x.shape(), " and y: ", y.shape()));
  }
  const bool ax = attrs.GetBool("adj_x");
  const bool ay = attrs.GetBool("adj_y");
  const int64_t k_x = x.shape().dim(x.rank() - (ax ? 2 : 1));
  const int64_t k_y = y.shape().dim(y.rank() - (ay ? 1 : 2));
  if (k_x != k_y) {
    throw InvalidArgumentError(StrCat("Matrix size-incompatible: In[0]: ", x.shape(),
                                      ", In[1]: ", y.shape(), " (adj_x=", ax, ", adj_y=", ay,
                                      "): inner dimensions ", k_x, " and ", k_y, " differ"));
  }
  std::vector<int64_t> dims =
      internal::BroadcastShape(BatchPart(x.shape()), BatchPart(y.shape())).ToVector();
  dims.push_back(x.shape().dim(x.rank() - (ax ? 1 : 2)));
  dims.push_back(y.shape().dim(y.rank() - (ay ? 2 : 1)));
  return {Shape(dims), x.dtype()};
}

// The offset (in matrices) of batch `b` of the output in an operand of
// batch shape `part`, broadcast to the output's batch shape `out`.
int64_t BatchOffset(int64_t b, const Shape& part, const Shape& out) {
  int64_t offset = 0, stride = 1;
  for (int d = out.rank() - 1; d >= 0; --d) {
    const int64_t index = b % out.dim(d);
    b /= out.dim(d);
    const int pd = part.rank() - (out.rank() - d);
    if (pd < 0) continue;
    if (part.dim(pd) != 1) offset += index * stride;
    stride *= part.dim(pd);
  }
  return offset;
}

Tensor BatchMatMulKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Tensor& x = in[0];
  const Tensor& y = in[1];
  const bool ax = attrs.GetBool("adj_x");
  const bool ay = attrs.GetBool("adj_y");
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const int r = spec.shape.rank();
  const int64_t m = spec.shape.dim(r - 2);
  const int64_t n = spec.shape.dim(r - 1);
  const int64_t k = x.shape().dim(x.rank() - (ax ? 2 : 1));
  const int64_t xr = x.shape().dim(x.rank() - 2), xc = x.shape().dim(x.rank() - 1);
  const int64_t yr = y.shape().dim(y.rank() - 2), yc = y.shape().dim(y.rank() - 1);
  const Shape out_batch = BatchPart(spec.shape);
  const Shape x_batch = BatchPart(x.shape());
  const Shape y_batch = BatchPart(y.shape());
  const int64_t batches = out_batch.num_elements();
  internal::Dispatch<DTypeSet::kNumeric>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* cp = internal::MutableData<T>(out);
    if (m == 0 || n == 0) return;
    for (int64_t b = 0; b < batches; ++b) {
      const T* ap = x.data<T>().data() + BatchOffset(b, x_batch, out_batch) * xr * xc;
      const T* bp = y.data<T>().data() + BatchOffset(b, y_batch, out_batch) * yr * yc;
      T* c = cp + b * m * n;
      if (k == 0) {
        std::fill(c, c + m * n, T(0));
        continue;
      }
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        internal::BlockedGemm<T>(ax, ay, m, n, k, ap, xc, bp, yc, c,
                                 [](int64_t, int64_t, int64_t, int64_t) {});
      } else {
        using U = Wrapping<T>;
        using WrapMatrix = Eigen::Matrix<U, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
        Eigen::Map<const WrapMatrix> am(reinterpret_cast<const U*>(ap), xr, xc);
        Eigen::Map<const WrapMatrix> bm(reinterpret_cast<const U*>(bp), yr, yc);
        Eigen::Map<WrapMatrix> cm(reinterpret_cast<U*>(c), m, n);
        if (!ax && !ay) {
          cm.noalias() = am * bm;
        } else if (!ax && ay) {
          cm.noalias() = am * bm.transpose();
        } else if (ax && !ay) {
          cm.noalias() = am.transpose() * bm;
        } else {
          cm.noalias() = am.transpose() * bm.transpose();
        }
      }
    }
  });
  return out;
}

// The gradient of an operand summed over the batch dimensions it was
// broadcast along (TF's reduce_sum over broadcast_gradient_args).
Tensor SumToOperand(const Tensor& g, const Tensor& operand) {
  if (g.shape() == operand.shape()) return g;
  if (!operand.shape().IsFullyDefined() || !g.shape().IsFullyDefined()) {
    throw UnimplementedError(StrCat("BatchMatMulV2's gradient over broadcast batch dimensions ",
                                    "needs shapes known when the graph is built; got ",
                                    operand.shape(), " and ", g.shape()));
  }
  return internal::SumToShape(g, operand.shape());
}

// TF's _BatchMatMulV2 gradient, one case per adjoint combination.
Grads BatchMatMulGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  const bool ax = call.attrs.GetBool("adj_x");
  const bool ay = call.attrs.GetBool("adj_y");
  Grads grads(2);
  if (call.NeedsGradient(0)) {
    const Tensor gx =
        !ax ? (ay ? BatchMatMulV2(grad, y, false, false) : BatchMatMulV2(grad, y, false, true))
            : (ay ? BatchMatMulV2(y, grad, true, true) : BatchMatMulV2(y, grad, false, true));
    grads[0] = SumToOperand(gx, x);
  }
  if (call.NeedsGradient(1)) {
    const Tensor gy =
        !ay ? (ax ? BatchMatMulV2(x, grad, false, false) : BatchMatMulV2(x, grad, true, false))
            : (ax ? BatchMatMulV2(grad, x, true, true) : BatchMatMulV2(grad, x, true, false));
    grads[1] = SumToOperand(gy, y);
  }
  return grads;
}

}  // namespace

const OpDef kBatchMatMulV2Op = {.type = "BatchMatMulV2",
                                .num_inputs = 2,
                                .infer = InferBatchMatMul,
                                .compute = BatchMatMulKernel,
                                .gradient = BatchMatMulGradient};

Tensor BatchMatMulV2(const Tensor& x, const Tensor& y, bool adj_x, bool adj_y) {
  return Execute(kBatchMatMulV2Op, x, y, Attrs{{"adj_x", adj_x}, {"adj_y", adj_y}});
}

// ---- Einsum --------------------------------------------------------------------------------
// Keras's EinsumDense and MultiHeadAttention graphs ("abc,cd->abd",
// "aecd,abcd->acbe"). One generic kernel: each operand is rearranged
// (copied, broadcast dimensions materialized) into [batch, free, contracted]
// order, letters only one operand has and the output lacks are summed away
// first, and the product is one GEMM per batch entry, as BatchMatMulV2's;
// the result is rearranged into the output's order.

namespace {

constexpr int kEllipsisMark = -1;  // "..." in a parsed subscript
constexpr int kLetters = 52;       // a-z are labels 0..25, A-Z 26..51

int LetterLabel(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}
char LabelLetter(int label) {
  return static_cast<char>(label < 26 ? 'a' + label : 'A' + (label - 26));
}

[[noreturn]] void BadEquation(std::string_view equation, std::string_view what) {
  throw InvalidArgumentError(StrCat("Einsum equation '", equation, "': ", what));
}

// An equation's subscripts: per operand and for the output, one entry per
// letter (its label) or kEllipsisMark.
struct EinsumSubscripts {
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
};

std::vector<int> ParseSubscript(std::string_view equation, std::string_view s,
                                const std::string& which) {
  std::vector<int> labels;
  bool ellipsis = false;
  for (size_t i = 0; i < s.size();) {
    if (s.substr(i, 3) == "...") {
      if (ellipsis) BadEquation(equation, StrCat(which, " has more than one '...'"));
      ellipsis = true;
      labels.push_back(kEllipsisMark);
      i += 3;
      continue;
    }
    const int label = LetterLabel(s[i]);
    if (label < 0) {
      BadEquation(equation, StrCat(which, " has '", std::string(1, s[i]),
                                   "', which is neither a letter nor '...'"));
    }
    labels.push_back(label);
    ++i;
  }
  return labels;
}

bool HasLabel(const std::vector<int>& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

EinsumSubscripts ParseEinsum(std::string_view equation, size_t num_operands) {
  const size_t arrow = equation.find("->");
  if (arrow == std::string_view::npos || equation.find("->", arrow + 1) != std::string_view::npos) {
    BadEquation(equation, "expected exactly one '->'");
  }
  std::vector<std::string_view> lhs;
  std::string_view rest = equation.substr(0, arrow);
  for (size_t comma; (comma = rest.find(',')) != std::string_view::npos;) {
    lhs.push_back(rest.substr(0, comma));
    rest = rest.substr(comma + 1);
  }
  lhs.push_back(rest);
  if (lhs.size() != num_operands) {
    BadEquation(equation,
                StrCat("it names ", lhs.size(), " operand(s) but ", num_operands, " were given"));
  }
  if (num_operands != 1 && num_operands != 2) {
    BadEquation(equation, StrCat("Einsum takes 1 or 2 operands, got ", num_operands));
  }
  EinsumSubscripts parsed;
  for (size_t k = 0; k < lhs.size(); ++k) {
    const std::string which = StrCat("operand ", k, " ('", lhs[k], "')");
    std::vector<int> labels = ParseSubscript(equation, lhs[k], which);
    for (size_t i = 0; i < labels.size(); ++i) {
      if (labels[i] == kEllipsisMark) continue;
      if (std::find(labels.begin() + static_cast<std::ptrdiff_t>(i) + 1, labels.end(), labels[i]) !=
          labels.end()) {
        throw UnimplementedError(StrCat("Einsum equation '", equation, "': ", which, " repeats '",
                                        std::string(1, LabelLetter(labels[i])),
                                        "' (a diagonal), which eager does not implement"));
      }
    }
    parsed.inputs.push_back(std::move(labels));
  }
  const std::string_view out = equation.substr(arrow + 2);
  parsed.output = ParseSubscript(equation, out, StrCat("the output ('", out, "')"));
  for (size_t i = 0; i < parsed.output.size(); ++i) {
    const int label = parsed.output[i];
    if (label == kEllipsisMark) continue;
    const std::string letter(1, LabelLetter(label));
    if (std::find(parsed.output.begin() + static_cast<std::ptrdiff_t>(i) + 1, parsed.output.end(),
                  label) != parsed.output.end()) {
      BadEquation(equation, StrCat("the output repeats '", letter, "'"));
    }
    if (std::none_of(parsed.inputs.begin(), parsed.inputs.end(),
                     [&](const std::vector<int>& in) { return HasLabel(in, label); })) {
      BadEquation(equation, StrCat("the output's '", letter, "' is in no operand"));
    }
  }
  return parsed;
}

// The subscripts resolved against the operands' shapes: "..." expanded into
// labels kLetters + j, one per broadcast dimension (right-aligned, as NumPy
// broadcasts), and every label's size.
struct EinsumLabels {
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
  std::vector<int64_t> size;  // by label
};

EinsumLabels ResolveEinsum(std::string_view equation, const EinsumSubscripts& parsed,
                           std::span<const Tensor> in) {
  const size_t n = parsed.inputs.size();
  std::vector<int> ellipsis_rank(n, 0);
  int ellipsis = 0;  // the broadcast ellipsis's rank
  for (size_t k = 0; k < n; ++k) {
    const std::vector<int>& labels = parsed.inputs[k];
    const bool has_ellipsis = HasLabel(labels, kEllipsisMark);
    const int letters = static_cast<int>(labels.size()) - (has_ellipsis ? 1 : 0);
    const int rank = in[k].rank();
    if (has_ellipsis ? rank < letters : rank != letters) {
      BadEquation(equation, StrCat("operand ", k, " has shape ", in[k].shape(), " but its ",
                                   "subscripts name ", has_ellipsis ? "at least " : "", letters,
                                   " dimension(s)"));
    }
    ellipsis_rank[k] = rank - letters;
    ellipsis = std::max(ellipsis, ellipsis_rank[k]);
  }
  EinsumLabels r;
  r.size.assign(static_cast<size_t>(kLetters) + static_cast<size_t>(ellipsis), -1);
  const auto expand = [&](const std::vector<int>& labels, int rank) {
    std::vector<int> out;
    for (int label : labels) {
      if (label != kEllipsisMark) {
        out.push_back(label);
        continue;
      }
      for (int j = ellipsis - rank; j < ellipsis; ++j) out.push_back(kLetters + j);
    }
    return out;
  };
  for (size_t k = 0; k < n; ++k) {
    std::vector<int> labels = expand(parsed.inputs[k], ellipsis_rank[k]);
    for (int axis = 0; axis < in[k].rank(); ++axis) {
      const int label = labels[static_cast<size_t>(axis)];
      const int64_t d = in[k].shape().dim(axis);
      int64_t& size = r.size[static_cast<size_t>(label)];
      if (label < kLetters) {
        if (size >= 0 && size != d) {
          BadEquation(equation, StrCat("operand ", k, " has size ", d, " for '",
                                       std::string(1, LabelLetter(label)), "' (dimension ", axis,
                                       " of ", in[k].shape(), ") but another operand has ", size));
        }
        size = d;
      } else if (size < 0 || size == 1) {
        size = d;
      } else if (d != 1 && d != size) {
        BadEquation(equation, StrCat("operand ", k, "'s '...' dimensions of ", in[k].shape(),
                                     " do not broadcast with the other operand's"));
      }
    }
    r.inputs.push_back(std::move(labels));
  }
  if (ellipsis > 0 && !HasLabel(parsed.output, kEllipsisMark)) {
    BadEquation(equation, StrCat("the operands have ", ellipsis, " broadcast dimension(s) ",
                                 "under '...' but the output has no '...'"));
  }
  r.output = expand(parsed.output, ellipsis);
  return r;
}

OutputSpec InferEinsum(std::span<const Tensor> in, const Attrs& attrs) {
  const std::string& equation = attrs.GetString("equation");
  for (size_t k = 0; k < in.size(); ++k) {
    internal::CheckDTypeIn(in[k], StrCat("Einsum operand ", k).c_str(), DTypeSet::kNumeric);
    if (k > 0) internal::CheckSameDType(in[0], in[k], "operand 0", "operand 1");
  }
  const EinsumLabels labels = ResolveEinsum(equation, ParseEinsum(equation, in.size()), in);
  std::vector<int64_t> dims;
  for (int label : labels.output) dims.push_back(labels.size[static_cast<size_t>(label)]);
  return {Shape(dims), in[0].dtype()};
}

// Writes `src` (of shape `shape`, labels `labels`) into `dst` laid out as
// `order` (sizes by label): a label `src` lacks, or has of size 1 where the
// size is larger, is broadcast.
template <typename T>
void Arrange(const T* src, const Shape& shape, const std::vector<int>& labels,
             const std::vector<int>& order, const std::vector<int64_t>& size, T* dst) {
  const size_t r = order.size();
  std::vector<int64_t> dims(r), strides(r, 0);
  int64_t total = 1;
  for (size_t i = 0; i < r; ++i) {
    dims[i] = size[static_cast<size_t>(order[i])];
    total *= dims[i];
  }
  if (total == 0) return;
  int64_t stride = 1;
  for (int axis = shape.rank() - 1; axis >= 0; --axis) {
    const auto pos = std::find(order.begin(), order.end(), labels[static_cast<size_t>(axis)]);
    if (pos != order.end() && shape.dim(axis) != 1) strides[pos - order.begin()] = stride;
    stride *= shape.dim(axis);
  }
  std::vector<int64_t> index(r, 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < total; ++i) {
    dst[i] = src[offset];
    for (size_t d = r; d-- > 0;) {
      offset += strides[d];
      if (++index[d] < dims[d]) break;
      offset -= strides[d] * dims[d];
      index[d] = 0;
    }
  }
}

int64_t SizeOf(const std::vector<int>& labels, const std::vector<int64_t>& size) {
  int64_t n = 1;
  for (int label : labels) n *= size[static_cast<size_t>(label)];
  return n;
}

std::vector<int> Concatenated(std::initializer_list<const std::vector<int>*> parts) {
  std::vector<int> all;
  for (const std::vector<int>* p : parts) all.insert(all.end(), p->begin(), p->end());
  return all;
}

// `src` rearranged as `order` + `summed`, the `summed` labels summed away:
// [SizeOf(order)] values.
template <typename T>
std::vector<T> ArrangeAndSum(const Tensor& src, const std::vector<int>& labels,
                             const std::vector<int>& order, const std::vector<int>& summed,
                             const std::vector<int64_t>& size) {
  const int64_t rows = SizeOf(order, size);
  const int64_t inner = SizeOf(summed, size);
  std::vector<T> all(static_cast<size_t>(rows * inner));
  Arrange<T>(src.data<T>().data(), src.shape(), labels, Concatenated({&order, &summed}), size,
             all.data());
  if (inner == 1) return all;
  std::vector<T> sums(static_cast<size_t>(rows), T(0));
  using U = Wrapping<T>;  // integer sums wrap, as TF's
  for (int64_t i = 0; i < rows; ++i) {
    U sum = U(0);
    for (int64_t j = 0; j < inner; ++j) sum += static_cast<U>(all[i * inner + j]);
    sums[i] = static_cast<T>(sum);
  }
  return sums;
}

Tensor EinsumKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const std::string& equation = attrs.GetString("equation");
  const EinsumLabels r = ResolveEinsum(equation, ParseEinsum(equation, in.size()), in);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const std::vector<int>& la = r.inputs[0];
  const std::vector<int>& lo = r.output;
  internal::Dispatch<DTypeSet::kNumeric>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = internal::MutableData<T>(out);
    if (in.size() == 1) {
      std::vector<int> summed;
      for (int label : la) {
        if (!HasLabel(lo, label)) summed.push_back(label);
      }
      const std::vector<T> v = ArrangeAndSum<T>(in[0], la, lo, summed, r.size);
      std::copy(v.begin(), v.end(), dst);
      return;
    }
    const std::vector<int>& lb = r.inputs[1];
    // batch: in both operands and the output; free_a / free_b: in one
    // operand and the output; contracted: in both, not the output; only_a /
    // only_b: in one operand alone, summed before the product.
    std::vector<int> batch, free_a, free_b, contracted, only_a, only_b;
    for (int label : lo) {
      const bool a = HasLabel(la, label), b = HasLabel(lb, label);
      (a && b ? batch : a ? free_a : free_b).push_back(label);
    }
    for (int label : la) {
      if (HasLabel(lo, label)) continue;
      (HasLabel(lb, label) ? contracted : only_a).push_back(label);
    }
    for (int label : lb) {
      if (!HasLabel(lo, label) && !HasLabel(la, label)) only_b.push_back(label);
    }
    const std::vector<T> a =
        ArrangeAndSum<T>(in[0], la, Concatenated({&batch, &free_a, &contracted}), only_a, r.size);
    const std::vector<T> b =
        ArrangeAndSum<T>(in[1], lb, Concatenated({&batch, &contracted, &free_b}), only_b, r.size);
    const int64_t batches = SizeOf(batch, r.size), m = SizeOf(free_a, r.size),
                  n = SizeOf(free_b, r.size), k = SizeOf(contracted, r.size);
    std::vector<T> c(static_cast<size_t>(batches * m * n), T(0));
    if (m > 0 && n > 0 && k > 0) {
      for (int64_t i = 0; i < batches; ++i) {
        const T* ap = a.data() + i * m * k;
        const T* bp = b.data() + i * k * n;
        T* cp = c.data() + i * m * n;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
          internal::BlockedGemm<T>(false, false, m, n, k, ap, k, bp, n, cp,
                                   [](int64_t, int64_t, int64_t, int64_t) {});
        } else {
          using U = Wrapping<T>;
          using WrapMatrix = Eigen::Matrix<U, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
          Eigen::Map<WrapMatrix>(reinterpret_cast<U*>(cp), m, n).noalias() =
              Eigen::Map<const WrapMatrix>(reinterpret_cast<const U*>(ap), m, k) *
              Eigen::Map<const WrapMatrix>(reinterpret_cast<const U*>(bp), k, n);
        }
      }
    }
    const std::vector<int> c_labels = Concatenated({&batch, &free_a, &free_b});
    std::vector<int64_t> c_dims;
    c_dims.reserve(c_labels.size());
    for (int label : c_labels) c_dims.push_back(r.size[static_cast<size_t>(label)]);
    Arrange<T>(c.data(), Shape(c_dims), c_labels, lo, r.size, dst);
  });
  return out;
}

std::string SubscriptString(const std::vector<int>& labels) {
  std::string s;
  for (int label : labels) {
    if (label == kEllipsisMark) {
      s += "...";
    } else {
      s += LabelLetter(label);
    }
  }
  return s;
}

// TF's _EinsumGrad: an operand's gradient is the einsum of the output's
// gradient with the other operand, into the operand's own subscripts less
// the letters the forward summed away alone; those are broadcast back, and
// '...' dimensions the operand was broadcast along are summed.
Grads EinsumGradient(const OpCall& call, const Tensor& grad) {
  const std::string& equation = call.attrs.GetString("equation");
  const EinsumSubscripts parsed = ParseEinsum(equation, call.inputs.size());
  const size_t n = call.inputs.size();
  Grads grads(n);
  for (size_t i = 0; i < n; ++i) {
    if (!call.NeedsGradient(i)) continue;
    const Tensor& x = call.inputs[i];
    const std::vector<int>& own = parsed.inputs[i];
    const std::vector<int>* other = n == 2 ? &parsed.inputs[1 - i] : nullptr;
    std::vector<int> kept;  // own labels the output or the other operand has
    for (int label : own) {
      if (label == kEllipsisMark || HasLabel(parsed.output, label) ||
          (other != nullptr && HasLabel(*other, label))) {
        kept.push_back(label);
      }
    }
    Tensor g =
        other == nullptr
            ? Einsum(StrCat(SubscriptString(parsed.output), "->", SubscriptString(kept)), {grad})
            : Einsum(StrCat(SubscriptString(parsed.output), ",", SubscriptString(*other), "->",
                            SubscriptString(kept)),
                     {grad, call.inputs[1 - i]});
    if (g.shape() == x.shape()) {
      grads[i] = g;
      continue;
    }
    if (!g.shape().IsFullyDefined() || !x.shape().IsFullyDefined()) {
      throw UnimplementedError(StrCat("Einsum's gradient for '", equation, "' needs shapes ",
                                      "known when the graph is built; got ", x.shape(), " and ",
                                      g.shape()));
    }
    // x's shape with 1 for the summed-away letters: g's shape once its
    // '...' part is summed to x's.
    const int ellipsis_rank =
        x.rank() - static_cast<int>(own.size()) + (HasLabel(own, kEllipsisMark) ? 1 : 0);
    std::vector<int64_t> reduced;
    int axis = 0;  // in x
    int g_axis = 0;
    std::vector<int64_t> sum_axes;
    for (int label : own) {
      if (label == kEllipsisMark) {
        const int g_ellipsis = g.rank() - (static_cast<int>(kept.size()) - 1);
        for (int j = 0; j < g_ellipsis - ellipsis_rank; ++j) sum_axes.push_back(g_axis++);
        for (int j = 0; j < ellipsis_rank; ++j, ++axis, ++g_axis) {
          const int64_t d = x.shape().dim(axis);
          if (d == 1 && g.shape().dim(g_axis) != 1) sum_axes.push_back(g_axis);
          reduced.push_back(d);
        }
      } else if (HasLabel(kept, label)) {
        reduced.push_back(x.shape().dim(axis++));
        ++g_axis;
      } else {
        reduced.push_back(1);
        ++axis;
      }
    }
    if (!sum_axes.empty()) g = ReduceSum(g, sum_axes, /*keepdims=*/true);
    g = Reshape(g, reduced);
    if (Shape(reduced) != x.shape()) g = BroadcastTo(g, x.shape());
    grads[i] = g;
  }
  return grads;
}

}  // namespace

const OpDef kEinsumOp = {.type = "Einsum",
                         .num_inputs = OpDef::kVariadic,
                         .infer = InferEinsum,
                         .compute = EinsumKernel,
                         .gradient = EinsumGradient};

Tensor Einsum(std::string_view equation, const std::vector<Tensor>& inputs) {
  return Execute(kEinsumOp, std::span<const Tensor>(inputs.data(), inputs.size()),
                 Attrs{{"equation", std::string(equation)}});
}

}  // namespace eager
