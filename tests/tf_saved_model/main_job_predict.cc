// Driver of tests/tf_saved_model/main_job_export.py: eager's own predictions
// for the main job's model, from its last checkpoint (not from the export, so
// that the exported variables are checked against an independent copy).
//
//   main_job_predict CHECKPOINT_DIR DATA_DIR OUT
//     writes OUT.raw and OUT.ema: the logits [10000, 10] float32 (raw bytes)
//     of the whole test set with the trained and the averaged weights.

#include <cstdio>
#include <exception>
#include <fstream>
#include <string>

#include "eager.h"
#include "examples/fashion_mnist/dataset.h"
#include "examples/fashion_mnist/training.h"

namespace {

void Write(const std::string& path, const eager::Tensor& t) {
  std::ofstream out(path, std::ios::binary);
  const auto bytes = t.bytes();
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw eager::InternalError("cannot write " + path);
}

int Predict(const std::string& checkpoint_dir, const std::string& data_dir,
            const std::string& out) {
  const fashion_mnist::Dataset test = fashion_mnist::LoadSplit(data_dir, "t10k");
  fashion_mnist::Mlp model;
  fashion_mnist::TrainOptions defaults;
  eager::ExponentialMovingAverage ema(defaults.ema_decay, /*num_updates=*/0);
  eager::Checkpoint checkpoint({{"model", &model}, {"ema", &ema}});
  const auto latest = eager::LatestCheckpoint(checkpoint_dir);
  if (!latest) throw eager::NotFoundError("no checkpoint in " + checkpoint_dir);
  auto status = checkpoint.Restore(*latest);
  const eager::Tensor raw = model(test.images);  // builds: the weights restore on creation
  ema.CreateAverages(model.TrainableVariables());
  status.AssertExistingObjectsMatched();
  Write(out + ".raw", raw);
  {
    fashion_mnist::ScopedAverageWeights averaged(ema, model.TrainableVariables());
    Write(out + ".ema", model(test.images));
  }
  std::printf("restored %s; wrote %s.raw and %s.ema\n", latest->c_str(), out.c_str(), out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 4) return Predict(argv[1], argv[2], argv[3]);
    std::fprintf(stderr, "usage: main_job_predict CHECKPOINT_DIR DATA_DIR OUT\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "main_job_predict: %s\n", e.what());
    return 1;
  }
}
