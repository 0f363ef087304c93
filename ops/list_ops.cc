#include "ops/list_ops.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ops/internal/list_copies.h"
#include "ops/internal/memory_limit.h"
#include "ops/op_def.h"
#include "runtime/graph.h"
#include "runtime/tensor_access.h"
#include "runtime/tensor_list.h"

namespace eager {
namespace {

// "node 'while/TensorListSetItem' (TensorListSetItem)"
std::string Where(const NodeContext& c) {
  return StrCat("node '", c.node.name, "' (", c.node.op, ")");
}

const Tensor& Input(const NodeContext& c, size_t i, const char* name) {
  if (i >= c.inputs.size()) {
    throw InvalidArgumentError(
        StrCat(Where(c), " needs input ", i, " ('", name, "'); it has ", c.inputs.size()));
  }
  return c.inputs[i];
}

// The list input `i` holds.
const TensorList& ListInput(const NodeContext& c, size_t i) {
  const Tensor& t = Input(c, i, "input_handle");
  const TensorList* list = TensorList::From(t);
  if (list == nullptr) {
    throw InvalidArgumentError(StrCat(Where(c), ": input ", i,
                                      " must be a TensorList (a variant scalar), got a ", t.dtype(),
                                      " tensor of shape ", t.shape()));
  }
  return *list;
}

// The node's element_dtype attribute, which must be the list's.
DType ElementDType(const NodeContext& c, const TensorList* list = nullptr) {
  const DType want = c.attrs.GetType("element_dtype");
  if (list != nullptr && list->element_dtype() != want) {
    throw InvalidArgumentError(StrCat("Invalid data types; op elements ", want,
                                      " but list elements ", list->element_dtype(), " (", Where(c),
                                      ")"));
  }
  return want;
}

// An int32 (or int64) scalar input, e.g. an index or a size.
int64_t ScalarInput(const NodeContext& c, size_t i, const char* name) {
  const Tensor& t = Input(c, i, name);
  if (t.rank() != 0 || (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64)) {
    throw InvalidArgumentError(StrCat(Where(c), ": ", name, " must be an int32 scalar, got a ",
                                      t.dtype(), " tensor of shape ", t.shape()));
  }
  return t.dtype() == DType::kInt32 ? t.data<int32_t>()[0] : t.data<int64_t>()[0];
}

// A list size read from a tensor: 0 <= n <= kMaxListElements.
int64_t CheckedSize(const NodeContext& c, int64_t n, const char* what) {
  if (n < 0 || n > kMaxListElements) {
    throw InvalidArgumentError(
        StrCat(Where(c), ": ", what, " is ", n, "; expected 0 to ", kMaxListElements));
  }
  return n;
}

// An element_shape input as TF reads it (TensorShapeFromTensor): the scalar
// -1 is an unknown rank, a vector has -1 for unknown dimensions.
Shape ShapeInput(const NodeContext& c, size_t i) {
  const Tensor& t = Input(c, i, "element_shape");
  std::vector<int64_t> dims;
  if (t.dtype() == DType::kInt32) {
    for (int32_t d : t.data<int32_t>()) dims.push_back(d);
  } else if (t.dtype() == DType::kInt64) {
    dims = t.ToVector<int64_t>();
  } else {
    throw InvalidArgumentError(
        StrCat(Where(c), ": element_shape must be int32 or int64, got ", t.dtype()));
  }
  if (t.rank() == 0) {
    if (dims[0] != -1) {
      throw InvalidArgumentError(StrCat(Where(c), ": element_shape is the scalar ", dims[0],
                                        "; a scalar shape must be -1 (unknown rank)"));
    }
    return Shape::UnknownRank();
  }
  if (t.rank() != 1 || static_cast<int64_t>(dims.size()) > Shape::kMaxRank ||
      std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < -1; })) {
    throw InvalidArgumentError(StrCat(Where(c), ": element_shape must be a vector of at most ",
                                      Shape::kMaxRank, " dimensions >= -1, got ", t.DebugString()));
  }
  return Shape::Partial(dims);
}

