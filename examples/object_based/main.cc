// Seed 000's object-based program: a model and its Adam optimizer saved
// after a training step with eager::Checkpoint, then restored into new,
// unbuilt objects by structure. The new Dense gets its saved kernel when it
// builds, Adam its saved slots on its first step; the program prints that
// the values match and that the status assertions pass. The test suite runs
// it and checks its output.
//
//   object_based [DIR]      # DIR defaults to ./my_checkpoint

#include <filesystem>
#include <iostream>

#include "eager.h"

struct MyModel : eager::Module {
  eager::Dense dense{10};  // input size known at first call (lazy build)
  MyModel() { Track("dense", dense); }
  eager::Tensor operator()(const eager::Tensor& x) { return dense(x); }
};

namespace {

void Step(MyModel& model, eager::Adam& optimizer, const eager::Tensor& x,
          const eager::Tensor& labels) {
  model(x);  // build before Minimize lists the variables
  optimizer.Minimize(
      [&] {
        return eager::ReduceMean(eager::SparseSoftmaxCrossEntropyWithLogits(labels, model(x)));
      },
      model.TrainableVariables());
}

bool Same(const eager::Variable& a, const eager::Variable& b) {
  const auto x = a.value().bytes();
  const auto y = b.value().bytes();
  return std::equal(x.begin(), x.end(), y.begin(), y.end());
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "my_checkpoint";
  std::filesystem::remove_all(dir);
  try {
    eager::RandomGenerator rng(/*seed=*/0);
    const eager::Tensor x = rng.Normal(eager::Shape{8, 5});
    const eager::Tensor labels =
        eager::Cast(eager::ArgMax(rng.Normal(eager::Shape{8, 10}), 1), eager::DType::kInt32);

    MyModel model;
    eager::Adam optimizer;
    Step(model, optimizer, x, labels);
    eager::Checkpoint checkpoint({{"model", &model}, {"optimizer", &optimizer}});
    const std::string path = checkpoint.Save(dir + "/ckpt");
    std::cout << "saved " << path << " (" << model.dense.kernel().name() << ", " << optimizer.name()
              << " after " << optimizer.iterations() << " step)\n";

    MyModel new_model;  // fresh and unbuilt: its variables will be dense_1/...
    eager::Adam new_optimizer;
    eager::Checkpoint restored({{"model", &new_model}, {"optimizer", &new_optimizer}});
    const std::string latest = *eager::LatestCheckpoint(dir);
    eager::CheckpointLoadStatus status = restored.Restore(latest);
    status.AssertExistingObjectsMatched();
    std::cout << "restored " << latest << ": AssertExistingObjectsMatched passed\n";

    new_model(x);  // builds: the kernel starts as the saved one
    std::cout << "kernel " << new_model.dense.kernel().name() << " matches "
              << model.dense.kernel().name() << ": "
              << (Same(new_model.dense.kernel(), model.dense.kernel()) ? "yes" : "NO") << "\n";

    // One more step on both: the slots come from the checkpoint.
    Step(model, optimizer, x, labels);
    Step(new_model, new_optimizer, x, labels);
    const bool same = Same(new_model.dense.kernel(), model.dense.kernel()) &&
                      Same(*new_model.dense.bias(), *model.dense.bias()) &&
                      new_optimizer.iterations() == optimizer.iterations();
    std::cout << "after one more step, the values match: " << (same ? "yes" : "NO") << "\n";
    status.AssertConsumed();
    std::cout << "AssertConsumed passed\n";
    return same ? 0 : 1;
  } catch (const eager::Error& e) {
    std::cerr << "object_based: " << e.what() << "\n";
    return 1;
  }
}
