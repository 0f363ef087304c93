#include "autodiff/layers/pooling.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/pooling_ops.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "runtime/errors.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager::layers {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string LayerName(std::string_view name, std::string_view default_name) {
  return name.empty() ? UniqueObjectName(default_name) : std::string(name);
}

std::optional<std::array<int64_t, 2>> Strides1D(std::optional<int64_t> s) {
  if (!s) return std::nullopt;
  return std::array<int64_t, 2>{1, *s};
}

void CheckInput(const Tensor& x, std::string_view class_name, std::string_view name, bool one_d) {
  const int rank = one_d ? 3 : 4;
  EAGER_CHECK(x.rank() == rank, class_name, " '", name, "': expected an input of rank ", rank,
              one_d ? " [batch, steps, channels]" : " [batch, height, width, channels]",
              ", got shape ", x.shape());
  EAGER_CHECK(IsFloating(x.dtype()), class_name, " '", name,
              "': expected a float32 or float64 input, got ", x.dtype(), " of shape ", x.shape());
}

}  // namespace

WindowPooling::WindowPooling(std::string_view class_name, std::string_view default_name, bool max,
                             bool one_d, std::array<int64_t, 2> pool,
                             std::optional<std::array<int64_t, 2>> strides,
                             std::string_view padding, const std::string& name)
    : Layer(LayerName(name, default_name)),
      class_name_(class_name),
      max_(max),
      one_d_(one_d),
      pool_(pool),
      strides_(strides ? *strides : pool),
      padding_(Lower(padding)) {
  EAGER_CHECK(pool_[0] >= 1 && pool_[1] >= 1 && strides_[0] >= 1 && strides_[1] >= 1, class_name_,
              " '", this->name(), "': pool_size and strides must be >= 1, got ", "pool_size ",
              Shape{pool_[0], pool_[1]}, " and strides ", Shape{strides_[0], strides_[1]});
  EAGER_CHECK(padding_ == "valid" || padding_ == "same", class_name_, " '", this->name(),
              "': padding must be \"valid\" or \"same\", got \"", padding, "\"");
}

WindowPooling::~WindowPooling() = default;

Tensor WindowPooling::Call(const Tensor& x) {
  CheckInput(x, class_name_, name(), one_d_);
  std::optional<NameScope> scope;
  if (Graph::Current() != nullptr) scope.emplace(NameScope::Current() + name() + "/");
  const PoolOptions options{.ksize = {1, pool_[0], pool_[1], 1},
                            .strides = {1, strides_[0], strides_[1], 1},
                            .padding = padding_ == "same" ? "SAME" : "VALID"};
  const Shape& s = x.shape();
  const int64_t batch = s.dim(0) < 0 ? -1 : s.dim(0);
  try {
    const Tensor in = one_d_ ? eager::Reshape(x, {batch, 1, s.dim(1), s.dim(2)}) : x;
    Tensor y = max_ ? MaxPool(in, options) : AvgPool(in, options);
    if (!one_d_) return y;
    const Shape& ys = y.shape();
    return eager::Reshape(y, {batch, ys.dim(2), ys.dim(3)});
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(StrCat(class_name_, " '", name(), "' on input of shape ", s,
                                      " (pool_size ", Shape{pool_[0], pool_[1]}, ", strides ",
                                      Shape{strides_[0], strides_[1]}, ", ", padding_,
                                      "): ", e.what()));
  }
}

MaxPooling2D::MaxPooling2D(std::array<int64_t, 2> pool_size, const Pooling2DConfig& config)
    : WindowPooling("MaxPooling2D", "max_pooling2d", true, false, pool_size, config.strides,
                    config.padding, config.name) {}

AveragePooling2D::AveragePooling2D(std::array<int64_t, 2> pool_size, const Pooling2DConfig& config)
    : WindowPooling("AveragePooling2D", "average_pooling2d", false, false, pool_size,
                    config.strides, config.padding, config.name) {}

MaxPooling1D::MaxPooling1D(int64_t pool_size, const Pooling1DConfig& config)
    : WindowPooling("MaxPooling1D", "max_pooling1d", true, true, {1, pool_size},
                    Strides1D(config.strides), config.padding, config.name) {}

AveragePooling1D::AveragePooling1D(int64_t pool_size, const Pooling1DConfig& config)
    : WindowPooling("AveragePooling1D", "average_pooling1d", false, true, {1, pool_size},
                    Strides1D(config.strides), config.padding, config.name) {}

// ---- global pooling ----

GlobalPooling::GlobalPooling(std::string_view class_name, std::string_view default_name, bool max,
                             bool one_d, bool keepdims, std::string_view name)
    : Layer(LayerName(name, default_name)),
      class_name_(class_name),
      max_(max),
      one_d_(one_d),
      keepdims_(keepdims) {}

GlobalPooling::~GlobalPooling() = default;

Tensor GlobalPooling::Call(const Tensor& x) {
  CheckInput(x, class_name_, name(), one_d_);
  std::optional<NameScope> scope;
  if (Graph::Current() != nullptr) scope.emplace(NameScope::Current() + name() + "/");
  const std::vector<int64_t> axes = one_d_ ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 2};
  return max_ ? ReduceMax(x, axes, keepdims_) : ReduceMean(x, axes, keepdims_);
}

GlobalAveragePooling2D::GlobalAveragePooling2D(bool keepdims, std::string_view name)
    : GlobalPooling("GlobalAveragePooling2D", "global_average_pooling2d", false, false, keepdims,
                    name) {}

Tensor GlobalAveragePooling1D::CallMasked(const Tensor& x, const std::optional<Tensor>& mask,
                                          bool training) {
  (void)training;  // the same in both modes
  if (!mask) return Call(x);
  const Shape& m = mask->shape();
  EAGER_CHECK(x.shape().rank() == 3 && m.rank() == 2 && m.dim(0) == x.shape().dim(0) &&
                  m.dim(1) == x.shape().dim(1),
              "GlobalAveragePooling1D '", name(), "': expected a mask [batch, steps] for input ",
              x.shape(), ", got ", m);
  std::optional<NameScope> scope;
  if (Graph::Current() != nullptr) scope.emplace(NameScope::Current() + name() + "/");
  // Keras's: the inputs times the float mask, summed over the steps, over
  // the mask's sum.
  const Tensor weight = ExpandDims(Cast(*mask, x.dtype()), 2);
  return Div(ReduceSum(Mul(x, weight), {1}, keepdims()), ReduceSum(weight, {1}, keepdims()));
}

GlobalMaxPooling2D::GlobalMaxPooling2D(bool keepdims, std::string_view name)
    : GlobalPooling("GlobalMaxPooling2D", "global_max_pooling2d", true, false, keepdims, name) {}

GlobalAveragePooling1D::GlobalAveragePooling1D(bool keepdims, std::string_view name)
    : GlobalPooling("GlobalAveragePooling1D", "global_average_pooling1d", false, true, keepdims,
                    name) {}

GlobalMaxPooling1D::GlobalMaxPooling1D(bool keepdims, std::string_view name)
    : GlobalPooling("GlobalMaxPooling1D", "global_max_pooling1d", true, true, keepdims, name) {}

}  // namespace eager::layers
