#include "ops/tensor_array_ops.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ops/internal/memory_limit.h"
#include "ops/op_def.h"
#include "runtime/graph.h"
#include "runtime/resource.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

std::string Where(const NodeContext& c) {
  return StrCat("node '", c.node.name, "' (", c.node.op, ")");
}

// One TensorArray: its elements by index, as written (a sparse map, so that
// a size read from a graph or a tensor allocates nothing).
class TensorArray final : public Resource {
 public:
  TensorArray(std::string name, DType dtype, int64_t size, bool dynamic_size, bool clear_after_read,
              Shape element_shape)
      : name_(std::move(name)),
        dtype_(dtype),
        size_(size),
        dynamic_size_(dynamic_size),
        clear_after_read_(clear_after_read),
        element_shape_(element_shape) {}

  std::string_view resource_kind() const override { return "TensorArray"; }
  std::string_view resource_name() const override { return name_; }
  int64_t size() const { return size_; }
  DType dtype() const { return dtype_; }
  const Shape& element_shape() const { return element_shape_; }

  void Write(const NodeContext& c, int64_t index, const Tensor& value) {
    if (value.dtype() != dtype_) {
      throw InvalidArgumentError(StrCat(Where(c), ": TensorArray ", name_, " has dtype ", dtype_,
                                        ", but the value written is ", value.dtype()));
    }
    if (!value.shape().IsCompatibleWith(element_shape_)) {
      throw InvalidArgumentError(StrCat(Where(c), ": could not write to TensorArray ", name_,
                                        " index ", index, ": its elements have shape ",
                                        element_shape_, ", the value ", value.shape()));
    }
    if (index < 0 || (index >= size_ && !dynamic_size_)) {
      throw InvalidArgumentError(StrCat(Where(c), ": tried to write to index ", index,
                                        " of TensorArray ", name_,
                                        ", which is not resizeable and has size ", size_));
    }
    const auto [it, added] = elements_.try_emplace(index, Element{value, false});
    if (!added) {
      throw InvalidArgumentError(
          StrCat(Where(c), ": could not write to TensorArray ", name_, " index ", index,
                 " because it has already been written to (TF writes each element once)"));
    }
    if (index >= size_) size_ = index + 1;
  }

  Tensor Read(const NodeContext& c, int64_t index) {
    if (index < 0 || index >= size_) {
      throw InvalidArgumentError(StrCat(Where(c), ": tried to read from index ", index,
                                        " of TensorArray ", name_, ", which has size ", size_));
    }
    const auto it = elements_.find(index);
    if (it == elements_.end()) {
      throw InvalidArgumentError(StrCat(Where(c), ": could not read from TensorArray ", name_,
                                        " index ", index,
                                        " because it has not yet been written to"));
    }
    if (it->second.cleared) {
      throw InvalidArgumentError(
          StrCat(Where(c), ": could not read TensorArray ", name_, " index ", index,
                 " twice because it was cleared after a previous read (clear_after_read = true)"));
    }
    Tensor value = it->second.value;
    if (clear_after_read_) {
      it->second.value = Tensor();
      it->second.cleared = true;
    }
    return value;
  }

 private:
  struct Element {
    Tensor value;
    bool cleared = false;
  };
  std::string name_;
  DType dtype_;
  int64_t size_;
  bool dynamic_size_;
  bool clear_after_read_;
  Shape element_shape_;
  std::map<int64_t, Element> elements_;
};

// The array the node's TensorArrayV3 made, kept until the node runs again.
struct ArrayState final : NodeState {
  std::unique_ptr<TensorArray> array;
};

// A shape attribute, unknown when absent (TF's default; the importer drops
// an unknown rank).
Shape ShapeAttr(const NodeContext& c, const char* name) {
  if (const Shape* s = AttrAs<Shape>(c.attrs.Find(name))) return *s;
  return Shape::UnknownRank();
}

