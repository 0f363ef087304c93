// keras_optimizers_driver: eager's side of keras_optimizers_test.py.
//
//   keras_optimizers_driver save   OPTIMIZER LAYOUT FEEDS DIR
//   keras_optimizers_driver resume OPTIMIZER LAYOUT FEEDS CKPT OUT
//
// The model is one Dense(10) (tracked as "dense") on x float32 [4, 3] with
// the mean sparse softmax cross entropy against y; OPTIMIZER one of
// sgd_momentum, sgd_nesterov, sgd_plain, rmsprop, rmsprop_centered, adagrad,
// adamw, nadam, adam_f64, rmsprop_f64 (a float64 model under floatx float64),
// adam_expdecay, sgd_piecewise, rmsprop_cosine (learning-rate schedules),
// adam_amsgrad
// (the options keras_optimizers_test.py gives TF's); LAYOUT keras3 or
// keras2. FEEDS holds "x", "y" and "kernel0".
//
// save:   assigns kernel0 (bias zero), takes two steps, saves
//         Checkpoint(model=..., optimizer=...) as DIR/ckpt-1.
// resume: restores CKPT into a fresh model and optimizer, builds both
//         (Dense::Build, Optimizer::Build), writes the restored slots as
//         "restored/<slot>/<kernel|bias>", takes one step, asserts the
//         restore was consumed, and writes "kernel", "bias", "iterations"
//         and "<slot>/<kernel|bias>" (Nadam: "u_product") to the bundle OUT.
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "eager.h"

