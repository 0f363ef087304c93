#include "autodiff/layer.h"

#include <algorithm>

#include "runtime/errors.h"

namespace eager {

std::vector<Tensor> Layer::CallManyMasked(const std::vector<Tensor>& inputs,
                                          const std::vector<std::optional<Tensor>>& masks,
                                          bool training) {
  if (inputs.size() == 1 && !masks.empty() && masks[0]) {
    return {CallMasked(inputs[0], masks[0], training)};
  }
  return CallMany(inputs, training);
}

std::optional<Tensor> Layer::ComputeMaskMany(const std::vector<Tensor>& inputs,
                                             const std::vector<std::optional<Tensor>>& masks) {
  if (inputs.size() == 1) return ComputeMask(inputs[0], masks.empty() ? std::nullopt : masks[0]);
  if (masks.empty() || !masks[0]) return std::nullopt;
  return KerasMasking().output == KerasMaskOutput::kInput ? masks[0] : std::nullopt;
}

Layer::MaskedOutputs Layer::CallWithMasks(const std::vector<Tensor>& inputs,
                                          const std::vector<std::optional<Tensor>>& masks,
                                          bool training) {
  const bool masked = std::any_of(masks.begin(), masks.end(),
                                  [](const std::optional<Tensor>& m) { return m.has_value(); });
  std::vector<std::optional<Tensor>> per_input = masks;
  per_input.resize(inputs.size());
  MaskedOutputs result;
  result.outputs =
      masked ? CallManyMasked(inputs, per_input, training) : CallMany(inputs, training);
  result.masks.resize(result.outputs.size());
  if (!result.masks.empty()) result.masks[0] = ComputeMaskMany(inputs, per_input);
  return result;
}

void Layer::RequireBuilt(bool built, std::string_view kind, std::string_view what) const {
  if (built) return;
  throw FailedPreconditionError(StrCat(kind, " '", name(), "': ", what,
                                       " does not exist before the layer is built (call it on an "
                                       "input or call Build first)"));
}

}  // namespace eager
