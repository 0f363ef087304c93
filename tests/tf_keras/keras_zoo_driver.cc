// keras_zoo_driver: eager's side of keras_zoo_test.py. Builds the model of
// KIND from the layer library, restores Keras 3's checkpoint of it and its
// Adam, predicts, takes the next Adam step and saves.
//
//   keras_zoo_driver KIND FEEDS CKPT OUT
//
// KIND: cnn, lstm, two-input or transformer (the models keras_zoo_test.py
// lists). FEEDS holds the inputs "x0" (and "x1" for two-input) and the
// target "y"; the loss is mean((model(x, training=true) - y)^2). OUT/pred
// gets "pred" (the inference prediction after the restore, which builds the
// model: restore on creation) and the restored variables "v0", "v1", ...
// (for a failure's diagnosis); OUT/ckpt-N the checkpoint after the step, in
// Keras 3's layout. The restore must be consumed entirely.
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "eager.h"

namespace {

namespace layers = eager::layers;

// The model, the layers it calls (a functional model does not own them) and
// its call on the inputs.
struct Zoo {
  std::vector<std::unique_ptr<eager::Layer>> owned;
  std::unique_ptr<eager::Layer> model;
  std::function<eager::Tensor(bool training)> call;

  template <typename T, typename... Args>
  T& Own(Args&&... args) {
    owned.push_back(std::make_unique<T>(std::forward<Args>(args)...));
    return static_cast<T&>(*owned.back());
  }
};

Zoo MakeZoo(const std::string& kind, const std::vector<eager::Tensor>& x) {
  Zoo zoo;
  if (kind == "cnn" || kind == "lstm") {
    auto seq = std::make_unique<eager::Sequential>();
    if (kind == "cnn") {
      seq->Add(std::make_unique<layers::Conv2D>(4, std::array<int64_t, 2>{3, 3},
                                                layers::Conv2DConfig{.padding = "same"}));
      seq->Add(std::make_unique<layers::BatchNormalization>());
      seq->Add(std::make_unique<layers::Activation>("relu"));
      seq->Add(std::make_unique<layers::MaxPooling2D>());
      auto dropout = std::make_unique<layers::Dropout>(0.3, /*seed=*/5);
      // Keras's SeedGenerator is not saved: its state after one training
      // step is [5, 1], which the next step draws with.
      dropout->set_step(1);
      seq->Add(std::move(dropout));
      seq->Add(std::make_unique<eager::Flatten>());
      seq->Add(std::make_unique<eager::Dense>(3));
    } else {
      seq->Add(std::make_unique<layers::Embedding>(10, 4, /*mask_zero=*/true));
      seq->Add(std::make_unique<layers::LSTM>(3));
      seq->Add(std::make_unique<eager::Dense>(2));
    }
    eager::Sequential* s = seq.get();
    zoo.model = std::move(seq);
    zoo.call = [s, x](bool training) { return (*s)(x[0], training); };
    return zoo;
  }
  std::unique_ptr<eager::Model> model;
  if (kind == "two-input") {
    eager::KerasTensor a = eager::Input({5, 3});
    eager::KerasTensor b = eager::Input({4});
    eager::KerasTensor joined = zoo.Own<layers::Concatenate>()(
        {zoo.Own<layers::GRU>(3)(a), zoo.Own<eager::Dense>(3, eager::Relu)(b)});
    model = std::make_unique<eager::Model>(
        std::vector<eager::KerasTensor>{a, b},
        std::vector<eager::KerasTensor>{zoo.Own<eager::Dense>(2)(joined)});
  } else if (kind == "transformer") {
    eager::KerasTensor in = eager::Input({5, 8});
    eager::KerasTensor attended = zoo.Own<layers::MultiHeadAttention>(2, 4)({in, in});
    eager::KerasTensor h =
        zoo.Own<layers::LayerNormalization>()(zoo.Own<layers::Add>()({in, attended}));
    model = std::make_unique<eager::Model>(
        std::vector<eager::KerasTensor>{in},
        std::vector<eager::KerasTensor>{zoo.Own<eager::Dense>(2)(h)});
  } else {
    throw eager::InvalidArgumentError(
        eager::StrCat("unknown kind '", kind, "'; expected cnn, lstm, two-input or transformer"));
  }
  eager::Model* m = model.get();
  zoo.model = std::move(model);
  zoo.call = [m, x](bool training) { return m->CallMany(x, training)[0]; };
  return zoo;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: keras_zoo_driver KIND FEEDS CKPT OUT\n";
    return 2;
  }
  try {
    const std::string kind = argv[1], out = argv[4];
    const eager::BundleReader feeds(argv[2]);
    std::vector<eager::Tensor> x = {feeds.Read("x0")};
    if (kind == "two-input") x.push_back(feeds.Read("x1"));
    const eager::Tensor y = feeds.Read("y");
    Zoo zoo = MakeZoo(kind, x);
    eager::Adam optimizer;
    eager::Checkpoint checkpoint({{"model", zoo.model.get()}, {"optimizer", &optimizer}});
    eager::SetKerasLayout(checkpoint, eager::KerasLayout::kKeras3);
    eager::CheckpointLoadStatus status = checkpoint.Restore(argv[3]);
    eager::BundleWriter pred(out + "/pred");
    pred.Add("pred", zoo.call(false));
    const std::vector<eager::Variable*> restored = zoo.model->Variables();
    for (size_t i = 0; i < restored.size(); ++i) {
      pred.Add(eager::StrCat("v", i), restored[i]->value());  // for a failure's diagnosis
    }
    pred.Finish();
    optimizer.Minimize(
        [&] { return eager::ReduceMean(eager::Square(eager::Sub(zoo.call(true), y))); },
        zoo.model->TrainableVariables());
    status.AssertConsumed();
    std::cout << kind << ": restored, predicted, stepped; saved " << checkpoint.Save(out + "/ckpt")
              << "\n";
  } catch (const std::exception& e) {
    std::cerr << "keras_zoo_driver: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
