#pragma once

// Tensor: an immutable, dense, row-major n-dimensional array of one dtype.
//
// Copying a Tensor is O(1) and shares its buffer; since nothing can write
// through a Tensor, the sharing is never observable. Every newly computed
// tensor gets a fresh id(); copies keep it. GradientTape keys on the id.
//
// Construction:
//   Tensor s = 3.0f;                                   // float32 scalar
//   Tensor v = Tensor::Vector<float>({1, 2, 3});       // float32 [3]
//   Tensor m = Tensor::Matrix<double>({{1, 2}, {3, 4}});  // float64 [2,2]
//   Tensor t = Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
//   Tensor z = Tensor::Zeros(Shape{2, 3}, DType::kFloat64);
//
// Element access is typed and checked: data<float>() on a float64 tensor
// throws InvalidArgumentError. All methods are const, so Tensors may be read
// from several threads at once.
//
// Graph mode (runtime/graph.h): inside Graph::AsDefault, ops return symbolic
// tensors. A symbolic tensor names one output of a graph node ("add:0") and
// has a dtype and a static, possibly partial, shape but no values: reading
// its elements throws FailedPreconditionError saying to run it in a Session.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/errors.h"
#include "runtime/shape.h"

namespace eager {

namespace internal {
class Buffer;
struct SymbolicOutput;  // runtime/graph.h
class TensorAccess;     // the write side: runtime/tensor_access.h
}  // namespace internal

using TensorId = uint64_t;

class Tensor {
 public:
  // A float32 scalar holding 0.
  Tensor();
  // Scalars, implicitly: `Tensor t = 0.5f;` (dtype from the C++ type, as
  // tf.constant does: an int literal is int32).
  Tensor(float value);    // NOLINT(google-explicit-constructor)
  Tensor(double value);   // NOLINT(google-explicit-constructor)
  Tensor(int32_t value);  // NOLINT(google-explicit-constructor)
  Tensor(int64_t value);  // NOLINT(google-explicit-constructor)
  // Exactly bool: a template, so a pointer (`Tensor t = &variable;`) or
  // anything else that converts to bool does not silently become a scalar.
  template <std::same_as<bool> B>
  Tensor(B value) : Tensor(BoolScalar(value)) {}  // NOLINT(google-explicit-constructor)
  explicit Tensor(std::string value);

  template <typename T>
  static Tensor Scalar(T value) {
    return FromVector<T>({std::move(value)}, Shape{});
  }
  // Throws InvalidArgumentError unless values.size() == shape.num_elements().
  template <typename T>
  static Tensor FromVector(std::vector<T> values, const Shape& shape);
  // A rank-1 tensor holding `values`.
  template <typename T>
  static Tensor FromVector(std::vector<T> values) {
    const auto n = static_cast<int64_t>(values.size());
    return FromVector<T>(std::move(values), Shape{n});
  }
  template <typename T>
  static Tensor Vector(std::initializer_list<T> values) {
    return FromVector<T>(std::vector<T>(values));
  }
  // Rows must all have the same length (else InvalidArgumentError).
  template <typename T>
  static Tensor Matrix(std::initializer_list<std::initializer_list<T>> rows);
  // Zeros (false, "" for bool and string).
  static Tensor Zeros(const Shape& shape, DType dtype = DType::kFloat32);

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  int rank() const { return shape_.rank(); }
  int64_t num_elements() const { return shape_.num_elements(); }

  // The elements in row-major order. Throws InvalidArgumentError unless
  // T matches dtype().
  template <typename T>
  std::span<const T> data() const {
    CheckDType(DTypeOf<T>(), "data");
    return {static_cast<const T*>(raw_data()), static_cast<size_t>(num_elements())};
  }
  template <typename T>
  std::vector<T> ToVector() const {
    auto d = data<T>();
    return {d.begin(), d.end()};
  }
  // The only element. Throws InvalidArgumentError unless num_elements() == 1.
  template <typename T>
  const T& scalar() const;
  // The element at a full index, e.g. at<float>({1, 2}). Throws
  // InvalidArgumentError on a wrong rank and OutOfRangeError on a bad index.
  template <typename T>
  const T& at(std::initializer_list<int64_t> index) const;

  // The raw element bytes of a numeric or bool tensor (little-endian on the
  // hosts we support). Throws InvalidArgumentError for string tensors.
  std::span<const std::byte> bytes() const;

  // Identity shared by copies and fresh for every op output.
  TensorId id() const { return id_; }

  // Whether this is a graph tensor without values (see above).
  bool is_symbolic() const { return symbolic_ != nullptr; }
  // The graph tensor's name, "add:0" (tf.Tensor.name). Throws
  // FailedPreconditionError for an eager tensor, which has no name.
  const std::string& name() const;

  // `tf.Tensor([1.0, 2.0], shape=(2,), dtype=float32)`-style text, at most
  // `max_elements` elements (then "...").
  std::string DebugString(int64_t max_elements = 64) const;
  // The values alone: "[10.0, 0.10989987]", "3.0", "[[1, 2], [3, 4]]".
  std::string ValuesString(int64_t max_elements = 64) const;

