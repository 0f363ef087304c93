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
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/errors.h"
#include "runtime/shape.h"
#include "runtime/tensor.h"

namespace eager {

// One value, as TF's AttrValue holds it: b, i, f (a double here; a file's
// float converts exactly both ways), s, type, shape, tensor, list(i),
// list(s), list(type), list(shape).
using AttrValue =
    std::variant<bool, int64_t, double, std::string, DType, Shape, Tensor, std::vector<int64_t>,
                 std::vector<std::string>, std::vector<DType>, std::vector<Shape>>;

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
  // Sets `name` to `value` unless it has a value (TF's attr defaults).
  Attrs& SetDefault(std::string_view name, AttrValue value) {
    if (!Has(name)) attrs_.emplace_back(std::string(name), std::move(value));
    return *this;
  }
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
    const AttrValue* v = Find(name);
    if (v == nullptr || !std::holds_alternative<T>(*v)) {
      throw InternalError(StrCat("op attr '", name, "' is missing or has the wrong type"));
    }
    return std::get<T>(*v);
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

}  // namespace eager