// An int32 scalar input.
int64_t Index(const NodeContext& c, const Tensor& t, const char* what) {
  if (t.dtype() != DType::kInt32 || t.rank() != 0) {
    throw InvalidArgumentError(StrCat(Where(c), ": ", what, " must be an int32 scalar, got a ",
                                      t.dtype(), " tensor of shape ", t.shape()));
  }
  return t.data<int32_t>()[0];
}

// An int32 vector input.
std::vector<int64_t> Indices(const NodeContext& c, const Tensor& t) {
  if (t.dtype() != DType::kInt32 || t.rank() != 1) {
    throw InvalidArgumentError(StrCat(Where(c), ": indices must be an int32 vector, got a ",
                                      t.dtype(), " tensor of shape ", t.shape()));
  }
  const auto v = t.data<int32_t>();
  return {v.begin(), v.end()};
}

// refs[0] as a TensorArray, with `values` value inputs.
TensorArray& Array(const NodeContext& c, size_t values) {
  if (c.refs.size() != 1 || c.inputs.size() != values) {
    throw InvalidArgumentError(StrCat(Where(c), " takes a TensorArray handle and ", values,
                                      " tensors; it has ", c.refs.size(), " handle(s) and ",
                                      c.inputs.size(), " tensors"));
  }
  auto* array = dynamic_cast<TensorArray*>(c.refs[0]);
  if (array == nullptr) {
    throw InvalidArgumentError(StrCat(Where(c), " needs a TensorArray handle; it got ",
                                      c.refs[0]->resource_kind(), " '", c.refs[0]->resource_name(),
                                      "'"));
  }
  return *array;
}

// Row i of `t` (its first dimension), a new tensor.
Tensor Row(const Tensor& t, int64_t i) {
  std::vector<int64_t> dims(t.shape().dims().begin() + 1, t.shape().dims().end());
  const Shape shape(dims);
  Tensor row = internal::NewTensor(shape, t.dtype());
  const auto n = static_cast<size_t>(shape.num_elements());
  VisitDType(t.dtype(), [&](auto tag) {
    using V = typename decltype(tag)::type;
    const V* from = t.data<V>().data() + static_cast<size_t>(i) * n;
    V* to = internal::MutableData<V>(row);
    for (size_t k = 0; k < n; ++k) to[k] = from[k];
  });
  return row;
}

NodeOutputs RunTensorArray(const NodeContext& c) {
  if (c.inputs.size() != 1) {
    throw InvalidArgumentError(StrCat(Where(c), " takes 1 input (size), has ", c.inputs.size()));
  }
  const int64_t size = Index(c, c.inputs[0], "size");
  if (size < 0) {
    throw InvalidArgumentError(StrCat(Where(c), ": size must be >= 0, got ", size));
  }
  const auto* name = AttrAs<std::string>(c.attrs.Find("tensor_array_name"));
  auto state = std::make_unique<ArrayState>();
  state->array = std::make_unique<TensorArray>(
      name != nullptr && !name->empty() ? *name : c.node.name, c.attrs.GetType("dtype"), size,
      c.attrs.GetBool("dynamic_size"), c.attrs.GetBool("clear_after_read"),
      ShapeAttr(c, "element_shape"));
  TensorArray* array = state->array.get();
  *c.state = std::move(state);
  return {.values = {Tensor(), Tensor(0.0f)}, .ref = array};
}

NodeOutputs RunWrite(const NodeContext& c) {
  TensorArray& array = Array(c, 3);
  array.Write(c, Index(c, c.inputs[0], "index"), c.inputs[1]);
  return {{c.inputs[2]}};
}

NodeOutputs RunRead(const NodeContext& c) {
  TensorArray& array = Array(c, 2);
  return {{array.Read(c, Index(c, c.inputs[0], "index"))}};
}

