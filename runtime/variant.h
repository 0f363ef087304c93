#pragma once

// Variant: the element type of a DT_VARIANT tensor (DType::kVariant), TF's
// tensorflow::Variant. A variant tensor's elements are values of a type
// TensorFlow does not know as a dtype: eager has one, the TensorList
// (runtime/tensor_list.h) that TF 2's tf.TensorArray, Keras RNNs and
// tf.while_loop accumulators carry through their While loops.
//
// A Variant holds a shared, immutable VariantValue, so copying it (or the
// tensor holding it) is O(1) and never observable, like a Tensor's buffer.
// An op that "changes" a value (TensorListSetItem) makes a new one; one that
// owns the only reference to a value may reuse it (runtime/tensor_list.h
// says when). A default Variant holds nothing: what a freshly allocated
// variant tensor's elements are until its creator fills them.
//
// Only the ops that know a value's type read it (ops/list_ops.h); the rest
// of eager passes variant tensors along untouched (Identity, function calls,
// While loops, Session feeds and fetches) and refuses to compute on them
// (VisitDType throws UnimplementedError naming the dtype). A checkpoint
// cannot hold one (BundleWriter refuses it, as TF's does for most variants).

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "runtime/dtype.h"

namespace eager {

// What a Variant holds: one kind of value, immutable once shared.
class VariantValue {
 public:
  virtual ~VariantValue() = default;
  // TF's type name of the value ("tensorflow::TensorList"), for messages.
  virtual std::string_view type_name() const = 0;
  // A short description for DebugString: "TensorList(float32, [2,3], 4 elements)".
  virtual std::string DebugString() const = 0;

 protected:
  VariantValue() = default;
  VariantValue(const VariantValue&) = default;
  VariantValue& operator=(const VariantValue&) = default;
};

class Variant {
 public:
  Variant() = default;  // holds nothing
  explicit Variant(std::shared_ptr<const VariantValue> value) : value_(std::move(value)) {}

  bool empty() const { return value_ == nullptr; }
  // The value as a T, or nullptr when it holds nothing or another type.
  template <typename T>
  const T* get() const {
    return dynamic_cast<const T*>(value_.get());
  }
  const std::shared_ptr<const VariantValue>& value() const { return value_; }
  // "TensorList(...)", or "<empty variant>".
  std::string DebugString() const {
    return value_ == nullptr ? std::string("<empty variant>") : value_->DebugString();
  }

 private:
  std::shared_ptr<const VariantValue> value_;
};

static_assert(sizeof(Variant) == kVariantSize, "kDTypeSizes (runtime/dtype.h) assumes this");

}  // namespace eager