// The shape both `a` and `b` describe (TF's MergeWith), or the error.
Shape MergeShapes(const NodeContext& c, const Shape& a, const Shape& b, const char* what) {
  if (a.unknown_rank()) return b;
  if (b.unknown_rank()) return a;
  if (!a.IsCompatibleWith(b)) {
    throw InvalidArgumentError(
        StrCat(Where(c), ": ", what, ": shapes ", a, " and ", b, " are incompatible"));
  }
  std::vector<int64_t> dims = a.ToVector();
  for (int i = 0; i < b.rank(); ++i) {
    if (dims[static_cast<size_t>(i)] == Shape::kUnknownDim) dims[static_cast<size_t>(i)] = b.dim(i);
  }
  return Shape::Partial(dims);
}

// Zeros for an unset element, of a shape the graph gave: within the
// Session's memory limit (SessionOptions::memory_limit_bytes).
Tensor Zeros(const NodeContext& c, const Shape& shape, DType dtype) {
  internal::CheckTensorBytes(c.node.op, shape, dtype);
  return Tensor::Zeros(shape, dtype);
}

// The rows of `t` along its first dimension.
Shape RowShape(const Tensor& t) { return Shape(t.shape().dims().subspan(1)); }

// Rows [start, start + count) of `t`: a tensor of shape [count, rows...].
// REQUIRES: they are in range.
Tensor Rows(const Tensor& t, int64_t start, int64_t count) {
  std::vector<int64_t> dims = t.shape().ToVector();
  dims[0] = count;
  Tensor rows = internal::NewTensor(Shape(dims), t.dtype());
  const int64_t n = rows.num_elements();
  const int64_t per_row = count == 0 ? 0 : n / count;
  VisitDType(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* from = t.data<T>().data() + start * per_row;
    std::copy(from, from + n, internal::MutableData<T>(rows));
  });
  return rows;
}

// Row i of `t`, without the first dimension.
Tensor Row(const Tensor& t, int64_t i) { return internal::WithShape(Rows(t, i, 1), RowShape(t)); }

// Elements `items` stacked on a new first dimension: [items.size(), shape...].
Tensor StackRows(const NodeContext& c, std::span<const Tensor> items, const Shape& shape,
                 DType dtype) {
  std::vector<int64_t> dims = {static_cast<int64_t>(items.size())};
  const std::span<const int64_t> inner = shape.dims();
  dims.insert(dims.end(), inner.begin(), inner.end());
  if (dims.size() > static_cast<size_t>(Shape::kMaxRank)) {
    throw InvalidArgumentError(StrCat(Where(c), ": stacking elements of shape ", shape,
                                      " gives rank ", dims.size(), "; eager's limit is ",
                                      Shape::kMaxRank));
  }
  const Shape out_shape(dims);
  internal::CheckTensorBytes(c.node.op, out_shape, dtype);
  Tensor out = internal::NewTensor(out_shape, dtype);
  const int64_t n = shape.num_elements();
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* to = internal::MutableData<T>(out);
    for (const Tensor& item : items) {
      std::span<const T> from = item.data<T>();
      std::copy(from.begin(), from.end(), to);
      to += n;
    }
  });
  return out;
}

// Checks `item` can be an element of `list` (dtype, shape) for node `c`.
void CheckElement(const NodeContext& c, const TensorList& list, const Tensor& item) {
  if (item.dtype() != list.element_dtype()) {
    throw InvalidArgumentError(StrCat(Where(c), ": the list holds ", list.element_dtype(),
                                      " elements; got a ", item.dtype(), " tensor"));
  }
  if (!list.element_shape().IsCompatibleWith(item.shape())) {
    throw InvalidArgumentError(StrCat(Where(c), ": the list's element shape is ",
                                      list.element_shape(), "; got an element of shape ",
                                      item.shape()));
  }
}

