#include "autodiff/layers/merging.h"

#include <algorithm>
#include <string>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "runtime/errors.h"
#include "runtime/names.h"

namespace eager::layers {
namespace {

std::string Named(std::string_view name, std::string_view base) {
  return name.empty() ? UniqueObjectName(base) : std::string(name);
}

void CheckDtypes(const Layer& layer, const std::vector<Tensor>& inputs) {
  for (size_t i = 1; i < inputs.size(); ++i) {
    EAGER_CHECK(inputs[i].dtype() == inputs[0].dtype(), "layer '", layer.name(), "': input ", i,
                " is ", inputs[i].dtype(), " but input 0 is ", inputs[0].dtype());
  }
}

}  // namespace

std::vector<Tensor> MultiInputLayer::CallMany(const std::vector<Tensor>& inputs, bool training) {
  (void)training;
  return {Merge(inputs)};
}

Tensor MultiInputLayer::Call(const Tensor& x) {
  throw InvalidArgumentError(StrCat("layer '", name(), "' merges a list of tensors, got one of ",
                                    "shape ", x.shape(), "; call it with a vector"));
}

Concatenate::Concatenate(int64_t axis, std::string_view name)
    : MultiInputLayer(Named(name, "concatenate")), axis_(axis) {}
Concatenate::~Concatenate() = default;

Tensor Concatenate::Merge(const std::vector<Tensor>& inputs) {
  EAGER_CHECK(!inputs.empty(), "Concatenate '", name(), "': needs at least one input");
  CheckDtypes(*this, inputs);
  const int rank = inputs[0].rank();
  const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
  EAGER_CHECK(axis >= 0 && axis < rank, "Concatenate '", name(), "': axis ", axis_,
              " is out of range for inputs of rank ", rank, " (shape ", inputs[0].shape(), ")");
  for (size_t i = 1; i < inputs.size(); ++i) {
    bool ok = inputs[i].rank() == rank;
    for (int d = 0; ok && d < rank; ++d) {
      ok = d == axis || inputs[i].shape().dim(d) == inputs[0].shape().dim(d);
    }
    EAGER_CHECK(ok, "Concatenate '", name(), "': input ", i, " of shape ", inputs[i].shape(),
                " does not match input 0 of shape ", inputs[0].shape(), " except along axis ",
                axis_);
  }
  return Concat(inputs, axis);
}

std::optional<Tensor> Concatenate::ComputeMaskMany(
    const std::vector<Tensor>& inputs, const std::vector<std::optional<Tensor>>& masks) {
  EAGER_CHECK(masks.size() == inputs.size(), "layer '", name(), "': ", inputs.size(),
              " inputs but ", masks.size(), " masks");
  if (std::none_of(masks.begin(), masks.end(), [](const auto& m) { return m.has_value(); })) {
    return std::nullopt;
  }
  const bool keras3 = layout_ == KerasLayout::kKeras3;
  std::vector<Tensor> full;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Shape& shape = inputs[i].shape();
    if (!masks[i]) {
      full.push_back(Fill(shape, Tensor::Scalar(true)));
      continue;
    }
    Tensor m = Cast(*masks[i], DType::kBool);
    if (m.shape().rank() < shape.rank()) {
      m = ExpandDims(m, -1);
      if (keras3) m = BroadcastTo(m, shape);
    }
    full.push_back(m);
  }
  const Tensor joined = Cast(Concat(full, axis_), DType::kInt32);
  // Any (Keras 3) or All (tf_keras) over the last axis.
  return Cast(keras3 ? ReduceMax(joined, {-1}) : ReduceMin(joined, {-1}), DType::kBool);
}

std::optional<Tensor> ElementwiseMerge::ComputeMaskMany(
    const std::vector<Tensor>& inputs, const std::vector<std::optional<Tensor>>& masks) {
  (void)inputs;
  const auto missing = [](const std::optional<Tensor>& m) { return !m.has_value(); };
  if (layout_ == KerasLayout::kKeras3) {
    if (masks.empty() || std::any_of(masks.begin(), masks.end(), missing)) return std::nullopt;
    Tensor mask = Cast(*masks[0], DType::kBool);
    for (size_t i = 1; i < masks.size(); ++i) {
      mask = LogicalOr(mask, Cast(*masks[i], DType::kBool));
    }
    return mask;
  }
  std::optional<Tensor> mask;
  for (const std::optional<Tensor>& m : masks) {
    if (!m) continue;
    const Tensor b = Cast(*m, DType::kBool);
    mask = mask ? LogicalAnd(*mask, b) : b;
  }
  return mask;
}

Tensor ElementwiseMerge::Merge(const std::vector<Tensor>& inputs) {
  EAGER_CHECK(CountOk(inputs.size()), "layer '", name(), "': cannot merge ", inputs.size(),
              " inputs", inputs.size() == 2 ? "" : " (Subtract takes exactly 2, others >= 1)");
  CheckDtypes(*this, inputs);
  for (size_t i = 1; i < inputs.size(); ++i) {
    const Shape& a = inputs[0].shape();
    const Shape& b = inputs[i].shape();
    bool ok = a.rank() == b.rank();
    for (int d = 0; ok && d < a.rank(); ++d) {
      ok = a.dim(d) == b.dim(d) || a.dim(d) == 1 || b.dim(d) == 1;
    }
    EAGER_CHECK(ok, "layer '", name(), "': input ", i, " of shape ", b,
                " does not broadcast with input 0 of shape ", a);
  }
  Tensor acc = inputs[0];
  for (size_t i = 1; i < inputs.size(); ++i) acc = Combine(acc, inputs[i]);
  return Finish(acc, inputs.size());
}

Add::Add(std::string_view name) : ElementwiseMerge(Named(name, "add")) {}
Tensor Add::Combine(const Tensor& acc, const Tensor& x) const { return eager::Add(acc, x); }

Subtract::Subtract(std::string_view name) : ElementwiseMerge(Named(name, "subtract")) {}
Tensor Subtract::Combine(const Tensor& acc, const Tensor& x) const { return Sub(acc, x); }

Multiply::Multiply(std::string_view name) : ElementwiseMerge(Named(name, "multiply")) {}
Tensor Multiply::Combine(const Tensor& acc, const Tensor& x) const { return Mul(acc, x); }

Average::Average(std::string_view name) : ElementwiseMerge(Named(name, "average")) {}
Tensor Average::Combine(const Tensor& acc, const Tensor& x) const { return eager::Add(acc, x); }
Tensor Average::Finish(const Tensor& acc, size_t count) const {
  // Keras 3: the sum divided by len(inputs), in the inputs' dtype.
  return Div(acc, Cast(Tensor(static_cast<double>(count)), acc.dtype()));
}

Maximum::Maximum(std::string_view name) : ElementwiseMerge(Named(name, "maximum")) {}
Tensor Maximum::Combine(const Tensor& acc, const Tensor& x) const { return eager::Maximum(acc, x); }

Minimum::Minimum(std::string_view name) : ElementwiseMerge(Named(name, "minimum")) {}
Tensor Minimum::Combine(const Tensor& acc, const Tensor& x) const { return eager::Minimum(acc, x); }

}  // namespace eager::layers
