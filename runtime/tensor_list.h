#pragma once

// TensorList: the value of TF's DT_VARIANT list tensors, tensorflow::TensorList
// (TF's list_kernels.h), which TF 2 builds for tf.TensorArray inside a
// tf.function, for Keras RNN layers' time loops and for the accumulators of
// tf.while_loop. The ops on it are in ops/list_ops.h.
//
// A list has an element dtype, an element shape that may be partially known
// ("[?,3]") or of unknown rank, and a sequence of elements. An element may
// be unset (TensorListReserve's slots): reading one gives zeros when the
// element shape is fully known and is an error otherwise, as in TF.
//
// Value semantics, as TF's: an op never changes a list another tensor can
// see; TensorListSetItem makes a new list. The elements are Tensors, whose
// buffers are shared, so copying a list copies n handles, never element
// data. A kernel that holds the only reference to a list (its tensor's buffer
// and the list itself unshared: TryMutable) changes it in place instead, as
// TF's kernels forward a list whose reference count is one; either way the
// result is the same value.
//
//   auto list = std::make_shared<TensorList>(DType::kFloat32, Shape{3});
//   list->PushBack(row);                                  // before it is shared
//   Tensor handle = TensorList::ToTensor(std::move(list));  // a DT_VARIANT scalar

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/shape.h"
#include "runtime/tensor.h"
#include "runtime/variant.h"

namespace eager {

class TensorList final : public VariantValue {
 public:
  // An empty list. element_shape may be partial or of unknown rank;
  // max_num_elements < 0 means no limit (EmptyTensorList's attribute).
  TensorList(DType element_dtype, Shape element_shape, int64_t max_num_elements = -1)
      : element_dtype_(element_dtype),
        element_shape_(element_shape),
        max_num_elements_(max_num_elements) {}

  std::string_view type_name() const override { return "tensorflow::TensorList"; }
  std::string DebugString() const override;

  DType element_dtype() const { return element_dtype_; }
  const Shape& element_shape() const { return element_shape_; }
  int64_t max_num_elements() const { return max_num_elements_; }
  int64_t size() const { return static_cast<int64_t>(elements_.size()); }

  // Element i, or nullptr when it is unset. REQUIRES: 0 <= i < size().
  const Tensor* item(int64_t i) const {
    const std::optional<Tensor>& e = elements_[static_cast<size_t>(i)];
    return e ? &*e : nullptr;
  }

  // Mutators, for a list nobody else sees yet (or TryMutable's). They do not
  // check the element against the list's dtype and shape: ops/list_ops.cc does,
  // with the node's name in its messages.
  void set_element_shape(const Shape& shape) { element_shape_ = shape; }
  void PushBack(Tensor element) { elements_.emplace_back(std::move(element)); }
  void PopBack() { elements_.pop_back(); }
  void Set(int64_t i, Tensor element) { elements_[static_cast<size_t>(i)] = std::move(element); }
  // Grows with unset elements, or drops the tail.
  void Resize(int64_t n) { elements_.resize(static_cast<size_t>(n)); }

  // A DT_VARIANT scalar holding `list`.
  static Tensor ToTensor(std::shared_ptr<const TensorList> list);
  // The list a DT_VARIANT scalar holds, or nullptr when `t` is not such a
  // scalar or holds something else. The result lives as long as `t`'s
  // buffer does (copy the shared_ptr from Shared() to keep it longer).
  static const TensorList* From(const Tensor& t);
  static std::shared_ptr<const TensorList> Shared(const Tensor& t);
  // `t`'s list, changeable in place when nobody else can see it: `t` is the
  // only holder of its buffer and that buffer the only holder of the list.
  // Else nullptr, and the caller copies. Used by kernels on the inputs a
  // Session hands them, which the Session no longer reads (see above).
  static TensorList* TryMutable(const Tensor& t);

 private:
  DType element_dtype_;
  Shape element_shape_;
  int64_t max_num_elements_;
  std::vector<std::optional<Tensor>> elements_;
};

}  // namespace eager
