#include "runtime/trackable.h"

#include <set>

#include "runtime/variable.h"

namespace eager {

std::string_view KerasLayoutName(KerasLayout layout) {
  switch (layout) {
    case KerasLayout::kKeras2Legacy:
      return "keras2_legacy";
    case KerasLayout::kKeras2:
      return "keras2";
    case KerasLayout::kKeras3:
      return "keras3";
  }
  return "unknown";
}

namespace {

void SetLayout(Trackable& object, KerasLayout layout, std::set<const Trackable*>& seen) {
  if (!seen.insert(&object).second) return;
  object.UseKerasLayout(layout);  // first: it decides which children there are
  for (const Trackable::Child& child : object.Children()) SetLayout(*child.object, layout, seen);
}

}  // namespace

void SetKerasLayout(Trackable& root, KerasLayout layout) {
  std::set<const Trackable*> seen;
  SetLayout(root, layout, seen);
}

Variable& Trackable::CreateVariable(std::string_view local_name, DType dtype, const Shape& shape,
                                    const std::function<Tensor()>& initial_value,
                                    std::string_view variable_name, bool trainable,
                                    const StoreVariable& store) {
  std::optional<Tensor> restored = DeferredInitialValue(local_name, dtype, shape);
  auto variable = std::make_unique<Variable>(restored ? std::move(*restored) : initial_value(),
                                             variable_name, trainable);
  Variable& created = *variable;
  store(std::move(variable));
  NotifyChildAdded(local_name, created);
  return created;
}

Variable& Trackable::CreateVariable(std::string_view local_name, const Tensor& initial_value,
                                    std::string_view variable_name, bool trainable,
                                    const StoreVariable& store) {
  return CreateVariable(
      local_name, initial_value.dtype(), initial_value.shape(), [&] { return initial_value; },
      variable_name, trainable, store);
}

Variable& Trackable::CreateSlot(const Variable& original, std::string_view slot_name,
                                std::string_view variable_name, const StoreVariable& store,
                                const std::function<Tensor()>& initial_value) {
  std::optional<Tensor> restored =
      DeferredInitialSlotValue(original, slot_name, original.dtype(), original.shape());
  if (!restored) {
    restored = initial_value ? initial_value() : Tensor::Zeros(original.shape(), original.dtype());
  }
  auto slot = std::make_unique<Variable>(std::move(*restored), variable_name, /*trainable=*/false);
  Variable& created = *slot;
  store(std::move(slot));
  NotifySlotAdded({&original, std::string(slot_name), &created});
  return created;
}

}  // namespace eager
