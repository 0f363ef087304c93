// A Keras-style CNN from eager's layer library (autodiff/layers/), trained on
// Fashion-MNIST with Adam, evaluated, and saved as a TF2 checkpoint in
// Keras 3's layout (tf.train.Checkpoint(model=keras_model) restores it into
// the same Sequential built in Keras 3):
//
//   Sequential(Reshape([28, 28, 1]), Conv2D(16, 3, same) + BatchNormalization
//              + ReLU, MaxPooling2D(2), Dropout(0.25), Flatten, Dense(10))
//
//   keras_layers_example [STEPS [DIR [DATA_DIR]]]
//
// STEPS training steps of batch 64 (default 300), then the test accuracy of
// the first 2000 test images; the checkpoint goes to DIR/ckpt (default
// ./keras_layers_checkpoint). DATA_DIR holds the Debian dataset-fashion-mnist
// files (default /usr/share/datasets/fashion-mnist).

#include <algorithm>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "eager.h"
#include "examples/fashion_mnist/dataset.h"

namespace {

constexpr int64_t kBatch = 64;
constexpr int64_t kTestImages = 2000;

std::unique_ptr<eager::Sequential> MakeModel() {
  namespace layers = eager::layers;
  auto model = std::make_unique<eager::Sequential>();
  model->Add(std::make_unique<layers::Reshape>(std::vector<int64_t>{28, 28, 1}));
  model->Add(std::make_unique<layers::Conv2D>(16, std::array<int64_t, 2>{3, 3},
                                              layers::Conv2DConfig{.padding = "same", .seed = 1}));
  model->Add(std::make_unique<layers::BatchNormalization>());
  model->Add(std::make_unique<layers::Activation>("relu"));
  model->Add(std::make_unique<layers::MaxPooling2D>());
  model->Add(std::make_unique<layers::Dropout>(0.25, /*seed=*/2));
  model->Add(std::make_unique<eager::Flatten>());
  model->Add(std::make_unique<eager::Dense>(10, nullptr, true, /*seed=*/3));
  return model;
}

// The share of the first `count` test images the model classifies right.
double Accuracy(eager::Sequential& model, const fashion_mnist::Dataset& test, int64_t count) {
  std::vector<int64_t> order(static_cast<size_t>(std::min(count, test.size())));
  std::iota(order.begin(), order.end(), 0);
  int64_t right = 0;
  for (int64_t begin = 0; begin < static_cast<int64_t>(order.size()); begin += 500) {
    const int64_t n = std::min<int64_t>(500, static_cast<int64_t>(order.size()) - begin);
    const fashion_mnist::Dataset batch = fashion_mnist::Batch(test, order, begin, n);
    const eager::Tensor predicted =
        eager::Cast(eager::ArgMax(model(batch.images), 1), eager::DType::kInt32);  // inference mode
    const std::vector<int32_t> p = predicted.ToVector<int32_t>();
    const std::vector<int32_t> l = batch.labels.ToVector<int32_t>();
    for (size_t i = 0; i < p.size(); ++i) right += p[i] == l[i];
  }
  return static_cast<double>(right) / static_cast<double>(order.size());
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int64_t steps = argc > 1 ? std::stoll(argv[1]) : 300;
    const std::filesystem::path dir = argc > 2 ? argv[2] : "keras_layers_checkpoint";
    const std::string data_dir = argc > 3 ? argv[3] : fashion_mnist::kDefaultDataDir;
    const fashion_mnist::Dataset train = fashion_mnist::LoadSplit(data_dir, "train");
    const fashion_mnist::Dataset test = fashion_mnist::LoadSplit(data_dir, "t10k");

    std::unique_ptr<eager::Sequential> model = MakeModel();
    eager::Adam optimizer;
    eager::Checkpoint checkpoint({{"model", model.get()}, {"optimizer", &optimizer}});
    eager::SetKerasLayout(checkpoint, eager::KerasLayout::kKeras3);

    std::vector<int64_t> order(static_cast<size_t>(train.size()));
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 shuffle(4);
    std::shuffle(order.begin(), order.end(), shuffle);
    (*model)(fashion_mnist::Batch(train, order, 0, 1).images);  // builds, in inference mode
    float loss_value = 0;
    for (int64_t step = 0; step < steps; ++step) {
      const int64_t begin = (step * kBatch) % (train.size() - kBatch);
      const fashion_mnist::Dataset batch = fashion_mnist::Batch(train, order, begin, kBatch);
      eager::GradientTape tape;
      const eager::Tensor loss = eager::ReduceMean(eager::SparseSoftmaxCrossEntropyWithLogits(
          batch.labels, (*model)(batch.images, /*training=*/true)));
      const std::vector<eager::Variable*> variables = model->TrainableVariables();
      optimizer.ApplyGradients(tape.Gradient(loss, variables), variables);
      loss_value = loss.scalar<float>();
      if ((step + 1) % 100 == 0 || step + 1 == steps) {
        std::cout << "step " << step + 1 << ": loss " << loss_value << "\n";
      }
    }
    std::cout << "test accuracy: " << 100.0 * Accuracy(*model, test, kTestImages) << "% of "
              << std::min(kTestImages, test.size()) << " test images after " << steps << " steps\n";
    std::filesystem::create_directories(dir);
    std::cout << "saved " << checkpoint.Save((dir / "ckpt").string()) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "keras_layers_example: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
