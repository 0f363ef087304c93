// The C++ side of keras_functional_files_test.py: functional models in
// Keras 3's .keras ("Functional" config) and .weights.h5. The model,
// built the same in the test with Keras:
//   inputs a [3], b [2]; ta = Dense(4) "pa"(a), tb = Dense(4) "pb"(b);
//   Dense(4, relu) "shared" called three times: on ta, tb, and ta again;
//   c = Concatenate "cat"(shared(ta), shared(tb)); s = Add "add"(shared(ta),
//   tb); outputs Sequential "inner" [Dense(3) "i1"](c) and
//   Multiply "multiply"(s, s).
// The batch: 4 examples, xa[i] = ((7 i) mod 11) / 10 - 0.5, xb likewise
// with 5 i; targets y1 [4, 3], y2 [4, 4] = ((k i) mod 3) / 2. The loss is
// Keras's "mse" per output, summed. Each command prints every output on
// the batch, one line of floats per output.
//
//   keras_functional_files_driver k2e DIR
//     LoadKerasModel(DIR/keras.keras): prints its outputs; eager's own model
//     with LoadKerasWeights(DIR/keras.weights.h5, Adam): prints its outputs;
//     saves the loaded model as DIR/eager_resave.keras; takes one step of
//     the loaded Adam on the loaded model and saves DIR/eager_step.keras,
//     and one on its own model, saved as DIR/eager_step.weights.h5.
//   keras_functional_files_driver e2k DIR
//     eager's model (its own weights) takes one Adam(0.01) step, is saved
//     as DIR/eager.keras and DIR/eager.weights.h5 (with the Adam), prints
//     its outputs; then takes one more step and prints them again.
//   keras_functional_files_driver k2e_nested DIR
//   keras_functional_files_driver e2k_nested DIR
//     The same with nested models, on xa alone against y1: a functional
//     "enc" (Input [3] "ea", Dense(4, tanh) "e1", Sequential "es" [Dense(3)
//     "s1"]) called twice in "outer" (x = Input [3]; Dense(2) "od"(Add
//     "sum"(enc(x), enc(Dense(3) "pre"(x))))); a Sequential "holder"
//     [Input [3], a second such functional "enc2", Dense(2) "hd"]; and
//     "duo" (x = Input [3]; a two-input functional "pair" (Inputs "pa",
//     "pb" [3]; Dense(2) "pd"(Add "pp"(pa, pb))) called on [x, Dense(3)
//     "dpre"(x)]). k2e loads DIR/<name>.keras of each, prints the models'
//     outputs, takes one step of the loaded Adam on each and saves
//     DIR/eager_<name>.keras. e2k builds them itself, takes one
//     Adam(0.01) step each, saves DIR/<name>.keras, prints; then one more
//     step each and prints again.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "eager.h"
#include "saving/keras/keras_model.h"
#include "saving/keras/keras_weights.h"

using namespace eager;  // NOLINT(google-build-using-namespace)

namespace {

struct Towers {
  KerasTensor a = Input({3}, DType::kFloat32, "a");
  KerasTensor b = Input({2}, DType::kFloat32, "b");
  Dense pa{4, nullptr, true, std::nullopt, "pa"};
  Dense pb{4, nullptr, true, std::nullopt, "pb"};
  Dense shared{4, Relu, true, std::nullopt, "shared"};
  layers::Concatenate cat{-1, "cat"};
  layers::Add add{"add"};
  layers::Multiply multiply{"multiply"};
  Sequential inner{"inner"};
  Model model = Build();

  Model Build() {
    inner.Add(std::make_unique<Dense>(3, nullptr, true, std::nullopt, "i1"));
    const KerasTensor ta = pa(a);
    const KerasTensor tb = pb(b);
    const KerasTensor c = cat({shared(ta), shared(tb)});
    const KerasTensor s = add({shared(ta), tb});
    return Model({a, b}, {inner(c), multiply({s, s})}, "towers");
  }
};

// A functional Model holding a Sequential, for the nested-model modes.
struct Encoder {
  explicit Encoder(const std::string& name) : model(Build(name)) {}
  KerasTensor ea = Input({3}, DType::kFloat32, "ea");
  Dense e1{4, Tanh, true, std::nullopt, "e1"};
  Sequential es{"es"};
  Model model;

  Model Build(const std::string& name) {
    es.Add(std::make_unique<Dense>(3, nullptr, true, std::nullopt, "s1"));
    return Model({ea}, {es(e1(ea))}, name);
  }
};

struct Nested {
  Encoder enc{"enc"};
  KerasTensor x = Input({3}, DType::kFloat32, "x");
  Dense pre{3, nullptr, true, std::nullopt, "pre"};
  layers::Add sum{"sum"};
  Dense od{2, nullptr, true, std::nullopt, "od"};
  Model outer = Model({x}, {od(sum({enc.model(x), enc.model(pre(x))}))}, "outer");
  Encoder enc2{"enc2"};
  Sequential holder{"holder"};
  KerasTensor pa = Input({3}, DType::kFloat32, "pa");
  KerasTensor pb = Input({3}, DType::kFloat32, "pb");
  layers::Add pp{"pp"};
  Dense pd{2, nullptr, true, std::nullopt, "pd"};
  Model pair = Model({pa, pb}, {pd(pp({pa, pb}))}, "pair");
  KerasTensor dx = Input({3}, DType::kFloat32, "x");
  Dense dpre{3, nullptr, true, std::nullopt, "dpre"};
  Model duo = Model({dx}, {pair({dx, dpre(dx)})}, "duo");

