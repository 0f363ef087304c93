// keras_functional_driver: eager's side of the functional-model judge
// (tests/tf_keras/keras_functional_test.py).
//
//   keras_functional_driver restore LAYOUT FEEDS CKPT OUT
//   keras_functional_driver save    LAYOUT FEEDS DIR
//   keras_functional_driver merge   LAYOUT FEEDS CKPT OUT
//   keras_functional_driver nested  LAYOUT FEEDS CKPT OUT
//
// The model, built with eager's functional API as the test builds it in
// Keras: inputs a [3] and b [2]; pa = Dense(3)(a), pb = Dense(3)(b); one
// Dense(4) "shared" called on both; Concatenate of the two shared outputs;
// outputs o1 = Dense(2)(concat) and o2 = Dense(1)(shared(pb)). The loss is
// mean((o1 - ya)^2) + mean((o2 - yb)^2); the optimizer Adam(0.01). LAYOUT is
// keras3 or keras2 (SetKerasLayout on the checkpoint). FEEDS is a bundle
// with "xa", "xb", "ya", "yb" and, for save, the initial weights "w0",
// "w1", ... in TrainableVariables() order (Keras's trainable_variables).
//
// restore: restores tf.train.Checkpoint(model=, optimizer=) from CKPT,
//          writes "y0", "y1" (inference outputs), takes one Adam step,
//          asserts the restore was consumed, writes the weights after the
//          step as "w0", "w1", ... to the bundle OUT.
// save:    assigns the weights, takes one Adam step, saves DIR/ckpt-1 and
//          writes "y0", "y1" after the step to DIR/pred.
// merge:   the merge layers' model (MergeModel below; no optimizer)
//          restores CKPT, asserts consumed, and writes its outputs "y0" ..
//          "y5" on ("xa", "xc") and the gradients "g0" .. "g3" of
//          sum_i mean(y_i^2) for its trainable variables.
// nested:  a model of nested models (NestedModel below) restores CKPT,
//          asserts consumed, and writes its output on "xa" as "y0".
#include <exception>
#include <iostream>
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

struct TwoTowers {
  eager::KerasTensor a = eager::Input({3}, eager::DType::kFloat32, "a");
  eager::KerasTensor b = eager::Input({2}, eager::DType::kFloat32, "b");
  eager::Dense pa{3, nullptr, true, std::nullopt, "pa"};
  eager::Dense pb{3, nullptr, true, std::nullopt, "pb"};
  eager::Dense shared{4, nullptr, true, std::nullopt, "shared"};
  eager::layers::Concatenate concat{-1, "concatenate"};
  eager::Dense o1{2, nullptr, true, std::nullopt, "o1"};
  eager::Dense o2{1, nullptr, true, std::nullopt, "o2"};
  eager::Model model = Build();

  eager::Model Build() {
    const eager::KerasTensor sb = shared(pb(b));
    const eager::KerasTensor c = concat({shared(pa(a)), sb});
    return eager::Model({a, b}, {o1(c), o2(sb)}, "towers");
  }
};

// Inputs a [3] and c [3], da = Dense(4)(a), dc = Dense(4)(c), and six
// outputs: Add, Subtract, Multiply, Average, Maximum and Minimum of (da, dc).
struct MergeModel {
  eager::KerasTensor a = eager::Input({3}, eager::DType::kFloat32, "a");
  eager::KerasTensor c = eager::Input({3}, eager::DType::kFloat32, "c");
  eager::Dense da{4, nullptr, true, std::nullopt, "da"};
  eager::Dense dc{4, nullptr, true, std::nullopt, "dc"};
  eager::layers::Add add;
  eager::layers::Subtract subtract;
  eager::layers::Multiply multiply;
  eager::layers::Average average;
  eager::layers::Maximum maximum;
  eager::layers::Minimum minimum;
  eager::Model model = Build();

  eager::Model Build() {
    const std::vector<eager::KerasTensor> both = {da(a), dc(c)};
    return eager::Model(
        {a, c},
        {add(both), subtract(both), multiply(both), average(both), maximum(both), minimum(both)},
        "merges");
  }
};

int Merge(eager::KerasLayout layout, const eager::BundleReader& feeds, const std::string& ckpt,
          const std::string& out_path) {
  MergeModel m;
  eager::Checkpoint checkpoint({{"model", &m.model}});
  eager::SetKerasLayout(checkpoint, layout);
  checkpoint.Restore(ckpt).AssertConsumed();
  const std::vector<eager::Tensor> x = {feeds.Read("xa"), feeds.Read("xc")};
  const std::vector<eager::Variable*> variables = m.model.TrainableVariables();
  eager::GradientTape tape;
  const std::vector<eager::Tensor> y = m.model(x);
  eager::Tensor loss = eager::ReduceMean(eager::Square(y[0]));
  for (size_t i = 1; i < y.size(); ++i) {
    loss = eager::Add(loss, eager::ReduceMean(eager::Square(y[i])));
  }
  std::vector<const eager::Variable*> sources(variables.begin(), variables.end());
  const std::vector<std::optional<eager::Tensor>> grads = tape.Gradient(loss, sources);
  eager::BundleWriter out(out_path);
  for (size_t i = 0; i < y.size(); ++i) out.Add(eager::StrCat("y", i), y[i]);
  for (size_t i = 0; i < grads.size(); ++i) out.Add(eager::StrCat("g", i), grads[i].value());
  out.Finish();
  std::cout << "restored " << ckpt << " into the merge layers' model ("
            << eager::KerasLayoutName(layout) << ")\n";
  return 0;
}

