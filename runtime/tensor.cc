#include "runtime/tensor.h"

#include <atomic>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>

#include "runtime/graph.h"
#include "runtime/internal/buffer.h"
#include "runtime/tensor_access.h"
#include "runtime/variant.h"

namespace eager {
namespace {

template <typename T>
Tensor MakeScalar(T value) {
  Tensor t = internal::NewTensor(Shape{}, DTypeOf<T>());
  *internal::MutableData<T>(t) = std::move(value);
  return t;
}

// Floats print as the shortest text that reads back to the same value, with
// ".0" on integral values, as NumPy and TensorFlow print them: 0.10989987, 10.0.
template <typename T>
void AppendFloat(std::string& out, T value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  std::string_view text(buf, static_cast<size_t>(end - buf));
  out += text;
  if (text.find_first_of(".eEn") == std::string_view::npos) out += ".0";
}

// numpy prints float16 as the shortest decimal that reads back to the same
// float16 (np.float16(0.1) is "0.1", 65504 is "65500.0").
void AppendHalf(std::string& out, Half value) {
  const float f = float(value);
  if (std::isfinite(f)) {
    char buf[32];
    for (int digits = 1; digits <= 9; ++digits) {
      const auto [end, ec] =
          std::to_chars(buf, buf + sizeof(buf), f, std::chars_format::scientific, digits - 1);
      double decimal = 0;
      std::from_chars(buf, end, decimal);
      if (Half(static_cast<float>(decimal)).bits == value.bits) {
        AppendFloat(out, decimal);  // a short decimal: its shortest double text
        return;
      }
    }
  }
  AppendFloat(out, f);
}

// TF's numpy bfloat16 (ml_dtypes) prints a C++ stream's "%g", six significant
// digits: 0.333984, 1, 9.98378e-07.
void AppendBFloat16(std::string& out, BFloat16 value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", static_cast<double>(float(value)));
  out += buf;
}

// A complex part as Python prints one: shortest text, no ".0" on integers.
template <typename T>
void AppendComplexPart(std::string& out, T value) {
  if (std::isnan(value)) {
    out += "nan";
    return;
  }
  if (std::isinf(value)) {
    out += value < 0 ? "-inf" : "inf";
    return;
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, end);
}

// numpy's complex scalar text: "(1+2j)", "(0.5-0.25j)", "2j" for a zero real part.
template <typename T>
void AppendComplex(std::string& out, std::complex<T> value) {
  const bool pure_imaginary = value.real() == 0 && !std::signbit(value.real());
  if (!pure_imaginary) {
    out += "(";
    AppendComplexPart(out, value.real());
    if (!std::signbit(value.imag()) || std::isnan(value.imag())) out += "+";
  }
  AppendComplexPart(out, value.imag());
  out += "j";
  if (!pure_imaginary) out += ")";
}

template <typename T>
void AppendElement(std::string& out, const T& value) {
  if constexpr (std::is_floating_point_v<T>) {
    AppendFloat(out, value);
  } else if constexpr (std::is_same_v<T, Half>) {
    AppendHalf(out, value);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    AppendBFloat16(out, value);
  } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                       std::is_same_v<T, std::complex<double>>) {
    AppendComplex(out, value);
  } else if constexpr (std::is_same_v<T, bool>) {
    out += value ? "True" : "False";
  } else if constexpr (std::is_same_v<T, std::string>) {
    out += "b'";
    for (unsigned char c : value) {
      if (c == '\'' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c >= 0x20 && c < 0x7f) {
        out += static_cast<char>(c);
      } else {
        static constexpr char kHex[] = "0123456789abcdef";
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
    }
    out += "'";
  } else if constexpr (std::is_same_v<T, Variant>) {
    out += value.DebugString();
  } else {
    out += std::to_string(value);  // int8 prints as a number, not a character
  }
}

template <typename T>
void AppendNested(std::string& out, std::span<const T> data, std::span<const int64_t> dims,
                  int64_t& budget) {
  if (dims.empty()) {
    AppendElement(out, data[0]);
    --budget;
    return;
  }
  const int64_t n = dims[0];
  const size_t stride = n == 0 ? 0 : data.size() / static_cast<size_t>(n);
  out += "[";
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out += ", ";
    if (budget <= 0) {
      out += "...";
      break;
    }
    AppendNested(out, data.subspan(static_cast<size_t>(i) * stride, stride), dims.subspan(1),
                 budget);
  }
  out += "]";
}

}  // namespace

