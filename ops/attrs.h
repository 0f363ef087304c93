#pragma once

// Attrs: the non-tensor arguments of one op call (axes, flags, a dtype),
// named as in TensorFlow's OpDefs ("transpose_a", "keep_dims", "axis") so
// that a recorded call can be exported to a GraphDef unchanged.
//
// Small and cheap: most calls carry none, and then nothing is allocated.
// Names must be string literals (they are stored as string_views); string
// values (Conv2D's padding "SAME") are owned.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/errors.h"
#include "runtime/shape.h"

namespace eager {

using AttrValue =
    std::variant<bool, int64_t, double, std::vector<int64_t>, DType, Shape, std::string>;

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string_view, AttrValue>> attrs)
      : attrs_(attrs.begin(), attrs.end()) {}

  Attrs& Set(std::string_view name, AttrValue value) {
    for (auto& [n, v] : attrs_) {
      if (n == name) {
        v = std::move(value);
        return *this;
      }
    }
    attrs_.emplace_back(name, std::move(value));
    return *this;
  }

  bool Has(std::string_view name) const { return Find(name) != nullptr; }

  // Typed getters; throw InternalError when the attr is missing or of another
  // type (the op's own wrapper sets them, so that is an eager bug).
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

  const std::vector<std::pair<std::string_view, AttrValue>>& items() const { return attrs_; }

 private:
  const AttrValue* Find(std::string_view name) const {
    for (const auto& [n, v] : attrs_) {
      if (n == name) return &v;
    }
    return nullptr;
  }

  std::vector<std::pair<std::string_view, AttrValue>> attrs_;
};

// No attrs: the default argument of Execute. A `= {}` default builds and
// destroys an Attrs on every op call; this one exists once.
inline constexpr Attrs kNoAttrs{};

}  // namespace eager
