#include "saving/keras/internal/keras_config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <utility>

#include "autodiff/activations.h"
#include "ops/nn_ops.h"
#include "ops/unary_ops.h"
#include "runtime/errors.h"

namespace eager::keras_internal {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A short rendering of a config value for messages: file-supplied, so
// bounded (a huge list or string is cut).
std::string Shown(const Json& v) {
  std::string s;
  if (v.is_object() || v.is_array()) {
    s = std::string(v.type_name()) + " of " + std::to_string(v.size());
  } else {
    s = v.dump();
  }
  if (s.size() > 60) s = s.substr(0, 60) + "...";
  return s;
}

}  // namespace

ConfigReader::ConfigReader(const Json& config, std::string file, std::string where)
    : config_(config), file_(std::move(file)), where_(std::move(where)) {
  if (!config_.is_object()) {
    throw InvalidArgumentError(StrCat(".keras file '", file_, "': ", where_, " is ",
                                      config_.type_name(), "; expected an object"));
  }
}

void ConfigReader::Invalid(const char* key, const std::string& what) const {
  throw InvalidArgumentError(StrCat(".keras file '", file_, "': ", Path(key), " ", what));
}

void ConfigReader::Unsupported(const char* key, const std::string& what) const {
  throw UnimplementedError(StrCat(".keras file '", file_, "': ", Path(key), ": ", what));
}

const Json* ConfigReader::Get(const char* key) {
  read_.insert(key);
  auto it = config_.find(key);
  if (it == config_.end() || it->is_null()) return nullptr;
  return &*it;
}

int64_t ConfigReader::AsInt(const Json& v, const char* key, int64_t min, int64_t max) const {
  if (!v.is_number_integer()) {
    Invalid(key, StrCat("is ", Shown(v), "; expected an integer in [", min, ", ", max, "]"));
  }
  // Compared as signed or unsigned as stored: 2^64 - 1 is not -1.
  const bool in_range = v.is_number_unsigned()
                            ? v.get<uint64_t>() <= static_cast<uint64_t>(max) &&
                                  (min <= 0 || v.get<uint64_t>() >= uint64_t(min))
                            : v.get<int64_t>() >= min && v.get<int64_t>() <= max;
  if (!in_range)
    Invalid(key, StrCat("is ", Shown(v), "; expected an integer in [", min, ", ", max, "]"));
  return v.get<int64_t>();
}

int64_t ConfigReader::Int(const char* key, int64_t min, int64_t max,
                          std::optional<int64_t> fallback) {
  const Json* v = Get(key);
  if (v == nullptr) {
    if (!fallback) Invalid(key, "is missing; expected an integer");
    return *fallback;
  }
  return AsInt(*v, key, min, max);
}

std::vector<int64_t> ConfigReader::Ints(const char* key, size_t n, int64_t min, int64_t max,
                                        std::optional<int64_t> fallback) {
  const Json* v = Get(key);
  if (v == nullptr) {
    if (!fallback) Invalid(key, StrCat("is missing; expected ", n, " integers"));
    return std::vector<int64_t>(n, *fallback);
  }
  if (v->is_number()) return std::vector<int64_t>(n, AsInt(*v, key, min, max));
  if (!v->is_array() || v->size() != n) {
    Invalid(key, StrCat("is ", Shown(*v), "; expected an integer or a list of ", n));
  }
  std::vector<int64_t> out;
  for (const Json& e : *v) out.push_back(AsInt(e, key, min, max));
  return out;
}

std::vector<int64_t> ConfigReader::IntList(const char* key, int64_t min, int64_t max) {
  const Json* v = Get(key);
  if (v == nullptr || !v->is_array() || v->empty() || v->size() > 8) {
    Invalid(key, StrCat("is ", v == nullptr ? "missing" : Shown(*v),
                        "; expected a list of 1 to 8 integers"));
  }
  std::vector<int64_t> out;
  for (const Json& e : *v) out.push_back(AsInt(e, key, min, max));
  return out;
}

std::vector<int64_t> ConfigReader::Sides(const char* key, int64_t max) {
  const Json* v = Get(key);
  if (v == nullptr) Invalid(key, "is missing; expected ((top, bottom), (left, right))");
  if (v->is_number()) {
    const int64_t p = AsInt(*v, key, 0, max);
    return {p, p, p, p};
  }
  if (!v->is_array() || v->size() != 2) {
    Invalid(key, StrCat("is ", Shown(*v), "; expected an integer or a pair"));
  }
  std::vector<int64_t> out;
  for (const Json& axis : *v) {
    if (axis.is_number()) {
      const int64_t p = AsInt(axis, key, 0, max);
      out.insert(out.end(), {p, p});
    } else if (axis.is_array() && axis.size() == 2) {
      for (const Json& e : axis) out.push_back(AsInt(e, key, 0, max));
    } else {
      Invalid(key, StrCat("has ", Shown(axis), "; expected an integer or a pair per axis"));
    }
  }
  return out;
}