Tensor::Tensor() : Tensor(0.0f) {}
Tensor::Tensor(float value) : Tensor(MakeScalar(value)) {}
Tensor::Tensor(double value) : Tensor(MakeScalar(value)) {}
Tensor::Tensor(int32_t value) : Tensor(MakeScalar(value)) {}
Tensor::Tensor(int64_t value) : Tensor(MakeScalar(value)) {}
Tensor Tensor::BoolScalar(bool value) { return MakeScalar(value); }
Tensor::Tensor(std::string value) : Tensor(MakeScalar(std::move(value))) {}

Tensor::Tensor(std::shared_ptr<const internal::Buffer> buffer, const Shape& shape, DType dtype,
               TensorId id)
    : buffer_(std::move(buffer)),
      data_(buffer_ == nullptr ? nullptr : buffer_->data()),
      shape_(shape),
      dtype_(dtype),
      id_(id) {
  EAGER_INTERNAL_CHECK(buffer_ != nullptr);
  EAGER_INTERNAL_CHECK(buffer_->size_bytes() ==
                       static_cast<size_t>(shape.num_elements()) * DTypeSize(dtype));
}

Tensor::Tensor(std::shared_ptr<const internal::SymbolicOutput> symbolic, const Shape& shape,
               DType dtype, TensorId id)
    : symbolic_(std::move(symbolic)), shape_(shape), dtype_(dtype), id_(id) {
  EAGER_INTERNAL_CHECK(symbolic_ != nullptr);
}

const std::string& Tensor::name() const {
  if (symbolic_ == nullptr) {
    throw FailedPreconditionError(
        StrCat("Tensor::name is undefined for an eager tensor (a ", dtype_, " tensor of shape ",
               shape_, "); only graph tensors, made inside Graph::AsDefault, have names"));
  }
  return symbolic_->name;
}

Tensor Tensor::Zeros(const Shape& shape, DType dtype) {
  Tensor t = internal::NewTensor(shape, dtype);
  // Strings and variants are constructed empty (internal/buffer.h).
  if (dtype != DType::kString && dtype != DType::kVariant) {
    std::memset(internal::MutableRawData(t), 0, static_cast<size_t>(t.bytes().size()));
  }
  return t;
}

std::span<const std::byte> Tensor::bytes() const {
  if (buffer_ == nullptr) [[unlikely]]
    ThrowBadAccess(dtype_, "bytes");
  EAGER_CHECK(dtype_ != DType::kString && dtype_ != DType::kVariant, "Tensor::bytes: a ", dtype_,
              " tensor has no fixed-size byte representation (shape ", shape_, ")");
  return {static_cast<const std::byte*>(buffer_->data()), buffer_->size_bytes()};
}

void Tensor::ThrowBadAccess(DType expected, const char* accessor) const {
  if (symbolic_ != nullptr) {
    throw FailedPreconditionError(StrCat("Tensor::", accessor, ": '", symbolic_->name,
                                         "' is a symbolic graph tensor (", dtype_, ", shape ",
                                         shape_, ") with no value; evaluate it with Session::Run"));
  }
  throw InvalidArgumentError(StrCat("Tensor::", accessor, "<", expected, ">() called on a ", dtype_,
                                    " tensor of shape ", shape_));
}

