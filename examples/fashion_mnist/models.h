#pragma once

// The main job's models by command-line name: "mlp" (the default, mlp.h)
// and "cnn" (cnn.h), with the epochs each trains by default.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "examples/fashion_mnist/cnn.h"
#include "examples/fashion_mnist/mlp.h"
#include "runtime/errors.h"

namespace fashion_mnist {

inline const std::vector<std::string> kModelNames = {"mlp", "cnn"};

// Throws InvalidArgumentError for another name.
inline std::unique_ptr<Classifier> MakeModel(const std::string& name, uint64_t seed) {
  if (name == "mlp") return std::make_unique<Mlp>(seed);
  if (name == "cnn") return std::make_unique<Cnn>(seed);
  throw eager::InvalidArgumentError(
      eager::StrCat("unknown model '", name, "': expected \"mlp\" or \"cnn\""));
}

// Epochs when --epochs is not given: the MLP reaches 85% in 2 (DESIGN.md),
// the CNN >= 91% with EMA weights in 3 (92.06%; 91.28% after 2).
inline int DefaultEpochs(const std::string& name) { return name == "cnn" ? 3 : 2; }

}  // namespace fashion_mnist
