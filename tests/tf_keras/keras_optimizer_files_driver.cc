// The C++ side of keras_optimizer_files_test.py: every Keras 3 optimizer
// eager has, in .keras (compile_config) and .weights.h5 (optimizer/vars).
// The model: Sequential [Input(3), Dense(4, tanh), Dense(2)]; the batch
// x [4, 3] = ((7 i) mod 11) / 10 - 0.5, y [4, 2] = ((5 i) mod 3) / 2; the
// loss Keras's "mse". OPT names the optimizer, built as the test builds it
// in Keras:
//   sgd       SGD(0.05)                      sgd_m    SGD(0.05, 0.9, nesterov)
//   rmsprop   RMSprop(0.01, momentum 0.5, centered)
//   adagrad   Adagrad(0.05)                  nadam    Nadam(0.01)
//   adamw     AdamW(0.01, weight_decay 0.05) adam_ams Adam(0.01, amsgrad)
// and with learning-rate schedules (trained 3 steps where the others take
// one, so that the restored iteration count matters):
//   adam_exp  Adam(ExponentialDecay(0.05, 2, 0.5))
//   sgd_pw    SGD(PiecewiseConstantDecay([1, 3], [0.1, 0.05, 0.01]),
//             momentum 0.9)
//   adam_cos  Adam(CosineDecay(0.05, 4, alpha 0.1))
//   rms_exps  RMSprop(ExponentialDecay(0.02, 2, 0.5, staircase))
// Each command prints predictions on x, one line each.
//
//   keras_optimizer_files_driver k2e OPT DIR
//     LoadKerasModel(DIR/keras.keras) (optimizer from its compile_config)
//     takes one step, saved as DIR/eager_step.keras; eager's own model with
//     OPT and LoadKerasWeights(DIR/keras.weights.h5) takes one step, saved
//     as DIR/eager_step.weights.h5. Prints both models' predictions.
//   keras_optimizer_files_driver e2k OPT DIR
//     eager's model with OPT takes one step (a schedule's: 3), is saved as DIR/eager.keras and
//     DIR/eager.weights.h5, prints; takes one more step, prints.
//   k2e_embed / e2k_embed: the same with the model Sequential [Input(6,
//     int32), Embedding(5, 3), Flatten, Dense(2)] on ids [4, 6] = (7 i) mod
//     5, which repeat (Keras 3 squares each looked-up row of the sparse
//     gradient), and OPT in Keras 3's layout.
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "eager.h"
#include "saving/keras/keras_model.h"
#include "saving/keras/keras_weights.h"

using namespace eager;  // NOLINT(google-build-using-namespace)

namespace {

std::unique_ptr<Optimizer> WithSchedule(std::unique_ptr<Optimizer> optimizer,
                                        std::shared_ptr<const LearningRateSchedule> schedule) {
  optimizer->UseKerasLayout(KerasLayout::kKeras3);  // schedules need a newer layout
  optimizer->SetLearningRateSchedule(std::move(schedule));
  return optimizer;
}

std::unique_ptr<Optimizer> MakeOptimizer(const std::string& name) {
  if (name == "adam_exp") {
    return WithSchedule(std::make_unique<Adam>(), std::make_shared<ExponentialDecay>(0.05, 2, 0.5));
  }
  if (name == "sgd_pw") {
    return WithSchedule(std::make_unique<SGD>(SGDOptions{.momentum = 0.9}),
                        std::make_shared<PiecewiseConstantDecay>(
                            std::vector<int64_t>{1, 3}, std::vector<double>{0.1, 0.05, 0.01}));
  }
  if (name == "adam_cos") {
    return WithSchedule(std::make_unique<Adam>(), std::make_shared<CosineDecay>(0.05, 4, 0.1));
  }
  if (name == "rms_exps") {
    return WithSchedule(std::make_unique<RMSprop>(),
                        std::make_shared<ExponentialDecay>(0.02, 2, 0.5, true));
  }
  if (name == "sgd") return std::make_unique<SGD>(SGDOptions{.learning_rate = 0.05});
  if (name == "sgd_m") {
    return std::make_unique<SGD>(
        SGDOptions{.learning_rate = 0.05, .momentum = 0.9, .nesterov = true});
  }
  if (name == "rmsprop") {
    return std::make_unique<RMSprop>(
        RMSpropOptions{.learning_rate = 0.01, .momentum = 0.5, .centered = true});
  }
  if (name == "adagrad") return std::make_unique<Adagrad>(AdagradOptions{.learning_rate = 0.05});
  if (name == "nadam") return std::make_unique<Nadam>(NadamOptions{.learning_rate = 0.01});
  AdamOptions adam;
  adam.learning_rate = 0.01;
  if (name == "adamw") {
    adam.weight_decay = 0.05;
    return std::make_unique<Adam>(adam);
  }
  if (name == "adam_ams") {
    adam.amsgrad = true;
    return std::make_unique<Adam>(adam);
  }
  throw InvalidArgumentError("unknown optimizer '" + name + "'");
}

Tensor Ramp(int64_t rows, int64_t cols, int step, int mod, float scale, float shift) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * step) % mod) * scale + shift;
  return Tensor::FromVector<float>(v, Shape{rows, cols});
}