std::string Tensor::ValuesString(int64_t max_elements) const {
  // numpy (and so TF) prints any zero-element array as "[]": and walking the
  // dims of a [2^40, 0] tensor would not terminate.
  if (num_elements() == 0 && rank() > 0) return "[]";
  std::string out;
  int64_t budget = max_elements;
  if (dtype_ == DType::kVariant) {  // which VisitDType refuses, as kernels must
    AppendNested<Variant>(out, data<Variant>(), shape_.dims(), budget);
    return out;
  }
  VisitDType(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    AppendNested<T>(out, data<T>(), shape_.dims(), budget);
  });
  return out;
}

std::string Tensor::DebugString(int64_t max_elements) const {
  std::string shape = "(";
  for (int i = 0; i < rank(); ++i) {
    shape +=
        shape_.dim(i) == Shape::kUnknownDim ? std::string("None") : std::to_string(shape_.dim(i));
    if (rank() == 1 || i + 1 < rank()) shape += i + 1 < rank() ? ", " : ",";
  }
  shape += ")";
  if (shape_.unknown_rank()) shape = "<unknown>";
  if (symbolic_ != nullptr) {  // as TF1 prints a graph tensor
    return StrCat("Tensor(\"", symbolic_->name, "\", shape=", shape, ", dtype=", dtype_, ")");
  }
  return StrCat("tf.Tensor(", ValuesString(max_elements), ", shape=", shape, ", dtype=", dtype_,
                ")");
}

std::ostream& operator<<(std::ostream& out, const Tensor& tensor) {
  return out << tensor.DebugString();
}

namespace internal {

TensorId NewTensorId() {
  // Each thread takes ids in blocks: one atomic add per 4096 tensors instead
  // of one per op (an uncontended lock xadd costs ~10 ns here, a tenth of a
  // one-element Add). Ids stay unique and non-zero; nothing orders by them.
  constexpr TensorId kBlock = 4096;
  static std::atomic<TensorId> next_block{1};
  thread_local TensorId next = 0;
  thread_local TensorId limit = 0;
  if (next == limit) [[unlikely]] {
    next = next_block.fetch_add(kBlock, std::memory_order_relaxed);
    limit = next + kBlock;
  }
  return next++;
}

Tensor TensorAccess::WithShape(const Tensor& tensor, const Shape& shape) {
  (void)tensor.raw_data();  // a symbolic tensor has no buffer to share: throws
  EAGER_CHECK(shape.num_elements() == tensor.num_elements(), "Reshape: cannot reshape a tensor of ",
              tensor.num_elements(), " elements (shape ", tensor.shape(), ") into shape ", shape,
              " (", shape.num_elements(), " elements)");
  return Tensor(tensor.buffer_, shape, tensor.dtype(), NewTensorId());
}

}  // namespace internal

// Every op's output comes from here, and the buffer is made for this shape
// and dtype: the checking constructor's size check would only cost time.
// Allocate's result initializes buffer_ in place (guaranteed elision); passed
// by value it was reloaded as one 16-byte load right after Allocate's two
// 8-byte stores, a store-forwarding stall on every op.
Tensor::Tensor(FreshTag, const Shape& shape, DType dtype)
    : buffer_(internal::Buffer::Allocate(dtype, shape.num_elements())),
      data_(buffer_->data()),
      shape_(shape),
      dtype_(dtype),
      id_(internal::NewTensorId()) {}

Tensor Tensor::Uninitialized(const Shape& shape, DType dtype) {
  // A partially known shape has num_elements() -1: never an allocation size.
  if (!shape.IsFullyDefined()) [[unlikely]] {
    throw InvalidArgumentError(StrCat("cannot create a ", dtype, " tensor of shape ", shape,
                                      ": a tensor's shape must be fully defined (only graph "
                                      "tensors have unknown dimensions)"));
  }
  return Tensor(FreshTag{}, shape, dtype);
}
}  // namespace eager
