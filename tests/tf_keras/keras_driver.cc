// keras_driver: eager's side of seed 000 against Keras (tests/tf_keras).
//
//   keras_driver save   LAYOUT FEEDS DIR
//   keras_driver resume LAYOUT FEEDS CKPT OUT
//
// The C++ model of seed 000: MyModel with one Dense(10), and an Adam (Keras
// defaults), both set to LAYOUT ("keras2_legacy", "keras2" or "keras3";
// SetKerasLayout) before anything is built. FEEDS is a bundle with "x"
// (float32 [batch, 3]), "y" (int32 [batch]) and "kernel0" (float32 [3, 10]).
//
// save:   builds the model, assigns kernel0, takes one Adam step on the mean
//         sparse softmax cross entropy of (x, y), and saves
//         tf.train.Checkpoint(model=..., optimizer=...) as DIR/ckpt-1.
// resume: restores CKPT into a fresh, unbuilt model and Adam, takes one step
//         on (x, y), asserts the restore was consumed (AssertConsumed), and
//         writes "kernel", "bias", "iterations" and the slots "m/kernel",
//         "v/kernel", "m/bias", "v/bias" to the bundle OUT.
// Both print the layout the checkpoint was written or read in.
//
//   keras_driver seq-save   LAYOUT FEEDS DIR
//   keras_driver seq-resume LAYOUT FEEDS CKPT OUT
//
// The same for Sequential([Flatten(), Dense(4, relu), Dense(2)]) on x of
// shape [batch, 2, 3] ("sx", "sy"; kernels "k0" [6, 4] and "k1" [4, 2],
// biases zero), whose object graph is the Keras line's Sequential's.
// seq-save writes DIR/ckpt-1 after one step and "pred" (the prediction
// after it) to DIR/pred. seq-resume restores CKPT into a fresh, unbuilt
// model and Adam, writes the prediction as "pred", takes one step, asserts
// the restore was consumed, and writes "k0", "b0", "k1", "b1" to OUT.
//
//   keras_driver adam-bits LAYOUT FEEDS OUT
//
// A float32 variable from "w0" takes two Adam steps (Keras defaults) with
// the gradients "g1" then "g2" (the loss sum(w * g), whose gradient is g
// exactly); writes "w", "m" and "v" to OUT, for a bit-for-bit comparison.
#include <exception>
#include <iostream>
#include <memory>
#include <string>

#include "eager.h"