  Nested() {
    holder.Add(std::make_unique<InputLayer>(Shape{3}));
    holder.Add(enc2.model);
    holder.Add(std::make_unique<Dense>(2, nullptr, true, std::nullopt, "hd"));
  }
};

Tensor Ramp(int64_t rows, int64_t cols, int step, int mod, float scale, float shift) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * step) % mod) * scale + shift;
  return Tensor::FromVector<float>(v, Shape{rows, cols});
}

const std::vector<Tensor>& X() {
  static const std::vector<Tensor> x = {Ramp(4, 3, 7, 11, 0.1f, -0.5f),
                                        Ramp(4, 2, 5, 11, 0.1f, -0.5f)};
  return x;
}
const std::vector<Tensor>& Y() {
  static const std::vector<Tensor> y = {Ramp(4, 3, 5, 3, 0.5f, 0.f), Ramp(4, 4, 5, 3, 0.5f, 0.f)};
  return y;
}

void Print(Model& model) {
  for (const Tensor& out : model(X())) {
    for (float v : out.ToVector<float>()) std::printf("%.9g ", v);
    std::printf("\n");
  }
}

void Step(Model& model, Optimizer& adam) {
  adam.Minimize(
      [&] {
        const std::vector<Tensor> out = model(X(), /*training=*/true);
        Tensor loss = ReduceMean(Square(Sub(out[0], Y()[0])));
        return Add(loss, ReduceMean(Square(Sub(out[1], Y()[1]))));
      },
      model.TrainableVariables());
}

// Keras's "mse" of the first output against the first target, [4, 2].
Tensor NestedLoss(Layer& model) {
  const Tensor out = model.CallMany({X()[0]}, /*training=*/true)[0];
  return ReduceMean(Square(Sub(out, Slice(Y()[0], {0, 0}, {4, 2}))));
}

void PrintOne(Layer& model) {
  for (float v : model.CallMany({X()[0]}, false)[0].ToVector<float>()) std::printf("%.9g ", v);
  std::printf("\n");
}

const char* const kNestedNames[] = {"outer", "holder", "duo"};

int RunNested(const std::string& mode, const std::string& dir) {
  if (mode == "k2e_nested") {
    std::vector<KerasModel> loaded;
    for (const char* name : kNestedNames) {
      loaded.push_back(LoadKerasModel(dir + "/" + name + ".keras"));
      if (loaded.back().optimizer == nullptr) return 3;
    }
    std::vector<Layer*> models;
    for (KerasModel& m : loaded) {
      models.push_back(m.functional != nullptr ? static_cast<Layer*>(m.functional.get())
                                               : m.model.get());
      PrintOne(*models.back());
    }
    for (size_t i = 0; i < loaded.size(); ++i) {
      loaded[i].optimizer->Minimize([&] { return NestedLoss(*models[i]); },
                                    models[i]->TrainableVariables());
      const std::string path = StrCat(dir, "/eager_", kNestedNames[i], ".keras");
      if (loaded[i].functional != nullptr) {
        SaveKerasModel(path, *loaded[i].functional, loaded[i].optimizer.get(), loaded[i].loss);
      } else {
        SaveKerasModel(path, *loaded[i].model, loaded[i].optimizer.get(), loaded[i].loss);
      }
    }
    return 0;
  }
  Nested own;
  std::vector<Layer*> models = {&own.outer, &own.holder, &own.duo};
  Adam adams[] = {Adam(0.01), Adam(0.01), Adam(0.01)};
  auto step = [&] {
    for (size_t i = 0; i < models.size(); ++i) {
      adams[i].Minimize([&] { return NestedLoss(*models[i]); }, models[i]->TrainableVariables());
    }
  };
  step();
  SaveKerasModel(dir + "/outer.keras", own.outer, &adams[0], "mse");
  SaveKerasModel(dir + "/holder.keras", own.holder, &adams[1], "mse");
  SaveKerasModel(dir + "/duo.keras", own.duo, &adams[2], "mse");
  for (Layer* m : models) PrintOne(*m);
  step();
  for (Layer* m : models) PrintOne(*m);
  return 0;
}

int Run(const std::string& mode, const std::string& dir) {
  if (mode == "k2e_nested" || mode == "e2k_nested") return RunNested(mode, dir);
  Towers own;
  if (mode == "k2e") {
    KerasModel loaded = LoadKerasModel(dir + "/keras.keras");
    Print(*loaded.functional);
    Adam adam(0.001);
    LoadKerasWeights(dir + "/keras.weights.h5", own.model, &adam);
    Print(own.model);
    SaveKerasModel(dir + "/eager_resave.keras", *loaded.functional, loaded.optimizer.get(),
                   loaded.loss);
    Step(*loaded.functional, *loaded.optimizer);
    SaveKerasModel(dir + "/eager_step.keras", *loaded.functional, loaded.optimizer.get(),
                   loaded.loss);
    Step(own.model, adam);
    SaveKerasWeights(dir + "/eager_step.weights.h5", own.model, &adam);
    return 0;
  }
  if (mode == "e2k") {
    Adam adam(0.01);
    Step(own.model, adam);
    SaveKerasModel(dir + "/eager.keras", own.model, &adam, "mse");
    SaveKerasWeights(dir + "/eager.weights.h5", own.model, &adam);
    Print(own.model);
    Step(own.model, adam);
    Print(own.model);
    return 0;
  }
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  try {
    return Run(argv[1], argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "keras_functional_files_driver: %s\n", e.what());
    return 1;
  }
}