// The elements at `indices`, unset ones as zeros of the element shape
// (the list's, the node's `node_shape` and the set elements' merged): all
// must have one shape.
std::vector<Tensor> Items(const NodeContext& c, const TensorList& list,
                          std::span<const int64_t> indices, const Shape& node_shape, Shape& shape) {
  shape = MergeShapes(c, list.element_shape(), node_shape, "the element shape");
  for (int64_t i : indices) {
    if (i < 0 || i >= list.size()) {
      throw InvalidArgumentError(StrCat(Where(c), ": index ", i, " is out of range for a list of ",
                                        list.size(), " elements"));
    }
    if (const Tensor* item = list.item(i)) {
      if (!shape.IsCompatibleWith(item->shape())) {
        throw InvalidArgumentError(StrCat(Where(c), ": element ", i, " has shape ", item->shape(),
                                          ", incompatible with the element shape ", shape,
                                          " (all elements must have one shape)"));
      }
      shape = item->shape();
    }
  }
  std::vector<Tensor> items;
  items.reserve(indices.size());
  std::optional<Tensor> zeros;
  for (int64_t i : indices) {
    if (const Tensor* item = list.item(i)) {
      items.push_back(*item);
      continue;
    }
    if (!shape.IsFullyDefined()) {
      throw InvalidArgumentError(
          StrCat(Where(c), ": element ", i,
                 " was never set and the element shape is not fully defined: ", shape,
                 " (TF: \"Trying to read an uninitialized tensor but element_shape is not fully "
                 "defined\")"));
    }
    if (!zeros) zeros = Zeros(c, shape, list.element_dtype());
    items.push_back(*zeros);
  }
  return items;
}

Tensor Stacked(const NodeContext& c, const TensorList& list, std::span<const int64_t> indices,
               const Shape& node_shape) {
  Shape shape;
  const std::vector<Tensor> items = Items(c, list, indices, node_shape, shape);
  if (!shape.IsFullyDefined()) {
    throw InvalidArgumentError(StrCat(Where(c),
                                      ": no elements to take the shape from and the "
                                      "element shape ",
                                      shape, " is not fully defined"));
  }
  return StackRows(c, items, shape, list.element_dtype());
}

std::atomic<int64_t> list_copies{0};

// A list to return: `in`'s own when nobody else can see it, else a copy.
std::shared_ptr<TensorList> Writable(const NodeContext& c, size_t input) {
  const Tensor& t = c.inputs[input];
  if (TensorList::TryMutable(t) != nullptr) {
    return std::const_pointer_cast<TensorList>(TensorList::Shared(t));
  }
  list_copies.fetch_add(1, std::memory_order_relaxed);
  return std::make_shared<TensorList>(ListInput(c, input));
}

NodeOutputs Result(std::shared_ptr<TensorList> list) {
  return {{TensorList::ToTensor(std::move(list))}};
}

// ---- Making lists -------------------------------------------------------------------------

NodeOutputs RunEmptyTensorList(const NodeContext& c) {
  const Shape shape = ShapeInput(c, 0);
  const int64_t max = ScalarInput(c, 1, "max_num_elements");
  return Result(std::make_shared<TensorList>(ElementDType(c), shape, max));
}

NodeOutputs RunTensorListReserve(const NodeContext& c) {
  const Shape shape = ShapeInput(c, 0);
  const int64_t n = CheckedSize(c, ScalarInput(c, 1, "num_elements"), "num_elements");
  auto list = std::make_shared<TensorList>(ElementDType(c), shape);
  list->Resize(n);
  return Result(std::move(list));
}

NodeOutputs RunTensorListFromTensor(const NodeContext& c) {
  const Tensor& t = Input(c, 0, "tensor");
  const DType dtype = ElementDType(c);
  if (t.dtype() != dtype) {
    throw InvalidArgumentError(
        StrCat(Where(c), ": tensor is ", t.dtype(), "; element_dtype is ", dtype));
  }
  if (t.rank() < 1) {
    throw InvalidArgumentError(
        StrCat(Where(c), ": tensor must be at least a vector, but saw shape ", t.shape()));
  }
  const Shape shape = ShapeInput(c, 1);
  if (!shape.IsCompatibleWith(RowShape(t))) {
    throw InvalidArgumentError(StrCat(Where(c), ": the rows of a tensor of shape ", t.shape(),
                                      " do not have the element shape ", shape));
  }
  auto list = std::make_shared<TensorList>(dtype, shape);
  for (int64_t i = 0; i < t.shape().dim(0); ++i) list->PushBack(Row(t, i));
  return Result(std::move(list));
}

