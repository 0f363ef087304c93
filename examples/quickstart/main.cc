// The README's tour of eager, compiled and run by the test suite so the
// README stays true: a model with a lazily built Dense layer trained one step
// with a GradientTape and Adam, the EMA golden from DESIGN.md, and the
// variables written to and read back from a TensorFlow TensorBundle.
//
//   quickstart [DIR]      # DIR defaults to ./quickstart_checkpoint

#include <filesystem>
#include <iostream>

#include "eager.h"

struct MyModel : eager::Module {
  eager::Dense dense{10};  // input size known at first call (lazy build)
  MyModel() { Track("dense", dense); }
  eager::Tensor operator()(const eager::Tensor& x) { return dense(x); }
};

int main(int argc, char** argv) {
  const std::filesystem::path dir = argc > 1 ? argv[1] : "quickstart_checkpoint";

  // A training step: the tape watches the trainable variables it sees read.
  eager::RandomGenerator rng(/*seed=*/7);
  eager::Tensor x = rng.Normal(eager::Shape{32, 784});
  eager::Tensor labels =
      eager::Cast(eager::ArgMax(rng.Normal(eager::Shape{32, 10}), 1), eager::DType::kInt32);
  MyModel model;
  eager::Adam optimizer;
  eager::GradientTape tape;
  eager::Tensor loss =
      eager::ReduceMean(eager::SparseSoftmaxCrossEntropyWithLogits(labels, model(x)));
  std::vector<eager::Variable*> variables = model.TrainableVariables();
  std::vector<std::optional<eager::Tensor>> grads = tape.Gradient(loss, variables);
  optimizer.ApplyGradients(grads, variables);
  std::cout << "loss " << loss.scalar<float>() << "; variables:";
  for (const eager::Variable* v : variables) std::cout << " " << v->name() << v->shape();
  std::cout << "\n";

  // DESIGN.md's EMA golden: prints [10.0, 0.10989987], as TensorFlow did.
  eager::Variable v(0.1f, "v");
  eager::ExponentialMovingAverage ema(0.999);
  ema.Apply({&v});  // shadow "v/ExponentialMovingAverage", initialised to 0.1
  v.Assign(10.0f);
  ema.Apply();  // shadow -= (1 - decay) * (shadow - v), in float32
  std::cout << eager::Tensor::Vector<float>(
                   {v.value().scalar<float>(), ema.AverageVariable(v)->value().scalar<float>()})
                   .ValuesString()
            << "\n";

  // TensorFlow's checkpoint files: PREFIX.index + PREFIX.data-00000-of-00001.
  std::filesystem::create_directories(dir);
  const std::string prefix = (dir / "model.ckpt").string();
  eager::BundleWriter writer(prefix);
  for (const eager::Variable* var : variables) {
    writer.Add(var->shared_name(), var->value());
  }
  writer.Add(ema.AverageName(v), ema.AverageVariable(v)->value());
  writer.Finish();
  eager::CheckpointState state;
  state.model_checkpoint_path = "model.ckpt";
  state.all_model_checkpoint_paths = {"model.ckpt"};
  eager::WriteCheckpointState(dir.string(), state);

  eager::BundleReader reader(*eager::LatestCheckpoint(dir.string()));
  for (const std::string& key : reader.Keys()) {
    std::cout << key << " " << reader.GetEntry(key).shape() << "\n";
  }
  std::cout << "restored v/ExponentialMovingAverage = "
            << reader.Read("v/ExponentialMovingAverage").ValuesString() << "\n";
  return 0;
}
