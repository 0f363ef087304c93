#include "examples/fashion_mnist/export.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <vector>

#include "examples/fashion_mnist/dataset.h"
#include "ops/nn_ops.h"
#include "saving/saver/saved_model_export.h"

namespace fashion_mnist {
namespace {

int64_t NextVersion(const std::string& base_dir) {
  int64_t latest = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(base_dir, error)) {
    const std::string name = entry.path().filename().string();
    int64_t version = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), version);
    if (ec == std::errc() && end == name.data() + name.size() && entry.is_directory()) {
      latest = std::max(latest, version);
    }
  }
  return latest + 1;  // a missing base_dir (error set) has no versions yet
}

}  // namespace

std::string ExportForServing(Classifier& model, const eager::ExponentialMovingAverage& ema,
                             const std::string& base_dir) {
  std::string dir = base_dir + "/" + std::to_string(NextVersion(base_dir));
  auto serve = [&model](const eager::Tensor& images) {
    const eager::Tensor logits = model(images);
    return std::vector<eager::Tensor>{logits, eager::Softmax(logits)};
  };
  const eager::Signature signature{
      {"images", eager::TensorSpec(eager::DType::kFloat32, {-1, kImageSize})},
      {"logits", "probabilities"}};
  eager::Signature averaged = signature;
  for (eager::Variable* v : model.TrainableVariables()) {
    const eager::Variable* shadow = ema.AverageVariable(*v);
    EAGER_CHECK(shadow != nullptr, "ExportForServing: variable '", v->shared_name(),
                "' has no moving average");
    averaged.read_instead.emplace(v, shadow);
  }
  eager::SavedModelExport(serve, dir, {{"serving_default", averaged}, {"raw", signature}});
  return dir;
}

}  // namespace fashion_mnist