NodeOutputs RunTensorListScatterV2(const NodeContext& c) {
  const Tensor& t = Input(c, 0, "tensor");
  const Tensor& indices = Input(c, 1, "indices");
  const DType dtype = ElementDType(c);
  const Shape shape = ShapeInput(c, 2);
  const int64_t requested = ScalarInput(c, 3, "num_elements");
  if (t.dtype() != dtype || t.rank() < 1) {
    throw InvalidArgumentError(StrCat(Where(c), ": tensor must be a ", dtype,
                                      " tensor of rank >= 1, got a ", t.dtype(), " of shape ",
                                      t.shape()));
  }
  if (indices.dtype() != DType::kInt32 || indices.rank() != 1 ||
      indices.num_elements() != t.shape().dim(0)) {
    throw InvalidArgumentError(StrCat(Where(c), ": indices must be an int32 vector of ",
                                      t.shape().dim(0), " (tensor's rows), got a ", indices.dtype(),
                                      " tensor of shape ", indices.shape()));
  }
  if (!shape.IsCompatibleWith(RowShape(t))) {
    throw InvalidArgumentError(StrCat(Where(c), ": the rows of a tensor of shape ", t.shape(),
                                      " do not have the element shape ", shape));
  }
  // TF: num_elements -1 means one past the largest index.
  int64_t n = requested;
  if (requested == -1) {
    n = 0;
    for (int32_t i : indices.data<int32_t>()) n = std::max<int64_t>(n, int64_t{i} + 1);
  }
  auto list = std::make_shared<TensorList>(dtype, shape);
  list->Resize(CheckedSize(c, n, "num_elements"));
  const std::span<const int32_t> at = indices.data<int32_t>();
  for (size_t k = 0; k < at.size(); ++k) {
    if (at[k] < 0 || at[k] >= n) {
      throw InvalidArgumentError(
          StrCat(Where(c), ": index ", at[k], " is out of range for ", n, " elements"));
    }
    list->Set(at[k], Row(t, static_cast<int64_t>(k)));
  }
  return Result(std::move(list));
}

// ---- Reading lists ------------------------------------------------------------------------

NodeOutputs RunTensorListStack(const NodeContext& c) {
  const TensorList& list = ListInput(c, 0);
  ElementDType(c, &list);
  const int64_t want = c.attrs.Has("num_elements") ? c.attrs.GetInt("num_elements") : -1;
  if (want != -1 && want != list.size()) {
    throw InvalidArgumentError(StrCat(Where(c), ": operation expected a list with ", want,
                                      " elements but got a list with ", list.size(), " elements"));
  }
  std::vector<int64_t> all(static_cast<size_t>(list.size()));
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  return {{Stacked(c, list, all, ShapeInput(c, 1))}};
}

NodeOutputs RunTensorListGather(const NodeContext& c) {
  const TensorList& list = ListInput(c, 0);
  ElementDType(c, &list);
  const Tensor& indices = Input(c, 1, "indices");
  if (indices.dtype() != DType::kInt32 || indices.rank() != 1) {
    throw InvalidArgumentError(StrCat(Where(c), ": indices must be an int32 vector, got a ",
                                      indices.dtype(), " tensor of shape ", indices.shape()));
  }
  std::vector<int64_t> at;
  for (int32_t i : indices.data<int32_t>()) at.push_back(i);
  return {{Stacked(c, list, at, ShapeInput(c, 2))}};
}

NodeOutputs RunTensorListGetItem(const NodeContext& c) {
  const TensorList& list = ListInput(c, 0);
  ElementDType(c, &list);
  const int64_t i = ScalarInput(c, 1, "index");
  const int64_t at[] = {i};
  Shape shape;
  return {{Items(c, list, at, ShapeInput(c, 2), shape)[0]}};
}

NodeOutputs RunTensorListLength(const NodeContext& c) {
  return {{Tensor(static_cast<int32_t>(ListInput(c, 0).size()))}};
}

NodeOutputs RunTensorListElementShape(const NodeContext& c) {
  const Shape& shape = ListInput(c, 0).element_shape();
  const DType out = c.attrs.Has("shape_type") ? c.attrs.GetType("shape_type") : DType::kInt32;
  std::vector<int64_t> dims = shape.ToVector();
  Tensor result = shape.unknown_rank() ? Tensor(int64_t{-1}) : Tensor::FromVector<int64_t>(dims);
  if (out == DType::kInt64) return {{result}};
  EAGER_CHECK(out == DType::kInt32, Where(c), ": shape_type must be int32 or int64, got ", out);
  if (shape.unknown_rank()) return {{Tensor(int32_t{-1})}};
  return {{Tensor::FromVector<int32_t>(std::vector<int32_t>(dims.begin(), dims.end()))}};
}

