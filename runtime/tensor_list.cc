#include "runtime/tensor_list.h"

#include "runtime/internal/buffer.h"
#include "runtime/tensor_access.h"

namespace eager {

std::string TensorList::DebugString() const {
  return StrCat("TensorList(", element_dtype_, ", ", element_shape_, ", ", size(), " elements)");
}

Tensor TensorList::ToTensor(std::shared_ptr<const TensorList> list) {
  Tensor t = internal::NewTensor(Shape{}, DType::kVariant);
  internal::MutableData<Variant>(t)[0] = Variant(std::move(list));
  return t;
}

const TensorList* TensorList::From(const Tensor& t) {
  if (t.dtype() != DType::kVariant || t.is_symbolic() || t.num_elements() != 1) return nullptr;
  return t.data<Variant>()[0].get<TensorList>();
}

std::shared_ptr<const TensorList> TensorList::Shared(const Tensor& t) {
  const TensorList* list = From(t);
  if (list == nullptr) return nullptr;
  return std::static_pointer_cast<const TensorList>(t.data<Variant>()[0].value());
}

TensorList* TensorList::TryMutable(const Tensor& t) {
  const TensorList* list = From(t);
  if (list == nullptr || internal::BufferOf(t).use_count() != 1 ||
      t.data<Variant>()[0].value().use_count() != 1) {
    return nullptr;
  }
  // Nobody else can reach the list (above): changing it is not observable.
  return const_cast<TensorList*>(list);
}

}  // namespace eager
