#pragma once

// Reading and writing one Keras layer config (the "config" object of a
// config.json layer entry), with every error naming the file and the config
// path ("config.layers[2].config.filters") and what was expected. Private to
// saving/keras/.
//
// A ConfigReader records the keys it was asked for; Finish() then refuses
// any other key whose value is not null, so an argument eager does not
// implement (a regularizer, groups = 2, a non-default axis) names itself
// instead of being dropped silently.

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "autodiff/dense.h"  // eager::Activation
#include "runtime/dtype.h"

namespace eager::keras_internal {

using Json = nlohmann::ordered_json;

// Bounds on config integers: sizes Keras layers take (filters, units,
// kernel sizes) and the dimensions of shapes. The variables themselves are
// sized by the weights file (ApplyWeights builds layers from its shapes), so
// these only keep config arithmetic far from overflow.
inline constexpr int64_t kMaxConfigInt = int64_t{1} << 31;

class ConfigReader {
 public:
  // `config` must outlive the reader. `where` is its path in config.json.
  ConfigReader(const Json& config, std::string file, std::string where);

  // An integer in [min, max]; `fallback` when absent or null (else required).
  int64_t Int(const char* key, int64_t min, int64_t max, std::optional<int64_t> fallback);
  // Keras's int-or-tuple arguments (kernel_size, strides): an integer
  // (repeated n times) or a list of n integers, each in [min, max].
  std::vector<int64_t> Ints(const char* key, size_t n, int64_t min, int64_t max,
                            std::optional<int64_t> fallback);
  // A list of 1..8 integers, each in [min, max] (target_shape, dims).
  std::vector<int64_t> IntList(const char* key, int64_t min, int64_t max);
  // ZeroPadding2D / Cropping2D: an integer, a pair (symmetric per axis) or
  // a pair of pairs; returns {top, bottom, left, right}, each in [0, max].
  std::vector<int64_t> Sides(const char* key, int64_t max);
  double Float(const char* key, double min, double max, std::optional<double> fallback);
  bool Bool(const char* key, std::optional<bool> fallback);
  // A string from `allowed` (compared in lower case, returned in lower case).
  std::string String(const char* key, std::initializer_list<const char*> allowed,
                     std::optional<std::string> fallback);
  // An activation by Keras's name (any autodiff/activations.h knows),
  // "linear" when absent or null.
  std::string Activation(const char* key);
  // The same as a function; "linear" is nullptr.
  eager::Activation ActivationFn(const char* key);
  // The key may be absent, null or one of `accepted` (data_format
  // "channels_last", groups 1, axis -1); anything else is UnimplementedError.
  void Expect(const char* key, const std::vector<Json>& accepted);
  // Whether `key` is present and not null (marks it read).
  bool Has(const char* key);
  // Accepted whatever its value (initializers: the weights file supplies
  // the values), noted so Finish() does not refuse it.
  void Ignore(const char* key) { read_.insert(key); }
  // Throws UnimplementedError naming the first key not read whose value is
  // not null.
  void Finish() const;

  // The path of `key` in config.json, for messages.
  std::string Path(const char* key) const { return where_ + "." + key; }
  [[noreturn]] void Invalid(const char* key, const std::string& what) const;
  [[noreturn]] void Unsupported(const char* key, const std::string& what) const;

 private:
  const Json* Get(const char* key);  // nullptr when absent or null; marks read
  int64_t AsInt(const Json& v, const char* key, int64_t min, int64_t max) const;

  const Json& config_;
  std::string file_;
  std::string where_;
  std::set<std::string> read_;
};

// Writing: Keras's serialized forms.
Json DTypePolicyJson(DType dtype);
// {"module": "keras.initializers", "class_name": ..., "config": ...}.
Json InitializerJson(const char* class_name, Json config = Json::object());
Json GlorotUniformJson();
// The Keras name of `activation` (nullptr is "linear"); throws
// UnimplementedError naming `layer` for a function Keras cannot name.
std::string ActivationName(const eager::Activation& activation, const std::string& layer);

}  // namespace eager::keras_internal