// ---- New lists from old ones --------------------------------------------------------------

NodeOutputs RunTensorListSetItem(const NodeContext& c) {
  const TensorList& in = ListInput(c, 0);
  ElementDType(c, &in);
  const int64_t i = ScalarInput(c, 1, "index");
  const Tensor& item = Input(c, 2, "item");
  CheckElement(c, in, item);
  const bool resize = c.attrs.Has("resize_if_index_out_of_bounds") &&
                      c.attrs.GetBool("resize_if_index_out_of_bounds");
  if (i < 0 || (i >= in.size() && !resize)) {
    throw InvalidArgumentError(StrCat(Where(c), ": trying to modify element ", i,
                                      " in a list with ", in.size(), " elements"));
  }
  std::shared_ptr<TensorList> out = Writable(c, 0);
  if (i >= out->size()) out->Resize(CheckedSize(c, i + 1, "the resized list's size"));
  out->Set(i, item);
  return Result(std::move(out));
}

NodeOutputs RunTensorListPushBack(const NodeContext& c) {
  const TensorList& in = ListInput(c, 0);
  ElementDType(c, &in);
  const Tensor& item = Input(c, 1, "tensor");
  CheckElement(c, in, item);
  if (in.max_num_elements() >= 0 && in.size() >= in.max_num_elements()) {
    throw InvalidArgumentError(StrCat(Where(c), ": tried to push an element into a list with ",
                                      in.size(), " elements, its max_num_elements"));
  }
  CheckedSize(c, in.size() + 1, "the list's size");
  std::shared_ptr<TensorList> out = Writable(c, 0);
  out->PushBack(item);
  return Result(std::move(out));
}

NodeOutputs RunTensorListPopBack(const NodeContext& c) {
  const TensorList& in = ListInput(c, 0);
  ElementDType(c, &in);
  if (in.size() == 0) {
    throw OutOfRangeError(StrCat(Where(c), ": trying to pop from an empty list"));
  }
  const int64_t last[] = {in.size() - 1};
  Shape shape;
  Tensor item = Items(c, in, last, ShapeInput(c, 1), shape)[0];
  std::shared_ptr<TensorList> out = Writable(c, 0);
  out->PopBack();
  return {{TensorList::ToTensor(std::move(out)), std::move(item)}};
}

NodeOutputs RunTensorListScatterIntoExistingList(const NodeContext& c) {
  const TensorList& in = ListInput(c, 0);
  ElementDType(c, &in);
  const Tensor& t = Input(c, 1, "tensor");
  const Tensor& indices = Input(c, 2, "indices");
  if (t.dtype() != in.element_dtype() || t.rank() < 1) {
    throw InvalidArgumentError(StrCat(Where(c), ": tensor must be a ", in.element_dtype(),
                                      " tensor of rank >= 1, got a ", t.dtype(), " of shape ",
                                      t.shape()));
  }
  if (indices.dtype() != DType::kInt32 || indices.rank() != 1 ||
      indices.num_elements() != t.shape().dim(0)) {
    throw InvalidArgumentError(StrCat(Where(c), ": indices must be an int32 vector of ",
                                      t.shape().dim(0), " (tensor's rows), got a ", indices.dtype(),
                                      " tensor of shape ", indices.shape()));
  }
  if (!in.element_shape().IsCompatibleWith(RowShape(t))) {
    throw InvalidArgumentError(StrCat(Where(c), ": the list's element shape is ",
                                      in.element_shape(), "; the rows of tensor have shape ",
                                      RowShape(t)));
  }
  const std::span<const int32_t> at = indices.data<int32_t>();
  int64_t size = in.size();
  for (int32_t i : at) {
    if (i < 0) {
      throw InvalidArgumentError(StrCat(Where(c), ": index ", i, " is negative"));
    }
    size = std::max<int64_t>(size, int64_t{i} + 1);  // TF grows the list to fit
  }
  CheckedSize(c, size, "the list's size after scattering");
  std::shared_ptr<TensorList> out = Writable(c, 0);
  out->Resize(size);
  for (size_t k = 0; k < at.size(); ++k) out->Set(at[k], Row(t, static_cast<int64_t>(k)));
  return Result(std::move(out));
}

