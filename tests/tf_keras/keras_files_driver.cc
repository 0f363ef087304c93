// The C++ side of keras_files_test.py: a Sequential(InputLayer [2,3],
// Flatten, Dense(4, relu), Dense(2)) with Adam(0.01) on a fixed batch.
//   keras_files_driver save PATH         one step, save .weights.h5, print predictions
//   keras_files_driver savekeras|loadkeras PATH [OUT]   the same with .keras
//   keras_files_driver load PATH OUT     load PATH (weights + Adam), print predictions,
//                                        one more step, save OUT
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "autodiff/flatten.h"
#include "autodiff/input_layer.h"
#include "eager.h"
#include "saving/keras/keras_model.h"
#include "saving/keras/keras_weights.h"

using namespace eager;  // NOLINT(google-build-using-namespace)

namespace {

int Run(int argc, char** argv) {
  const std::string mode = argv[1];
  Sequential model("seq");
  model.Add(std::make_unique<InputLayer>(Shape{2, 3}));
  model.Add(std::make_unique<Flatten>());
  model.Add(std::make_unique<Dense>(4, Relu, true, 1));
  model.Add(std::make_unique<Dense>(2, nullptr, true, 2));
  Adam adam(0.01);
  std::vector<float> xs(24);
  for (int i = 0; i < 24; ++i)
    xs[static_cast<size_t>(i)] = (static_cast<float>((i * 7) % 11) / 10.f - 0.5f);
  const Tensor x = Tensor::FromVector<float>(xs, Shape{4, 2, 3});
  const Tensor y = Tensor::FromVector<float>({1, 0, 0, 1, 1, 1, 0, 0}, Shape{4, 2});
  auto step = [&] {
    model(x);
    adam.Minimize([&] { return ReduceMean(Square(Sub(model(x), y))); }, model.TrainableVariables());
  };
  auto print = [&] {
    std::vector<float> p = model(x).ToVector<float>();
    for (float v : p) std::printf("%.9g ", v);
    std::printf("\n");
  };
  if (mode == "save") {
    step();
    SaveKerasWeights(argv[2], model, &adam);
    print();
  } else if (mode == "savekeras") {
    step();
    SaveKerasModel(argv[2], model, &adam, "mse");
    print();
  } else if (mode == "loadkeras" && argc == 4) {
    KerasModel loaded = LoadKerasModel(argv[2]);
    Sequential& m = *loaded.model;
    std::vector<float> p = m(x).ToVector<float>();
    for (float v : p) std::printf("%.9g ", v);
    std::printf("\n");
    loaded.optimizer->Minimize([&] { return ReduceMean(Square(Sub(m(x), y))); },
                               m.TrainableVariables());
    SaveKerasModel(argv[3], m, loaded.optimizer.get(), loaded.loss);
  } else if (mode == "loadlegacy") {  // tf_keras's legacy .h5: weights only
    LoadKerasWeights(argv[2], model);
    print();
  } else if (mode == "load" && argc == 4) {
    LoadKerasWeights(argv[2], model, &adam);
    print();
    step();
    SaveKerasWeights(argv[3], model, &adam);
  } else {
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "keras_files_driver: %s\n", e.what());
    return 1;
  }
}
