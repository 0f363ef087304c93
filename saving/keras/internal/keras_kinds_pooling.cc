// Registrations of the pooling layers (keras_layer_kinds.h): MaxPooling2D,
// AveragePooling2D, their 1D forms and the four global poolings. All are
// weightless: only their configs differ.

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autodiff/layers/pooling.h"
#include "saving/keras/internal/keras_layer_kinds.h"

namespace eager::keras_internal {
namespace {

using namespace layers;  // NOLINT(google-build-using-namespace): the pooling classes

template <bool kOneD>
void WindowToConfig(Layer& layer, Json& c) {
  auto& p = static_cast<WindowPooling&>(layer);
  if (kOneD) {
    c["pool_size"] = Json::array({p.pool_size()[1]});
    c["padding"] = p.padding();
    c["strides"] = Json::array({p.strides()[1]});
  } else {
    c["pool_size"] = Json::array({p.pool_size()[0], p.pool_size()[1]});
    c["padding"] = p.padding();
    c["strides"] = Json::array({p.strides()[0], p.strides()[1]});
  }
  c["data_format"] = "channels_last";
}

template <typename T>
std::unique_ptr<Layer> Window2DFromConfig(ConfigReader& r, const std::string& name) {
  const std::vector<int64_t> pool = r.Ints("pool_size", 2, 1, kMaxConfigInt, 2);
  Pooling2DConfig config;
  if (r.Has("strides")) {
    const std::vector<int64_t> s = r.Ints("strides", 2, 1, kMaxConfigInt, std::nullopt);
    config.strides = std::array<int64_t, 2>{s[0], s[1]};
  }
  config.padding = r.String("padding", {"valid", "same"}, std::string("valid"));
  r.Expect("data_format", {Json("channels_last")});
  config.name = name;
  return std::make_unique<T>(std::array<int64_t, 2>{pool[0], pool[1]}, config);
}

template <typename T>
std::unique_ptr<Layer> Window1DFromConfig(ConfigReader& r, const std::string& name) {
  const int64_t pool = r.Ints("pool_size", 1, 1, kMaxConfigInt, 2)[0];
  Pooling1DConfig config;
  if (r.Has("strides")) config.strides = r.Ints("strides", 1, 1, kMaxConfigInt, std::nullopt)[0];
  config.padding = r.String("padding", {"valid", "same"}, std::string("valid"));
  r.Expect("data_format", {Json("channels_last")});
  config.name = name;
  return std::make_unique<T>(pool, config);
}

void GlobalToConfig(Layer& layer, Json& c) {
  c["data_format"] = "channels_last";
  c["keepdims"] = static_cast<GlobalPooling&>(layer).keepdims();
}

template <typename T>
std::unique_ptr<Layer> GlobalFromConfig(ConfigReader& r, const std::string& name) {
  r.Expect("data_format", {Json("channels_last")});
  return std::make_unique<T>(r.Bool("keepdims", false), name);
}

template <typename T, bool kOneD>
KerasLayerKind Window(const char* cls, const char* key) {
  if constexpr (kOneD) {
    return {cls, key, Is<T>, nullptr, nullptr, WindowToConfig<true>, Window1DFromConfig<T>};
  } else {
    return {cls, key, Is<T>, nullptr, nullptr, WindowToConfig<false>, Window2DFromConfig<T>};
  }
}

template <typename T>
KerasLayerKind Global(const char* cls, const char* key) {
  return {cls, key, Is<T>, nullptr, nullptr, GlobalToConfig, GlobalFromConfig<T>};
}

}  // namespace

std::vector<KerasLayerKind> PoolingKinds() {
  return {
      Window<MaxPooling2D, false>("MaxPooling2D", "max_pooling2d"),
      Window<AveragePooling2D, false>("AveragePooling2D", "average_pooling2d"),
      Window<MaxPooling1D, true>("MaxPooling1D", "max_pooling1d"),
      Window<AveragePooling1D, true>("AveragePooling1D", "average_pooling1d"),
      Global<GlobalAveragePooling2D>("GlobalAveragePooling2D", "global_average_pooling2d"),
      Global<GlobalMaxPooling2D>("GlobalMaxPooling2D", "global_max_pooling2d"),
      Global<GlobalAveragePooling1D>("GlobalAveragePooling1D", "global_average_pooling1d"),
      Global<GlobalMaxPooling1D>("GlobalMaxPooling1D", "global_max_pooling1d"),
  };
}

}  // namespace eager::keras_internal
