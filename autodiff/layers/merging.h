#pragma once

// Keras's merge layers (keras.layers, Keras 3 and tf_keras): layers of a
// list of tensors.
//
//   Concatenate(axis)  along `axis` (default -1, the last); the inputs agree
//                      on every other dimension.
//   Add, Multiply      the inputs summed / multiplied, left to right.
//   Subtract           exactly two inputs: x0 - x1.
//   Average            the sum divided by the number of inputs.
//   Maximum, Minimum   elementwise, left to right (ties pass the gradient
//                      to the earlier input, as TF's Maximum/Minimum).
//
// Eagerly a merge layer takes a vector, `add({x, y})`; on KerasTensors it
// records a node, `add({a, b})` (autodiff/keras_tensor.h). A braced list of
// one tensor, `add({x})`, is that tensor in C++ (the single-tensor Call,
// which throws); write std::vector<Tensor>{x}. The elementwise
// layers take inputs of one rank whose dimensions agree or are 1 (Keras's
// broadcasting); all inputs must share a dtype. Bad inputs throw
// InvalidArgumentError naming the layer, the input and the shapes. No
// variables; the same in training and inference; gradients through the tape
// (ConcatV2, AddV2, Sub, Mul, RealDiv, Maximum, Minimum). Unnamed layers
// take Keras's names ("concatenate", "add", "subtract", "multiply",
// "average", "maximum", "minimum", with _1, _2, ...).

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "autodiff/layer.h"

namespace eager::layers {

// A layer of several inputs and one output. Subclasses implement Merge; the
// single-tensor Call throws InvalidArgumentError (a merge needs a list).
class MultiInputLayer : public Layer {
 public:
  using Layer::Layer;
  using Layer::operator();
  Tensor operator()(const std::vector<Tensor>& inputs) { return Merge(inputs); }

  virtual Tensor Merge(const std::vector<Tensor>& inputs) = 0;

  std::vector<Tensor> CallMany(const std::vector<Tensor>& inputs, bool training) override;
  Tensor Call(const Tensor& x) override;

  // The Keras line whose masks the layer computes (see ComputeMaskMany
  // below): Keras 3's in kKeras3, tf_keras's otherwise (SetKerasLayout).
  void UseKerasLayout(KerasLayout layout) override { layout_ = layout; }

 protected:
  KerasLayout layout_ = KerasLayout::kKeras2Legacy;
};

class Concatenate : public MultiInputLayer {
 public:
  explicit Concatenate(int64_t axis = -1, std::string_view name = "");
  ~Concatenate() override;
  Tensor Merge(const std::vector<Tensor>& inputs) override;
  int64_t axis() const { return axis_; }

  // The output's mask: none when no input has a mask; else each input's
  // mask with a last axis added (all true for an input without one),
  // concatenated along `axis`, then reduced over the last axis: Any in
  // Keras 3 (kKeras3; the masks broadcast to the inputs' shapes first),
  // All in tf_keras. Concatenating along the last axis, that is the OR of
  // the masks in Keras 3 and the AND of the present ones in tf_keras.
  KerasMaskRule KerasMasking() const override { return {.output = KerasMaskOutput::kConcatenate}; }
  std::optional<Tensor> ComputeMaskMany(const std::vector<Tensor>& inputs,
                                        const std::vector<std::optional<Tensor>>& masks) override;

 private:
  int64_t axis_;
};

// The elementwise merges: a left fold of Combine over the inputs.
class ElementwiseMerge : public MultiInputLayer {
 public:
  using MultiInputLayer::MultiInputLayer;
  Tensor Merge(const std::vector<Tensor>& inputs) override;

  // The output's mask: in Keras 3 (kKeras3) the inputs' masks ORed, none
  // when any input has none; in tf_keras the present masks ANDed, none when
  // no input has one.
  KerasMaskRule KerasMasking() const override { return {.output = KerasMaskOutput::kLogicalOr}; }
  std::optional<Tensor> ComputeMaskMany(const std::vector<Tensor>& inputs,
                                        const std::vector<std::optional<Tensor>>& masks) override;

 protected:
  virtual Tensor Combine(const Tensor& acc, const Tensor& x) const = 0;
  // After the fold (Average divides).
  virtual Tensor Finish(const Tensor& acc, size_t count) const {
    (void)count;
    return acc;
  }
  // Inputs accepted: at least 1 (Keras 3), or Subtract's exactly 2.
  virtual bool CountOk(size_t count) const { return count >= 1; }
};

class Add : public ElementwiseMerge {
 public:
  explicit Add(std::string_view name = "");
  Tensor Combine(const Tensor& acc, const Tensor& x) const override;
};

class Subtract : public ElementwiseMerge {
 public:
  explicit Subtract(std::string_view name = "");
  Tensor Combine(const Tensor& acc, const Tensor& x) const override;
  bool CountOk(size_t count) const override { return count == 2; }
};

class Multiply : public ElementwiseMerge {
 public:
  explicit Multiply(std::string_view name = "");
  Tensor Combine(const Tensor& acc, const Tensor& x) const override;
};

class Average : public ElementwiseMerge {
 public:
  explicit Average(std::string_view name = "");
  Tensor Combine(const Tensor& acc, const Tensor& x) const override;
  Tensor Finish(const Tensor& acc, size_t count) const override;
};

class Maximum : public ElementwiseMerge {
 public:
  explicit Maximum(std::string_view name = "");
  Tensor Combine(const Tensor& acc, const Tensor& x) const override;
};

class Minimum : public ElementwiseMerge {
 public:
  explicit Minimum(std::string_view name = "");
  Tensor Combine(const Tensor& acc, const Tensor& x) const override;
};

}  // namespace eager::layers
