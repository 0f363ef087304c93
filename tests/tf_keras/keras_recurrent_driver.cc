// keras_recurrent_driver: eager's side of keras_recurrent_test.py, a
// Sequential(RNN layer, Dense(2)) and Adam saved and restored through
// tf.train.Checkpoint(model=..., optimizer=...), or a MultiHeadAttention
// and Adam through tf.train.Checkpoint(layer=..., optimizer=...).
//
//   keras_recurrent_driver resume LAYOUT KIND FEEDS CKPT OUT
//   keras_recurrent_driver save   LAYOUT KIND FEEDS DIR
//
// KIND is simple, lstm or gru, followed by any of "-seq"
// (return_sequences), "-back" (go_backwards) and "-before" (GRU
// reset_after=False), e.g. "gru-seq-before"; the layer has 3 units. Or KIND
// is mha (MultiHeadAttention(2 heads, key_dim 3) on x as query and value) or
// mha-cross (value_dim 4, output_dim 6; query x, value the feed "v"). LAYOUT is
// keras3 or keras2 (SetKerasLayout before anything is built). FEEDS is a
// bundle with "x" [batch, time, features], "y" (the target, the model
// output's shape) and, for save, the weights "w0", "w1", ... in Keras's
// model.weights order (kernel, recurrent_kernel, bias, dense kernel, bias).
// The loss is mean((model(x) - y)^2); Adam has Keras's defaults.
//
// resume: a fresh, unbuilt model and Adam restore CKPT; writes to the bundle
//         OUT "pred" (model(x), building it: restore on creation), takes one
//         Adam step, asserts the restore consumed, and writes the weights
//         after it as "w0", "w1", ...
// save:   builds the model on x, assigns the FEEDS weights, takes one Adam
//         step, saves DIR/ckpt-1 and writes "pred" (model(x) after the step)
//         to the bundle DIR/pred.
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "eager.h"

namespace {

eager::KerasLayout ParseLayout(const std::string& name) {
  for (auto layout : {eager::KerasLayout::kKeras2, eager::KerasLayout::kKeras3}) {
    if (eager::KerasLayoutName(layout) == name) return layout;
  }
  throw eager::InvalidArgumentError("unknown layout '" + name + "'; expected keras2 or keras3");
}

std::unique_ptr<eager::Layer> MakeRecurrent(const std::string& kind) {
  std::stringstream parts(kind);
  std::string type, flag;
  std::getline(parts, type, '-');
  eager::layers::RecurrentConfig config;
  while (std::getline(parts, flag, '-')) {
    if (flag == "seq") {
      config.return_sequences = true;
    } else if (flag == "back") {
      config.go_backwards = true;
    } else if (flag == "before") {
      config.reset_after = false;
    } else {
      throw eager::InvalidArgumentError(eager::StrCat("unknown flag '", flag, "' in kind '", kind,
                                                      "'; expected seq, back or before"));
    }
  }
  if (type == "simple") return std::make_unique<eager::layers::SimpleRNN>(3, config);
  if (type == "lstm") return std::make_unique<eager::layers::LSTM>(3, config);
  if (type == "gru") return std::make_unique<eager::layers::GRU>(3, config);
  throw eager::InvalidArgumentError(eager::StrCat("unknown layer '", type, "' in kind '", kind,
                                                  "'; expected simple, lstm or gru"));
}

// The model of KIND: the module holding the variables, the checkpoint's edge
// to it, and its output on the feeds.
struct Model {
  std::unique_ptr<eager::Module> module;
  std::string edge;
  std::function<eager::Tensor()> forward;
};

Model MakeModel(const std::string& kind, const eager::BundleReader& feeds) {
  const eager::Tensor x = feeds.Read("x");
  if (kind == "mha" || kind == "mha-cross") {
    const bool cross = kind == "mha-cross";
    auto mha = std::make_unique<eager::layers::MultiHeadAttention>(
        2, 3,
        eager::layers::MultiHeadAttentionConfig{.value_dim = cross ? 4 : 0,
                                                .output_dim = cross ? 6 : 0});
    eager::layers::MultiHeadAttention* layer = mha.get();
    const eager::Tensor v = cross ? feeds.Read("v") : x;
    return {std::move(mha), "layer", [layer, x, v] { return layer->Attend(x, v); }};
  }
  auto model = std::make_unique<eager::Sequential>();
  model->Add(MakeRecurrent(kind));
  model->Add(std::make_unique<eager::Dense>(2));
  eager::Sequential* seq = model.get();
  return {std::move(model), "model", [seq, x] { return (*seq)(x); }};
}

void Step(Model& model, eager::Adam& optimizer, const eager::Tensor& y) {
  model.forward();  // built before the variables are listed
  optimizer.Minimize(
      [&] { return eager::ReduceMean(eager::Square(eager::Sub(model.forward(), y))); },
      model.module->TrainableVariables());
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (!((mode == "resume" && argc == 7) || (mode == "save" && argc == 6))) {
    std::cerr << "usage: keras_recurrent_driver resume LAYOUT KIND FEEDS CKPT OUT | "
                 "save LAYOUT KIND FEEDS DIR\n";
    return 2;
  }
  try {
    const eager::KerasLayout layout = ParseLayout(argv[2]);
    const std::string kind = argv[3];
    const eager::BundleReader feeds(argv[4]);
    const eager::Tensor y = feeds.Read("y");
    Model model = MakeModel(kind, feeds);
    eager::Adam optimizer;
    eager::Checkpoint checkpoint({{model.edge, model.module.get()}, {"optimizer", &optimizer}});
    eager::SetKerasLayout(checkpoint, layout);
    if (mode == "save") {
      model.forward();
      const std::vector<eager::Variable*> variables = model.module->Variables();
      for (size_t i = 0; i < variables.size(); ++i) {
        variables[i]->Assign(feeds.Read(eager::StrCat("w", i)));
      }
      Step(model, optimizer, y);
      const std::string path = checkpoint.Save(std::string(argv[5]) + "/ckpt");
      eager::BundleWriter out(std::string(argv[5]) + "/pred");
      out.Add("pred", model.forward());
      out.Finish();
      std::cout << "wrote " << path << " (" << kind << ", " << eager::KerasLayoutName(layout)
                << ")\n";
      return 0;
    }
    eager::CheckpointLoadStatus status = checkpoint.Restore(argv[5]);
    eager::BundleWriter out(argv[6]);
    out.Add("pred", model.forward());
    Step(model, optimizer, y);
    status.AssertConsumed();
    const std::vector<eager::Variable*> variables = model.module->Variables();
    for (size_t i = 0; i < variables.size(); ++i) {
      out.Add(eager::StrCat("w", i), variables[i]->value());
    }
    out.Finish();
    std::cout << "restored " << argv[5] << " (" << kind << ", " << eager::KerasLayoutName(layout)
              << ") and stepped\n";
  } catch (const std::exception& e) {
    std::cerr << "keras_recurrent_driver: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