bool embed_model = false;  // the *_embed modes

const Tensor& X() {
  static const Tensor x = Ramp(4, 3, 7, 11, 0.1f, -0.5f);
  static const Tensor ids = [] {
    std::vector<int32_t> v(24);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>((i * 7) % 5);
    return Tensor::FromVector<int32_t>(v, Shape{4, 6});
  }();
  return embed_model ? ids : x;
}

void Print(Sequential& model) {
  for (float v : model(X()).ToVector<float>()) std::printf("%.9g ", v);
  std::printf("\n");
}

void Step(Sequential& model, Optimizer& optimizer) {
  static const Tensor y = Ramp(4, 2, 5, 3, 0.5f, 0.f);
  optimizer.Minimize([&] { return ReduceMean(Square(Sub(model(X(), true), y))); },
                     model.TrainableVariables());
}

void Build(Sequential& model) {
  if (embed_model) {
    model.Add(std::make_unique<InputLayer>(Shape{6}));
    model.Add(std::make_unique<layers::Embedding>(5, 3));
    model.Add(std::make_unique<Flatten>());
  } else {
    model.Add(std::make_unique<InputLayer>(Shape{3}));
    model.Add(std::make_unique<Dense>(4, Tanh));
  }
  model.Add(std::make_unique<Dense>(2));
  model(X());
}

int Run(std::string mode, const std::string& opt, const std::string& dir) {
  if (mode.ends_with("_embed")) {
    embed_model = true;
    mode.resize(mode.size() - 6);
  }
  Sequential own;
  Build(own);
  std::unique_ptr<Optimizer> optimizer = MakeOptimizer(opt);
  if (embed_model) optimizer->UseKerasLayout(KerasLayout::kKeras3);
  if (mode == "k2e") {
    KerasModel loaded = LoadKerasModel(dir + "/keras.keras");
    Step(*loaded.model, *loaded.optimizer);
    SaveKerasModel(dir + "/eager_step.keras", *loaded.model, loaded.optimizer.get(), loaded.loss);
    LoadKerasWeights(dir + "/keras.weights.h5", own, optimizer.get());
    Step(own, *optimizer);
    SaveKerasWeights(dir + "/eager_step.weights.h5", own, optimizer.get());
    Print(*loaded.model);
    Print(own);
    return 0;
  }
  if (mode == "e2k") {
    for (int i = 0; i < (optimizer->learning_rate_schedule() != nullptr ? 3 : 1); ++i)
      Step(own, *optimizer);
    SaveKerasModel(dir + "/eager.keras", own, optimizer.get(), "mse");
    SaveKerasWeights(dir + "/eager.weights.h5", own, optimizer.get());
    Print(own);
    Step(own, *optimizer);
    Print(own);
    return 0;
  }
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  try {
    return Run(argv[1], argv[2], argv[3]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "keras_optimizer_files_driver: %s\n", e.what());
    return 1;
  }
}