namespace {

struct MyModel : eager::Module {
  eager::Dense dense{10};
  MyModel() { Track("dense", dense); }
  eager::Tensor operator()(const eager::Tensor& x) { return dense(x); }
};

eager::KerasLayout ParseLayout(const std::string& name) {
  for (auto layout : {eager::KerasLayout::kKeras2Legacy, eager::KerasLayout::kKeras2,
                      eager::KerasLayout::kKeras3}) {
    if (eager::KerasLayoutName(layout) == name) return layout;
  }
  throw eager::InvalidArgumentError("unknown layout '" + name +
                                    "'; expected keras2_legacy, keras2 or keras3");
}

void Step(MyModel& model, eager::Adam& optimizer, const eager::BundleReader& feeds) {
  const eager::Tensor x = feeds.Read("x");
  const eager::Tensor y = feeds.Read("y");
  model(x);  // built before the variables are listed
  optimizer.Minimize(
      [&] { return eager::ReduceMean(eager::SparseSoftmaxCrossEntropyWithLogits(y, model(x))); },
      model.TrainableVariables());
}

struct SeqModel {
  eager::Sequential model;
  eager::Dense* d0;
  eager::Dense* d1;
  SeqModel() {
    model.Add(std::make_unique<eager::Flatten>());
    auto a = std::make_unique<eager::Dense>(4, eager::Relu);
    auto b = std::make_unique<eager::Dense>(2);
    d0 = a.get();
    d1 = b.get();
    model.Add(std::move(a));
    model.Add(std::move(b));
  }
};

void SeqStep(SeqModel& m, eager::Adam& optimizer, const eager::BundleReader& feeds) {
  const eager::Tensor x = feeds.Read("sx");
  const eager::Tensor y = feeds.Read("sy");
  m.model(x);
  optimizer.Minimize(
      [&] { return eager::ReduceMean(eager::SparseSoftmaxCrossEntropyWithLogits(y, m.model(x))); },
      m.model.TrainableVariables());
}

int Sequential(const std::string& mode, char** argv) {
  const eager::KerasLayout layout = ParseLayout(argv[2]);
  const eager::BundleReader feeds(argv[3]);
  SeqModel m;
  eager::Adam optimizer;
  eager::Checkpoint checkpoint({{"model", &m.model}, {"optimizer", &optimizer}});
  eager::SetKerasLayout(checkpoint, layout);
  if (mode == "seq-save") {
    m.model(feeds.Read("sx"));
    m.d0->kernel().Assign(feeds.Read("k0"));
    m.d1->kernel().Assign(feeds.Read("k1"));
    SeqStep(m, optimizer, feeds);
    const std::string path = checkpoint.Save(std::string(argv[4]) + "/ckpt");
    eager::BundleWriter out(std::string(argv[4]) + "/pred");
    out.Add("pred", m.model(feeds.Read("sx")));
    out.Finish();
    std::cout << "wrote " << path << " in the " << eager::KerasLayoutName(layout) << " layout\n";
    return 0;
  }
  eager::CheckpointLoadStatus status = checkpoint.Restore(argv[4]);
  eager::BundleWriter out(argv[5]);
  out.Add("pred", m.model(feeds.Read("sx")));
  SeqStep(m, optimizer, feeds);
  status.AssertConsumed();
  std::cout << "restored " << argv[4] << " into a Sequential in the "
            << eager::KerasLayoutName(layout) << " layout\n";
  out.Add("k0", m.d0->kernel().value());
  out.Add("b0", m.d0->bias()->value());
  out.Add("k1", m.d1->kernel().value());
  out.Add("b1", m.d1->bias()->value());
  out.Finish();
  return 0;
}

int AdamBits(char** argv) {
  const eager::KerasLayout layout = ParseLayout(argv[2]);
  const eager::BundleReader feeds(argv[3]);
  eager::Variable w(feeds.Read("w0"), "w");
  eager::Adam optimizer;
  eager::SetKerasLayout(optimizer, layout);
  for (const char* g : {"g1", "g2"}) {
    const eager::Tensor grad = feeds.Read(g);
    optimizer.Minimize([&] { return eager::ReduceSum(eager::Mul(w.value(), grad)); }, {&w});
  }
  eager::BundleWriter out(argv[4]);
  out.Add("w", w.value());
  out.Add("m", optimizer.GetSlot(w, "m")->value());
  out.Add("v", optimizer.GetSlot(w, "v")->value());
  out.Finish();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "adam-bits" && argc == 5) {
    try {
      return AdamBits(argv);
    } catch (const std::exception& e) {
      std::cerr << "keras_driver: " << e.what() << "\n";
      return 1;
    }
  }
  if ((mode == "seq-save" && argc == 5) || (mode == "seq-resume" && argc == 6)) {
    try {
      return Sequential(mode, argv);
    } catch (const std::exception& e) {
      std::cerr << "keras_driver: " << e.what() << "\n";
      return 1;
    }
  }
  if (!((mode == "save" && argc == 5) || (mode == "resume" && argc == 6))) {
    std::cerr << "usage: keras_driver save LAYOUT FEEDS DIR | resume LAYOUT FEEDS CKPT OUT\n";
    return 2;
  }
  try {
    const eager::KerasLayout layout = ParseLayout(argv[2]);
    const eager::BundleReader feeds(argv[3]);
    MyModel model;
    eager::Adam optimizer;
    eager::Checkpoint checkpoint({{"model", &model}, {"optimizer", &optimizer}});
    eager::SetKerasLayout(checkpoint, layout);
    if (mode == "save") {
      model.dense.Build(3);
      model.dense.kernel().Assign(feeds.Read("kernel0"));
      Step(model, optimizer, feeds);
      const std::string path = checkpoint.Save(std::string(argv[4]) + "/ckpt");
      std::cout << "wrote " << path << " in the " << eager::KerasLayoutName(layout) << " layout\n";
      return 0;
    }
    eager::CheckpointLoadStatus status = checkpoint.Restore(argv[4]);
    Step(model, optimizer, feeds);
    status.AssertConsumed();
    std::cout << "restored " << argv[4] << " in the " << eager::KerasLayoutName(layout)
              << " layout, stepped to iteration " << optimizer.iterations() << "\n";
    eager::BundleWriter out(argv[5]);
    eager::Variable& kernel = model.dense.kernel();
    eager::Variable& bias = *model.dense.bias();
    out.Add("kernel", kernel.value());
    out.Add("bias", bias.value());
    out.Add("iterations", eager::Tensor(optimizer.iterations()));
    for (const char* slot : {"m", "v"}) {
      out.Add(std::string(slot) + "/kernel", optimizer.GetSlot(kernel, slot)->value());
      out.Add(std::string(slot) + "/bias", optimizer.GetSlot(bias, slot)->value());
    }
    out.Finish();
  } catch (const std::exception& e) {
    std::cerr << "keras_driver: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