double ConfigReader::Float(const char* key, double min, double max,
                           std::optional<double> fallback) {
  const Json* v = Get(key);
  if (v == nullptr) {
    if (!fallback) Invalid(key, "is missing; expected a number");
    return *fallback;
  }
  if (!v->is_number() || !(v->get<double>() >= min && v->get<double>() <= max)) {
    Invalid(key, StrCat("is ", Shown(*v), "; expected a number in [", min, ", ", max, "]"));
  }
  return v->get<double>();
}

bool ConfigReader::Bool(const char* key, std::optional<bool> fallback) {
  const Json* v = Get(key);
  if (v == nullptr) {
    if (!fallback) Invalid(key, "is missing; expected true or false");
    return *fallback;
  }
  if (!v->is_boolean()) Invalid(key, StrCat("is ", Shown(*v), "; expected true or false"));
  return v->get<bool>();
}

std::string ConfigReader::String(const char* key, std::initializer_list<const char*> allowed,
                                 std::optional<std::string> fallback) {
  const Json* v = Get(key);
  std::string list;
  for (const char* a : allowed) list += StrCat(list.empty() ? "" : ", ", "'", a, "'");
  if (v == nullptr) {
    if (!fallback) Invalid(key, StrCat("is missing; expected one of ", list));
    return *fallback;
  }
  if (!v->is_string()) Invalid(key, StrCat("is ", Shown(*v), "; expected one of ", list));
  std::string s = Lower(v->get<std::string>());
  if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return s == a; })) {
    Unsupported(key, StrCat(Shown(*v), " (eager has ", list, ")"));
  }
  return s;
}

std::string ConfigReader::Activation(const char* key) {
  const Json* v = Get(key);
  if (v == nullptr || v->is_null()) return "linear";  // Keras's default
  // The list of names is for the errors only: every layer's config asks.
  auto known_names = [] {
    std::string list;
    for (std::string_view a : KerasActivationNames()) list += StrCat(list.empty() ? "" : ", ", a);
    return list;
  };
  if (!v->is_string()) Invalid(key, StrCat("is ", Shown(*v), "; expected one of ", known_names()));
  std::string name = v->get<std::string>();
  for (std::string_view known : KerasActivationNames()) {
    if (known == name) return name;
  }
  Unsupported(key, StrCat(Shown(*v), " (eager has ", known_names(), ")"));
}

eager::Activation ConfigReader::ActivationFn(const char* key) {
  const std::string name = Activation(key);
  return name == "linear" ? nullptr : ActivationByName(name);
}

void ConfigReader::Expect(const char* key, const std::vector<Json>& accepted) {
  const Json* v = Get(key);
  if (v != nullptr && std::find(accepted.begin(), accepted.end(), *v) == accepted.end()) {
    Unsupported(key, StrCat(Shown(*v), " (eager implements only ", accepted.front().dump(), ")"));
  }
}

bool ConfigReader::Has(const char* key) { return Get(key) != nullptr; }

void ConfigReader::Finish() const {
  for (auto it = config_.begin(); it != config_.end(); ++it) {
    if (read_.count(it.key()) == 0 && !it->is_null()) {
      throw UnimplementedError(StrCat(".keras file '", file_, "': ", where_, ".",
                                      it.key().substr(0, 60), ": argument not supported by eager (",
                                      Shown(*it), ")"));
    }
  }
}

Json DTypePolicyJson(DType dtype) {
  return Json{{"module", "keras"},
              {"class_name", "DTypePolicy"},
              {"config", {{"name", dtype == DType::kFloat64 ? "float64" : "float32"}}},
              {"registered_name", nullptr}};
}

Json InitializerJson(const char* class_name, Json config) {
  return Json{{"module", "keras.initializers"},
              {"class_name", class_name},
              {"config", std::move(config)},
              {"registered_name", nullptr}};
}

Json GlorotUniformJson() { return InitializerJson("GlorotUniform", {{"seed", nullptr}}); }

std::string ActivationName(const eager::Activation& activation, const std::string& layer) {
  if (const std::optional<std::string_view> name = KerasActivationName(activation)) {
    return std::string(*name);
  }
  throw UnimplementedError(StrCat("Keras config: layer '", layer,
                                  "' has an activation Keras cannot name (a function not from "
                                  "eager::ActivationByName or one of the op functions it uses)"));
}

}  // namespace eager::keras_internal