NodeOutputs RunGather(const NodeContext& c) {
  TensorArray& array = Array(c, 2);
  const std::vector<int64_t> indices = Indices(c, c.inputs[0]);
  std::vector<Tensor> rows;
  rows.reserve(indices.size());
  for (int64_t i : indices) rows.push_back(array.Read(c, i));
  Shape element = rows.empty() ? ShapeAttr(c, "element_shape") : rows[0].shape();
  if (rows.empty() && !element.IsFullyDefined()) element = array.element_shape();
  if (!element.IsFullyDefined()) {
    throw InvalidArgumentError(StrCat(Where(c), ": gathering no elements of TensorArray ",
                                      array.resource_name(),
                                      " needs a fully defined element_shape, has ", element));
  }
  for (const Tensor& r : rows) {
    if (r.shape() != element) {
      throw InvalidArgumentError(StrCat(Where(c), ": TensorArray ", array.resource_name(),
                                        " has elements of shapes ", element, " and ", r.shape(),
                                        "; gathering stacks elements of one shape"));
    }
  }
  std::vector<int64_t> dims = {static_cast<int64_t>(rows.size())};
  dims.insert(dims.end(), element.dims().begin(), element.dims().end());
  const Shape shape(dims);
  internal::CheckTensorBytes(c.node.op, shape, array.dtype());
  Tensor out = internal::NewTensor(shape, array.dtype());
  const auto n = static_cast<size_t>(element.num_elements());
  VisitDType(array.dtype(), [&](auto tag) {
    using V = typename decltype(tag)::type;
    V* to = internal::MutableData<V>(out);
    for (const Tensor& r : rows) {
      const V* from = r.data<V>().data();
      for (size_t k = 0; k < n; ++k) *to++ = from[k];
    }
  });
  return {{out}};
}

NodeOutputs RunScatter(const NodeContext& c) {
  TensorArray& array = Array(c, 3);
  const std::vector<int64_t> indices = Indices(c, c.inputs[0]);
  const Tensor& value = c.inputs[1];
  if (value.rank() < 1 || value.shape().dim(0) != static_cast<int64_t>(indices.size())) {
    throw InvalidArgumentError(StrCat(Where(c), ": the value's first dimension must be the ",
                                      indices.size(), " indices', got shape ", value.shape()));
  }
  if (value.dtype() != array.dtype()) {
    throw InvalidArgumentError(StrCat(Where(c), ": TensorArray ", array.resource_name(),
                                      " has dtype ", array.dtype(), ", the value is ",
                                      value.dtype()));
  }
  for (size_t k = 0; k < indices.size(); ++k) {
    array.Write(c, indices[k], Row(value, static_cast<int64_t>(k)));
  }
  return {{c.inputs[2]}};
}

NodeOutputs RunSize(const NodeContext& c) {
  const TensorArray& array = Array(c, 1);
  return {{Tensor(static_cast<int32_t>(array.size()))}};
}

NodeOutputs RunClose(const NodeContext& c) {
  if (c.refs.size() != 1 || dynamic_cast<TensorArray*>(c.refs[0]) == nullptr) {
    throw InvalidArgumentError(StrCat(Where(c), " needs a TensorArray handle"));
  }
  return {};
}

}  // namespace

const OpDef kTensorArrayV3Op = {
    .type = "TensorArrayV3", .num_inputs = 1, .run = RunTensorArray, .num_outputs = 2};
const OpDef kTensorArrayWriteV3Op = {
    .type = "TensorArrayWriteV3", .num_inputs = 4, .run = RunWrite, .ref_inputs = 0b1};
const OpDef kTensorArrayReadV3Op = {
    .type = "TensorArrayReadV3", .num_inputs = 3, .run = RunRead, .ref_inputs = 0b1};
const OpDef kTensorArrayGatherV3Op = {
    .type = "TensorArrayGatherV3", .num_inputs = 3, .run = RunGather, .ref_inputs = 0b1};
const OpDef kTensorArrayScatterV3Op = {
    .type = "TensorArrayScatterV3", .num_inputs = 4, .run = RunScatter, .ref_inputs = 0b1};
const OpDef kTensorArraySizeV3Op = {
    .type = "TensorArraySizeV3", .num_inputs = 2, .run = RunSize, .ref_inputs = 0b1};
const OpDef kTensorArrayCloseV3Op = {.type = "TensorArrayCloseV3",
                                     .num_inputs = 1,
                                     .run = RunClose,
                                     .num_outputs = 0,
                                     .ref_inputs = 0b1};

}  // namespace eager