  // Internal: a symbolic tensor (made by Graph::Output).
  Tensor(std::shared_ptr<const internal::SymbolicOutput> symbolic, const Shape& shape, DType dtype,
         TensorId id);
  const std::shared_ptr<const internal::SymbolicOutput>& symbolic() const { return symbolic_; }

 private:
  // Code that creates tensors (kernels, factories, file readers, optimizers)
  // fills fresh ones through runtime/tensor_access.h, which is not
  // installed: nothing here writes to a Tensor.
  friend class internal::TensorAccess;

  Tensor(std::shared_ptr<const internal::Buffer> buffer, const Shape& shape, DType dtype,
         TensorId id);
  // `other`'s elements, shape, dtype and id, without a share in its buffer
  // (TensorAccess::Borrow). REQUIRES: other is not symbolic.
  struct BorrowTag {};
  Tensor(BorrowTag, const Tensor& other)
      : buffer_(std::shared_ptr<const internal::Buffer>(), other.buffer_.get()),
        data_(other.data_),
        shape_(other.shape_),
        dtype_(other.dtype_),
        id_(other.id_) {}
  // A fresh buffer for exactly this shape and dtype, allocated straight into
  // buffer_ (Uninitialized): no size check, and no shared_ptr passed through
  // a temporary (reloading one just stored stalls store forwarding).
  struct FreshTag {};
  Tensor(FreshTag, const Shape& shape, DType dtype);
  // A tensor with uninitialized storage (default strings) and a fresh id.
  static Tensor Uninitialized(const Shape& shape, DType dtype);
  static Tensor BoolScalar(bool value);
  const void* raw_data() const {
    if (buffer_ == nullptr) [[unlikely]]
      ThrowBadAccess(dtype_, "raw_data");
    return data_;
  }
  void CheckDType(DType expected, const char* accessor) const {
    if (expected != dtype_ || buffer_ == nullptr) [[unlikely]] {
      ThrowBadAccess(expected, accessor);
    }
  }
  [[noreturn]] void ThrowBadAccess(DType expected, const char* accessor) const;

  std::shared_ptr<const internal::Buffer> buffer_;
  // buffer_'s elements, kept here so that reading them is inline and costs
  // no load through the buffer (nullptr for a symbolic tensor).
  const void* data_ = nullptr;
  std::shared_ptr<const internal::SymbolicOutput> symbolic_;
  Shape shape_;
  DType dtype_ = DType::kFloat32;
  TensorId id_ = 0;
};

std::ostream& operator<<(std::ostream& out, const Tensor& tensor);

// ---------------------------------------------------------------------------
// Implementation details follow.

template <typename T>
Tensor Tensor::FromVector(std::vector<T> values, const Shape& shape) {
  if (static_cast<int64_t>(values.size()) != shape.num_elements()) {
    throw InvalidArgumentError(StrCat("Tensor::FromVector: ", values.size(),
                                      " values cannot fill shape ", shape, ", which needs ",
                                      shape.num_elements()));
  }
  Tensor t = Uninitialized(shape, DTypeOf<T>());
  T* out = const_cast<T*>(t.data<T>().data());  // nobody else has seen `t` yet
  for (size_t i = 0; i < values.size(); ++i) out[i] = std::move(values[i]);
  return t;
}

template <typename T>
Tensor Tensor::Matrix(std::initializer_list<std::initializer_list<T>> rows) {
  const auto num_rows = static_cast<int64_t>(rows.size());
  const auto num_cols = num_rows == 0 ? int64_t{0} : static_cast<int64_t>(rows.begin()->size());
  std::vector<T> values;
  values.reserve(static_cast<size_t>(num_rows * num_cols));
  int64_t r = 0;
  for (const auto& row : rows) {
    if (static_cast<int64_t>(row.size()) != num_cols) {
      throw InvalidArgumentError(StrCat("Tensor::Matrix: row ", r, " has ", row.size(),
                                        " elements, expected ", num_cols, " like row 0"));
    }
    values.insert(values.end(), row.begin(), row.end());
    ++r;
  }
  return FromVector<T>(std::move(values), Shape{num_rows, num_cols});
}

template <typename T>
const T& Tensor::scalar() const {
  auto d = data<T>();
  if (d.size() != 1) {
    throw InvalidArgumentError(StrCat("Tensor::scalar: expected exactly one element, got shape ",
                                      shape_, " with ", d.size(), " elements"));
  }
  return d[0];
}

template <typename T>
const T& Tensor::at(std::initializer_list<int64_t> index) const {
  auto d = data<T>();
  if (static_cast<int>(index.size()) != rank()) {
    throw InvalidArgumentError(
        StrCat("Tensor::at: index of rank ", index.size(), " for a tensor of shape ", shape_));
  }
  int64_t flat = 0;
  int i = 0;
  for (int64_t k : index) {
    if (k < 0 || k >= shape_.dim(i)) {
      throw OutOfRangeError(
          StrCat("Tensor::at: index ", k, " out of range for dimension ", i, " of shape ", shape_));
    }
    flat = flat * shape_.dim(i) + k;
    ++i;
  }
  return d[static_cast<size_t>(flat)];
}

}  // namespace eager