// x [3] -> inner functional model (Dense(4, relu) "inner_dense") ->
// Sequential [Dense(2) "seq_dense"] -> Dense(1) "head".
struct NestedModel {
  eager::KerasTensor inner_in = eager::Input({3}, eager::DType::kFloat32, "inner_in");
  eager::Dense inner_dense{4, eager::Relu, true, std::nullopt, "inner_dense"};
  eager::Model inner{{inner_in}, {inner_dense(inner_in)}, "inner"};
  eager::Sequential seq{"seq"};
  eager::Dense head{1, nullptr, true, std::nullopt, "head"};
  eager::KerasTensor x = eager::Input({3}, eager::DType::kFloat32, "x");
  std::unique_ptr<eager::Model> model;

  NestedModel() {
    seq.Add(std::make_unique<eager::Dense>(2, nullptr, true, std::nullopt, "seq_dense"));
    model = std::make_unique<eager::Model>(std::vector<eager::KerasTensor>{x},
                                           std::vector<eager::KerasTensor>{head(seq(inner(x)))},
                                           "outer");
  }
};

int Nested(eager::KerasLayout layout, const eager::BundleReader& feeds, const std::string& ckpt,
           const std::string& out_path) {
  NestedModel m;
  eager::Checkpoint checkpoint({{"model", m.model.get()}});
  eager::SetKerasLayout(checkpoint, layout);
  checkpoint.Restore(ckpt).AssertConsumed();
  eager::BundleWriter out(out_path);
  out.Add("y0", (*m.model)(feeds.Read("xa")));
  out.Finish();
  std::cout << "restored " << ckpt << " into the nested models (" << eager::KerasLayoutName(layout)
            << ")\n";
  return 0;
}

void Step(eager::Model& model, eager::Adam& optimizer, const eager::BundleReader& feeds) {
  const std::vector<eager::Tensor> x = {feeds.Read("xa"), feeds.Read("xb")};
  const eager::Tensor ya = feeds.Read("ya");
  const eager::Tensor yb = feeds.Read("yb");
  optimizer.Minimize(
      [&] {
        const std::vector<eager::Tensor> y = model(x, /*training=*/true);
        return eager::Add(eager::ReduceMean(eager::Square(eager::Sub(y[0], ya))),
                          eager::ReduceMean(eager::Square(eager::Sub(y[1], yb))));
      },
      model.TrainableVariables());
}

void AddOutputs(eager::BundleWriter& out, eager::Model& model, const eager::BundleReader& feeds) {
  const std::vector<eager::Tensor> y = model({feeds.Read("xa"), feeds.Read("xb")});
  out.Add("y0", y[0]);
  out.Add("y1", y[1]);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (!(((mode == "restore" || mode == "merge" || mode == "nested") && argc == 6) ||
        (mode == "save" && argc == 5))) {
    std::cerr << "usage: keras_functional_driver restore LAYOUT FEEDS CKPT OUT | "
                 "save LAYOUT FEEDS DIR | merge|nested LAYOUT FEEDS CKPT OUT\n";
    return 2;
  }
  try {
    const eager::KerasLayout layout = ParseLayout(argv[2]);
    const eager::BundleReader feeds(argv[3]);
    if (mode == "merge") return Merge(layout, feeds, argv[4], argv[5]);
    if (mode == "nested") return Nested(layout, feeds, argv[4], argv[5]);
    TwoTowers t;
    eager::Adam optimizer(0.01);
    eager::Checkpoint checkpoint({{"model", &t.model}, {"optimizer", &optimizer}});
    eager::SetKerasLayout(checkpoint, layout);
    const std::vector<eager::Variable*> variables = t.model.TrainableVariables();
    if (mode == "save") {
      for (size_t i = 0; i < variables.size(); ++i) {
        variables[i]->Assign(feeds.Read(eager::StrCat("w", i)));
      }
      Step(t.model, optimizer, feeds);
      const std::string path = checkpoint.Save(std::string(argv[4]) + "/ckpt");
      eager::BundleWriter out(std::string(argv[4]) + "/pred");
      AddOutputs(out, t.model, feeds);
      out.Finish();
      std::cout << "wrote " << path << " (" << eager::KerasLayoutName(layout) << ")\n";
      return 0;
    }
    eager::CheckpointLoadStatus status = checkpoint.Restore(argv[4]);
    eager::BundleWriter out(argv[5]);
    AddOutputs(out, t.model, feeds);
    Step(t.model, optimizer, feeds);
    status.AssertConsumed();
    for (size_t i = 0; i < variables.size(); ++i) {
      out.Add(eager::StrCat("w", i), variables[i]->value());
    }
    out.Finish();
    std::cout << "restored " << argv[4] << " (" << eager::KerasLayoutName(layout)
              << "), stepped to iteration " << optimizer.iterations() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "keras_functional_driver: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