// TF's TensorListConcatV2: the elements (each of rank >= 1) concatenated
// along their first dimension, and each one's length. An unset element is
// zeros of the element shape, its first dimension from leading_dims when
// the shape does not give it.
NodeOutputs RunTensorListConcatV2(const NodeContext& c) {
  const TensorList& list = ListInput(c, 0);
  const DType dtype = ElementDType(c, &list);
  Shape shape = MergeShapes(c, list.element_shape(), ShapeInput(c, 1), "the element shape");
  const Tensor& leading = Input(c, 2, "leading_dims");
  if (leading.dtype() != DType::kInt64 || leading.rank() != 1) {
    throw InvalidArgumentError(StrCat(Where(c), ": leading_dims must be an int64 vector, got a ",
                                      leading.dtype(), " tensor of shape ", leading.shape()));
  }
  if (!shape.unknown_rank() && shape.rank() == 0) {
    throw InvalidArgumentError(
        StrCat(Where(c), ": concat requires elements of rank >= 1; the element shape is []"));
  }
  // The inner dimensions, merged over the set elements.
  Shape inner =
      shape.unknown_rank() ? Shape::UnknownRank() : Shape::Partial(shape.dims().subspan(1));
  for (int64_t i = 0; i < list.size(); ++i) {
    const Tensor* item = list.item(i);
    if (item == nullptr) continue;
    if (item->rank() == 0 || !shape.IsCompatibleWith(item->shape())) {
      throw InvalidArgumentError(StrCat(Where(c), ": element ", i, " has shape ", item->shape(),
                                        "; concat needs elements of rank >= 1 and shape ", shape));
    }
    inner = MergeShapes(c, inner, RowShape(*item), "the elements' inner dimensions");
  }
  if (!inner.IsFullyDefined()) {
    throw InvalidArgumentError(StrCat(Where(c), ": cannot concat: the elements' inner dimensions ",
                                      inner, " are not known"));
  }
  std::vector<Tensor> parts;
  std::vector<int64_t> lengths;
  int64_t total = 0;
  for (int64_t i = 0; i < list.size(); ++i) {
    const Tensor* item = list.item(i);
    if (item != nullptr) {
      parts.push_back(*item);
    } else {
      int64_t first = shape.unknown_rank() ? Shape::kUnknownDim : shape.dim(0);
      if (first == Shape::kUnknownDim) {
        if (i >= leading.num_elements()) {
          throw InvalidArgumentError(StrCat(Where(c), ": element ", i,
                                            " is unset and neither the element shape nor "
                                            "leading_dims gives its first dimension"));
        }
        first = CheckedSize(c, leading.data<int64_t>()[i], "leading_dims entry");
      }
      std::vector<int64_t> dims = {first};
      const std::span<const int64_t> rest = inner.dims();
      dims.insert(dims.end(), rest.begin(), rest.end());
      parts.push_back(Zeros(c, Shape(dims), dtype));
    }
    lengths.push_back(parts.back().shape().dim(0));
    total += lengths.back();
  }
  std::vector<int64_t> dims = {CheckedSize(c, total, "the concatenated length")};
  const std::span<const int64_t> rest = inner.dims();
  dims.insert(dims.end(), rest.begin(), rest.end());
  const Shape out_shape(dims);
  internal::CheckTensorBytes(c.node.op, out_shape, dtype);
  Tensor out = internal::NewTensor(out_shape, dtype);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* to = internal::MutableData<T>(out);
    for (const Tensor& part : parts) {
      std::span<const T> from = part.data<T>();
      to = std::copy(from.begin(), from.end(), to);
    }
  });
  return {{std::move(out), Tensor::FromVector<int64_t>(std::move(lengths))}};
}

