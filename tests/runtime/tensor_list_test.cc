// TensorList and Variant (runtime/tensor_list.h, runtime/variant.h): a list
// travels as a DT_VARIANT scalar whose copies share it; it may be changed in
// place only when nobody else can see it; variant tensors print, and refuse
// the byte view numeric tensors have.

#include "runtime/tensor_list.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "runtime/variant.h"

namespace eager {
namespace {

std::shared_ptr<TensorList> TwoRows() {
  auto list = std::make_shared<TensorList>(DType::kFloat32, Shape::Partial({-1}));
  list->PushBack(Tensor::Vector<float>({1, 2}));
  list->Resize(2);  // element 1 unset
  return list;
}

TEST(TensorListTest, AVariantScalarHoldsTheListAndCopiesShareIt) {
  const Tensor t = TensorList::ToTensor(TwoRows());
  EXPECT_EQ(t.dtype(), DType::kVariant);
  EXPECT_EQ(t.shape(), Shape{});
  const TensorList* list = TensorList::From(t);
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(list->size(), 2);
  EXPECT_EQ(list->element_shape(), Shape::Partial({-1}));
  EXPECT_EQ(list->item(0)->ToVector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(list->item(1), nullptr);
  const Tensor copy = t;  // NOLINT(performance-unnecessary-copy-initialization): the point
  EXPECT_EQ(TensorList::From(copy), list);
  EXPECT_EQ(t.DebugString(),
            "tf.Tensor(TensorList(float32, [?], 2 elements), shape=(), dtype=variant)");
}

// The in-place path of the list ops: only when the tensor is the only holder
// of its buffer and the buffer the only holder of the list.
TEST(TensorListTest, TryMutableOnlyWhenNobodyElseCanSeeTheList) {
  Tensor t = TensorList::ToTensor(TwoRows());
  EXPECT_NE(TensorList::TryMutable(t), nullptr);
  {
    // A copy sharing the buffer: the point of this scope.
    const Tensor copy = t;  // NOLINT(performance-unnecessary-copy-initialization)
    EXPECT_EQ(TensorList::TryMutable(t), nullptr);
  }
  EXPECT_NE(TensorList::TryMutable(t), nullptr);
  {
    const std::shared_ptr<const TensorList> kept = TensorList::Shared(t);  // shares the list
    EXPECT_EQ(TensorList::TryMutable(t), nullptr);
  }
  EXPECT_NE(TensorList::TryMutable(t), nullptr);
}

TEST(TensorListTest, OtherTensorsAreNoLists) {
  EXPECT_EQ(TensorList::From(Tensor(1.0f)), nullptr);
  EXPECT_EQ(TensorList::From(Tensor::Zeros(Shape{}, DType::kVariant)), nullptr);  // empty variant
  EXPECT_EQ(TensorList::TryMutable(Tensor(1.0f)), nullptr);
}

TEST(TensorListTest, VariantTensorsHaveNoByteViewAndPrintEmptyElements) {
  const Tensor empty = Tensor::Zeros(Shape{2}, DType::kVariant);
  EXPECT_EQ(empty.ValuesString(), "[<empty variant>, <empty variant>]");
  EXPECT_THROW((void)empty.bytes(), InvalidArgumentError);
}

}  // namespace
}  // namespace eager
