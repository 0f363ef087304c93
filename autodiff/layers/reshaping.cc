#include "autodiff/layers/reshaping.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "autodiff/activations.h"
#include "ops/array_ops.h"
#include "ops/nn_ops.h"
#include "ops/shape_ops.h"
#include "ops/unary_ops.h"
#include "runtime/errors.h"
#include "runtime/names.h"

namespace eager::layers {
namespace {

std::string LayerName(std::string_view name, std::string_view base) {
  return name.empty() ? UniqueObjectName(base) : std::string(name);
}

std::string VectorString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

void CheckSides(int64_t top, int64_t bottom, int64_t left, int64_t right, const char* kind,
                const std::string& layer) {
  EAGER_CHECK(top >= 0 && bottom >= 0 && left >= 0 && right >= 0, kind, " '", layer,
              "': ((top, bottom), (left, right)) must be >= 0, got ((", top, ", ", bottom, "), (",
              left, ", ", right, "))");
}

void CheckRank4(const Tensor& x, const char* kind, const std::string& layer) {
  EAGER_CHECK(x.rank() == 4, kind, " '", layer,
              "': expected a [batch, height, width, channels] input, got shape ", x.shape());
}

}  // namespace

// Activation ------------------------------------------------------------

Activation::Activation(std::string_view activation, std::string_view name)
    : Layer(LayerName(name, "activation")), activation_name_(activation) {
  try {
    fn_ = ActivationByName(activation);
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(StrCat("Activation '", this->name(), "': ", e.what()));
  }
}

Activation::Activation(std::function<Tensor(const Tensor&)> activation,
                       std::string_view activation_name, std::string_view name)
    : Layer(LayerName(name, "activation")),
      fn_(std::move(activation)),
      activation_name_(activation_name) {
  EAGER_CHECK(fn_ != nullptr, "Activation '", this->name(), "': the activation function is empty");
}

Activation::~Activation() = default;

Tensor Activation::Call(const Tensor& x) { return fn_(x); }

// Reshape --------------------------------------------------------------------

Reshape::Reshape(std::vector<int64_t> target_shape, std::string_view name)
    : Layer(LayerName(name, "reshape")), target_shape_(std::move(target_shape)) {
  const auto unknown = std::count(target_shape_.begin(), target_shape_.end(), -1);
  const bool valid = std::all_of(target_shape_.begin(), target_shape_.end(),
                                 [](int64_t d) { return d > 0 || d == -1; });
  EAGER_CHECK(valid && unknown <= 1, "Reshape '", this->name(),
              "': target_shape entries must be positive, with at most one -1; got ",
              VectorString(target_shape_));
}

Reshape::~Reshape() = default;

Tensor Reshape::Call(const Tensor& x) {
  EAGER_CHECK(x.rank() >= 1, "Reshape '", name(),
              "': expected an input with a batch axis, got a scalar");
  const int64_t batch = x.shape().dim(0);
  const bool inferred = std::count(target_shape_.begin(), target_shape_.end(), -1) > 0;
  EAGER_CHECK(batch >= 0 || !inferred, "Reshape '", name(), "': target_shape ",
              VectorString(target_shape_), " has a -1 and the input's batch is unknown (shape ",
              x.shape(), ")");
  std::vector<int64_t> shape = {batch < 0 ? -1 : batch};
  shape.insert(shape.end(), target_shape_.begin(), target_shape_.end());
  try {
    return eager::Reshape(x, shape);
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(StrCat("Reshape '", name(), "': cannot reshape an input of shape ",
                                      x.shape(), " to [batch] + ", VectorString(target_shape_),
                                      ": ", e.what()));
  }
}

// Permute --------------------------------------------------------------------

Permute::Permute(std::vector<int64_t> dims, std::string_view name)
    : Layer(LayerName(name, "permute")), dims_(std::move(dims)) {
  std::vector<int64_t> sorted = dims_;
  std::sort(sorted.begin(), sorted.end());
  bool ok = !sorted.empty();
  for (size_t i = 0; i < sorted.size(); ++i) ok = ok && sorted[i] == static_cast<int64_t>(i) + 1;
  EAGER_CHECK(ok, "Permute '", this->name(), "': dims must be a permutation of 1..", dims_.size(),
              " (the batch axis 0 stays), got ", VectorString(dims_));
}

Permute::~Permute() = default;

Tensor Permute::Call(const Tensor& x) {
  EAGER_CHECK(x.rank() == static_cast<int>(dims_.size()) + 1, "Permute '", name(), "': dims ",
              VectorString(dims_), " need an input of rank ", dims_.size() + 1, ", got shape ",
              x.shape());
  std::vector<int64_t> perm = {0};
  perm.insert(perm.end(), dims_.begin(), dims_.end());
  return Transpose(x, perm);
}

// RepeatVector ---------------------------------------------------------------

RepeatVector::RepeatVector(int64_t times, std::string_view name)
    : Layer(LayerName(name, "repeat_vector")), times_(times) {
  EAGER_CHECK(times > 0, "RepeatVector '", this->name(), "': times must be positive, got ", times);
}

RepeatVector::~RepeatVector() = default;

Tensor RepeatVector::Call(const Tensor& x) {
  EAGER_CHECK(x.rank() == 2 && x.shape().dim(0) >= 0 && x.shape().dim(1) >= 0, "RepeatVector '",
              name(), "': expected a [batch, features] input of known shape, got ", x.shape());
  const int64_t batch = x.shape().dim(0), n = x.shape().dim(1);
  return BroadcastTo(eager::Reshape(x, {batch, 1, n}), Shape{batch, times_, n});
}

// ZeroPadding2D --------------------------------------------------------------

ZeroPadding2D::ZeroPadding2D(int64_t top, int64_t bottom, int64_t left, int64_t right,
                             std::string_view name)
    : Layer(LayerName(name, "zero_padding2d")),
      top_(top),
      bottom_(bottom),
      left_(left),
      right_(right) {
  CheckSides(top, bottom, left, right, "ZeroPadding2D", this->name());
}

ZeroPadding2D::ZeroPadding2D(int64_t padding, std::string_view name)
    : ZeroPadding2D(padding, padding, padding, padding, name) {}

ZeroPadding2D::~ZeroPadding2D() = default;

Tensor ZeroPadding2D::Call(const Tensor& x) {
  CheckRank4(x, "ZeroPadding2D", name());
  std::vector<int64_t> dims = x.shape().ToVector();
  EAGER_CHECK(std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; }),
              "ZeroPadding2D '", name(), "': needs the input's full shape, got ", x.shape());
  // Concat with zero blocks, rows then columns (no Pad op yet): the
  // gradient is Concat's, the slices of the padded result.
  auto pad = [&](const Tensor& t, int axis, int64_t before, int64_t after) {
    if (before == 0 && after == 0) return t;
    std::vector<Tensor> parts;
    std::vector<int64_t> block = t.shape().ToVector();
    if (before > 0) {
      block[axis] = before;
      parts.push_back(Tensor::Zeros(Shape(block), t.dtype()));
    }
    parts.push_back(t);
    if (after > 0) {
      block[axis] = after;
      parts.push_back(Tensor::Zeros(Shape(block), t.dtype()));
    }
    return Concat(parts, axis);
  };
  return pad(pad(x, 1, top_, bottom_), 2, left_, right_);
}

// Cropping2D -----------------------------------------------------------------

Cropping2D::Cropping2D(int64_t top, int64_t bottom, int64_t left, int64_t right,
                       std::string_view name)
    : Layer(LayerName(name, "cropping2d")), top_(top), bottom_(bottom), left_(left), right_(right) {
  CheckSides(top, bottom, left, right, "Cropping2D", this->name());
}

Cropping2D::Cropping2D(int64_t cropping, std::string_view name)
    : Cropping2D(cropping, cropping, cropping, cropping, name) {}

Cropping2D::~Cropping2D() = default;

Tensor Cropping2D::Call(const Tensor& x) {
  CheckRank4(x, "Cropping2D", name());
  const int64_t h = x.shape().dim(1), w = x.shape().dim(2);
  EAGER_CHECK(h > top_ + bottom_ && w > left_ + right_, "Cropping2D '", name(), "': cropping ((",
              top_, ", ", bottom_, "), (", left_, ", ", right_, ")) leaves nothing of an input ",
              "of shape ", x.shape());
  return Slice(x, {0, top_, left_, 0}, {-1, h - top_ - bottom_, w - left_ - right_, -1});
}

}  // namespace eager::layers