// TF's TensorListSplit: consecutive row ranges of `tensor`, of `lengths`.
NodeOutputs RunTensorListSplit(const NodeContext& c) {
  const Tensor& t = Input(c, 0, "tensor");
  const DType dtype = ElementDType(c);
  if (t.dtype() != dtype || t.rank() < 1) {
    throw InvalidArgumentError(StrCat(Where(c), ": tensor must be a ", dtype,
                                      " tensor of rank >= 1, got a ", t.dtype(), " of shape ",
                                      t.shape()));
  }
  const Shape shape = ShapeInput(c, 1);
  const Tensor& lengths = Input(c, 2, "lengths");
  if (lengths.dtype() != DType::kInt64 || lengths.rank() != 1) {
    throw InvalidArgumentError(StrCat(Where(c), ": lengths must be an int64 vector, got a ",
                                      lengths.dtype(), " tensor of shape ", lengths.shape()));
  }
  CheckedSize(c, lengths.num_elements(), "the number of lengths");
  int64_t start = 0;
  for (int64_t n : lengths.data<int64_t>()) {
    if (n < 0 || n > t.shape().dim(0) - start) {
      throw InvalidArgumentError(StrCat(Where(c), ": lengths ", lengths.ValuesString(),
                                        " do not split the ", t.shape().dim(0), " rows of tensor"));
    }
    start += n;
  }
  if (start != t.shape().dim(0)) {
    throw InvalidArgumentError(
        StrCat(Where(c), ": lengths sum to ", start, "; tensor has ", t.shape().dim(0), " rows"));
  }
  auto list = std::make_shared<TensorList>(dtype, shape);
  start = 0;
  for (int64_t n : lengths.data<int64_t>()) {
    Tensor part = Rows(t, start, n);
    if (!shape.IsCompatibleWith(part.shape())) {
      throw InvalidArgumentError(StrCat(Where(c), ": a part of shape ", part.shape(),
                                        " does not have the element shape ", shape));
    }
    list->PushBack(std::move(part));
    start += n;
  }
  return Result(std::move(list));
}

NodeOutputs RunTensorListResize(const NodeContext& c) {
  ListInput(c, 0);
  const int64_t n = CheckedSize(c, ScalarInput(c, 1, "size"), "size");
  std::shared_ptr<TensorList> out = Writable(c, 0);
  out->Resize(n);
  return Result(std::move(out));
}

}  // namespace

const OpDef kEmptyTensorListOp = {
    .type = "EmptyTensorList", .num_inputs = 2, .run = RunEmptyTensorList};
const OpDef kTensorListReserveOp = {
    .type = "TensorListReserve", .num_inputs = 2, .run = RunTensorListReserve};
const OpDef kTensorListFromTensorOp = {
    .type = "TensorListFromTensor", .num_inputs = 2, .run = RunTensorListFromTensor};
const OpDef kTensorListStackOp = {
    .type = "TensorListStack", .num_inputs = 2, .run = RunTensorListStack};
const OpDef kTensorListGatherOp = {
    .type = "TensorListGather", .num_inputs = 3, .run = RunTensorListGather};
const OpDef kTensorListGetItemOp = {
    .type = "TensorListGetItem", .num_inputs = 3, .run = RunTensorListGetItem};
const OpDef kTensorListSetItemOp = {
    .type = "TensorListSetItem", .num_inputs = 3, .run = RunTensorListSetItem};
const OpDef kTensorListPushBackOp = {
    .type = "TensorListPushBack", .num_inputs = 2, .run = RunTensorListPushBack};
const OpDef kTensorListPopBackOp = {
    .type = "TensorListPopBack", .num_inputs = 2, .run = RunTensorListPopBack, .num_outputs = 2};
const OpDef kTensorListLengthOp = {
    .type = "TensorListLength", .num_inputs = 1, .run = RunTensorListLength};
const OpDef kTensorListElementShapeOp = {
    .type = "TensorListElementShape", .num_inputs = 1, .run = RunTensorListElementShape};
const OpDef kTensorListScatterIntoExistingListOp = {.type = "TensorListScatterIntoExistingList",
                                                    .num_inputs = 3,
                                                    .run = RunTensorListScatterIntoExistingList};
const OpDef kTensorListScatterV2Op = {
    .type = "TensorListScatterV2", .num_inputs = 4, .run = RunTensorListScatterV2};
const OpDef kTensorListConcatV2Op = {
    .type = "TensorListConcatV2", .num_inputs = 3, .run = RunTensorListConcatV2, .num_outputs = 2};
const OpDef kTensorListSplitOp = {
    .type = "TensorListSplit", .num_inputs = 3, .run = RunTensorListSplit};
const OpDef kTensorListResizeOp = {
    .type = "TensorListResize", .num_inputs = 2, .run = RunTensorListResize};

int64_t internal::TensorListCopies() { return list_copies.load(std::memory_order_relaxed); }

}  // namespace eager