namespace {

struct MyModel : eager::Module {
  eager::Dense dense{10};
  MyModel() { Track("dense", dense); }
  eager::Tensor operator()(const eager::Tensor& x) { return dense(x); }
};

eager::KerasLayout ParseLayout(const std::string& name) {
  if (name == "keras3") return eager::KerasLayout::kKeras3;
  if (name == "keras2") return eager::KerasLayout::kKeras2;
  throw eager::InvalidArgumentError("unknown layout '" + name + "'; expected keras3 or keras2");
}

std::unique_ptr<eager::Optimizer> MakeOptimizer(const std::string& name,
                                                std::vector<std::string>* slots) {
  if (name == "sgd_plain" || name == "sgd_momentum" || name == "sgd_nesterov") {
    *slots = {"momentum"};
    return std::make_unique<eager::SGD>(0.1, name == "sgd_plain" ? 0.0 : 0.9,
                                        name == "sgd_nesterov");
  }
  if (name == "rmsprop") {
    *slots = {"velocity"};
    return std::make_unique<eager::RMSprop>(eager::RMSpropOptions{.learning_rate = 0.01});
  }
  if (name == "rmsprop_centered") {
    *slots = {"velocity", "momentum", "average_gradient"};
    return std::make_unique<eager::RMSprop>(
        eager::RMSpropOptions{.learning_rate = 0.01, .momentum = 0.5, .centered = true});
  }
  if (name == "adam_expdecay") {
    *slots = {"m", "v"};
    auto adam = std::make_unique<eager::Adam>(0.1);
    eager::SetKerasLayout(*adam, eager::KerasLayout::kKeras3);  // schedules: not legacy
    adam->SetLearningRateSchedule(std::make_shared<eager::ExponentialDecay>(0.1, 1, 0.5));
    return adam;
  }
  if (name == "sgd_piecewise") {
    *slots = {"momentum"};
    auto sgd = std::make_unique<eager::SGD>(0.1, 0.9);
    eager::SetKerasLayout(*sgd, eager::KerasLayout::kKeras3);
    sgd->SetLearningRateSchedule(std::make_shared<eager::PiecewiseConstantDecay>(
        std::vector<int64_t>{1, 2}, std::vector<double>{0.1, 0.05, 0.01}));
    return sgd;
  }
  if (name == "rmsprop_cosine") {
    *slots = {"velocity"};
    auto rmsprop = std::make_unique<eager::RMSprop>();
    rmsprop->SetLearningRateSchedule(std::make_shared<eager::CosineDecay>(0.01, 4, 0.1));
    return rmsprop;
  }
  if (name == "adam_amsgrad") {
    *slots = {"m", "v", "vhat"};
    eager::AdamOptions options;
    options.learning_rate = 0.01;
    options.amsgrad = true;
    return std::make_unique<eager::Adam>(options);
  }
  if (name == "adam_f64") {
    *slots = {"m", "v"};
    eager::AdamOptions options;
    options.floatx = eager::DType::kFloat64;
    return std::make_unique<eager::Adam>(options);
  }
  if (name == "rmsprop_f64") {
    *slots = {"velocity"};
    return std::make_unique<eager::RMSprop>(
        eager::RMSpropOptions{.learning_rate = 0.01, .floatx = eager::DType::kFloat64});
  }
  if (name == "adamw") {
    *slots = {"m", "v"};
    eager::AdamOptions options;
    options.learning_rate = 0.01;
    options.weight_decay = 0.1;
    options.name = "AdamW";
    return std::make_unique<eager::Adam>(options);
  }
  if (name == "nadam") {
    *slots = {"m", "v"};
    return std::make_unique<eager::Nadam>(eager::NadamOptions{.learning_rate = 0.01});
  }
  if (name == "adagrad") {
    *slots = {"accumulator"};
    return std::make_unique<eager::Adagrad>(eager::AdagradOptions{.learning_rate = 0.1});
  }
  throw eager::InvalidArgumentError("unknown optimizer '" + name + "'");
}

// The "_f64" configurations: a float64 model (x64, kernel0_64) and Keras's
// floatx float64, so the learning rate is float64 too.
bool Float64(const std::string& optimizer) {
  return optimizer.size() > 4 && optimizer.substr(optimizer.size() - 4) == "_f64";
}

void Step(MyModel& model, eager::Optimizer& optimizer, const eager::BundleReader& feeds, bool f64) {
  const eager::Tensor x = feeds.Read(f64 ? "x64" : "x");
  const eager::Tensor y = feeds.Read("y");
  optimizer.Minimize(
      [&] { return eager::ReduceMean(eager::SparseSoftmaxCrossEntropyWithLogits(y, model(x))); },
      model.TrainableVariables());
}

void WriteSlots(eager::BundleWriter& out, const std::string& prefix, eager::Optimizer& optimizer,
                MyModel& model, const std::vector<std::string>& slots) {
  for (const std::string& slot : slots) {
    for (auto [what, variable] :
         {std::pair{"kernel", &model.dense.kernel()}, std::pair{"bias", model.dense.bias()}}) {
      if (eager::Variable* s = optimizer.GetSlot(*variable, slot)) {
        out.Add(prefix + slot + "/" + what, s->value());
      }
    }
  }
}

int Run(const std::string& mode, char** argv) {
  std::vector<std::string> slots;
  std::unique_ptr<eager::Optimizer> optimizer = MakeOptimizer(argv[2], &slots);
  const eager::KerasLayout layout = ParseLayout(argv[3]);
  const eager::BundleReader feeds(argv[4]);
  const bool f64 = Float64(argv[2]);
  const eager::DType dtype = f64 ? eager::DType::kFloat64 : eager::DType::kFloat32;
  MyModel model;
  eager::Checkpoint checkpoint({{"model", &model}, {"optimizer", optimizer.get()}});
  eager::SetKerasLayout(checkpoint, layout);
  if (mode == "save") {
    model.dense.Build(3, dtype);
    model.dense.kernel().Assign(feeds.Read(f64 ? "kernel0_64" : "kernel0"));
    Step(model, *optimizer, feeds, f64);
    Step(model, *optimizer, feeds, f64);
    std::cout << "wrote " << checkpoint.Save(std::string(argv[5]) + "/ckpt") << "\n";
    return 0;
  }
  eager::CheckpointLoadStatus status = checkpoint.Restore(argv[5]);
  model.dense.Build(3, dtype);
  optimizer->Build(model.TrainableVariables());
  eager::BundleWriter out(argv[6]);
  WriteSlots(out, "restored/", *optimizer, model, slots);
  Step(model, *optimizer, feeds, f64);
  status.AssertConsumed();
  out.Add("kernel", model.dense.kernel().value());
  out.Add("bias", model.dense.bias()->value());
  out.Add("iterations", eager::Tensor(optimizer->iterations()));
  if (auto* nadam = dynamic_cast<eager::Nadam*>(optimizer.get())) {
    out.Add("u_product", nadam->u_product()->value());
  }
  WriteSlots(out, "", *optimizer, model, slots);
  out.Finish();
  std::cout << "restored " << argv[5] << ", stepped to iteration " << optimizer->iterations()
            << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (!((mode == "save" && argc == 6) || (mode == "resume" && argc == 7))) {
    std::cerr << "usage: keras_optimizers_driver save OPTIMIZER LAYOUT FEEDS DIR | resume "
                 "OPTIMIZER LAYOUT FEEDS CKPT OUT\n";
    return 2;
  }
  try {
    return Run(mode, argv);
  } catch (const std::exception& e) {
    std::cerr << "keras_optimizers_driver: " << e.what() << "\n";
    return 1;
  }
}
