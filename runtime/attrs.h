#pragma once

// Attrs: the non-tensor arguments of an op, one type for every place that
// holds them: an eager op call (ops/execute.h), a graph node
// (runtime/graph.h: Node::attrs), the op signatures' defaults
// (runtime/op_signature.h). Names and values are TensorFlow's ("T",
// "transpose_a", "keep_dims", "value" for a Const), so a call becomes a
// NodeDef unchanged and a NodeDef's attributes reach the kernel unchanged.
//
//   Attrs attrs = {{"transpose_a", false}, {"transpose_b", true}};
//   attrs.GetBool("transpose_b");        // true
//   attrs.Set("T", DType::kFloat32);
//
// Small and cheap: most calls carry none, and then nothing is allocated; a
// few are a short vector searched linearly. Names are owned (short ones stay
// in the string's own buffer).

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/errors.h"
#include "runtime/shape.h"
#include "runtime/tensor.h"

namespace eager {

// A big attribute value (a Shape, a Tensor) on the heap, shared by copies and
// never changed: what keeps an AttrValue as small as a std::string. A graph
// of millions of nodes holds millions of attributes, and a Tensor inline
// made each some 150 bytes; sharing (not a deep copy) keeps copying attrs,
// as a Session and graph builders do, a reference-count increment.
// Implicit from a T; read through AttrAs<T> (below), or `*box`.
template <typename T>
class AttrBox {
 public:
  AttrBox(T value) : value_(std::make_shared<const T>(std::move(value))) {}  // NOLINT: implicit
  const T& operator*() const { return *value_; }
  const T* operator->() const { return value_.get(); }

 private:
  std::shared_ptr<const T> value_;
};

// One value, as TF's AttrValue holds it: b, i, f (a double here; a file's
// float converts exactly both ways), s, type, shape, tensor, list(i),
// list(s), list(type), list(shape). Shapes and tensors are boxed; read any
// kind with AttrAs<T>, which sees through the box.
using AttrValue = std::variant<bool, int64_t, double, std::string, DType, AttrBox<Shape>,
                               AttrBox<Tensor>, std::vector<int64_t>, std::vector<std::string>,
                               std::vector<DType>, std::vector<Shape>>;

// The value as a T (Shape and Tensor unboxed), or nullptr when `value` is
// nullptr or holds another kind: std::get_if for attribute values.
//
//   if (const Shape* shape = AttrAs<Shape>(node.FindAttr("shape"))) ...
template <typename T>
const T* AttrAs(const AttrValue* value) {
  if constexpr (std::is_same_v<T, Shape> || std::is_same_v<T, Tensor>) {
    const auto* box = std::get_if<AttrBox<T>>(value);
    return box == nullptr ? nullptr : &**box;
  } else {
    return std::get_if<T>(value);
  }
}

// std::visit on an AttrValue that calls `visitor` with the value itself: a
// const Shape& or const Tensor& for the boxed kinds.
template <typename Visitor>
decltype(auto) VisitAttr(Visitor&& visitor, const AttrValue& value) {
  return std::visit(
      [&](const auto& v) -> decltype(auto) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, AttrBox<Shape>> || std::is_same_v<V, AttrBox<Tensor>>) {
          return visitor(*v);
        } else {
          return visitor(v);
        }
      },
      value);
}

class Attrs {
 public:
  using Item = std::pair<std::string, AttrValue>;

  constexpr Attrs() = default;
  Attrs(std::initializer_list<Item> attrs) : attrs_(attrs.begin(), attrs.end()) {}

  // Sets `name` to `value`, replacing any value it had.
  Attrs& Set(std::string_view name, AttrValue value) {
    for (auto& [n, v] : attrs_) {
      if (n == name) {
        v = std::move(value);
        return *this;
      }
    }
    attrs_.emplace_back(std::string(name), std::move(value));
    return *this;
  }
  // Adds `name`, which the caller knows is not set (an importer copying a
  // file's attributes, unique by name): no search, so n of them are linear.
  Attrs& AddUnique(std::string name, AttrValue value) {
    attrs_.emplace_back(std::move(name), std::move(value));
    return *this;
  }
  // Sets `name` to `value` unless it has a value (TF's attr defaults).
  Attrs& SetDefault(std::string_view name, AttrValue value) {
    if (!Has(name)) attrs_.emplace_back(std::string(name), std::move(value));
    return *this;
  }
  // Makes room for `n` attributes in all (an importer knows how many).
  void Reserve(size_t n) { attrs_.reserve(n); }
  // Removes `name` if set.
  void Erase(std::string_view name) {
    std::erase_if(attrs_, [&](const Item& item) { return item.first == name; });
  }

  bool Has(std::string_view name) const { return Find(name) != nullptr; }
  // The value of `name`, or nullptr.
  const AttrValue* Find(std::string_view name) const {
    for (const auto& [n, v] : attrs_) {
      if (n == name) return &v;
    }
    return nullptr;
  }

  // Typed getters; throw InternalError when the attr is missing or of another
  // type (an op's own wrapper sets them, and a Session checks a node's before
  // its kernel runs, so that is an eager bug).
  template <typename T>
  const T& Get(std::string_view name) const {
    const T* value = AttrAs<T>(Find(name));
    if (value == nullptr) {
      throw InternalError(StrCat("op attr '", name, "' is missing or has the wrong type"));
    }
    return *value;
  }
  bool GetBool(std::string_view name) const { return Get<bool>(name); }
  int64_t GetInt(std::string_view name) const { return Get<int64_t>(name); }
  double GetFloat(std::string_view name) const { return Get<double>(name); }
  const std::vector<int64_t>& GetInts(std::string_view name) const {
    return Get<std::vector<int64_t>>(name);
  }
  DType GetType(std::string_view name) const { return Get<DType>(name); }
  const Shape& GetShape(std::string_view name) const { return Get<Shape>(name); }
  const std::string& GetString(std::string_view name) const { return Get<std::string>(name); }

  // In the order they were first set.
  const std::vector<Item>& items() const { return attrs_; }
  std::vector<Item>::const_iterator begin() const { return attrs_.begin(); }
  std::vector<Item>::const_iterator end() const { return attrs_.end(); }
  size_t size() const { return attrs_.size(); }
  bool empty() const { return attrs_.empty(); }

 private:
  std::vector<Item> attrs_;
};

// No attrs: the default argument of Execute. A `= {}` default builds and
// destroys an Attrs on every op call; this one exists once.
inline constexpr Attrs kNoAttrs{};

// As small as a std::string: boxes keep the big kinds out of line.
static_assert(sizeof(AttrValue) <= sizeof(std::string) + 8);
static_assert(sizeof(Attrs::Item) <= 2 * sizeof(std::string) + 8);

}  // namespace eager
