// distributed_tf_driver: writes the distributed checkpoint that
// tf_reads_distributed_checkpoint.py has TensorFlow read (issue 29).
//
//   mpirun -np N distributed_tf_driver DIR
//
// Every rank trains the same small MLP for 3 steps on its share of each
// global batch (DistributedOptimizer over Adam), then all save
// {model, optimizer, extra (a float64 vector)} with
// CheckpointOptions{.distributed = true} as DIR/ckpt-1 (one data file per
// rank). Each rank then writes what it holds, DIR/values.rank<R>.txt, one
// line per variable: "<checkpoint key> <dtype> <dims,> <hex bytes>"; rank 0
// also writes the same objects as one process would (Checkpoint::Write,
// one data file) to DIR/reference, for a key-by-key comparison.

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "autodiff/adam.h"
#include "distributed/distributed_optimizer.h"
#include "distributed/world.h"
#include "saving/checkpoint/checkpoint.h"
#include "tests/distributed/data_parallel_model.h"

namespace {

using eager::Tensor;
using eager::Variable;

std::string Hex(const Tensor& t) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (std::byte b : t.bytes()) {
    out += kDigits[std::to_integer<int>(b) >> 4];
    out += kDigits[std::to_integer<int>(b) & 15];
  }
  return out;
}

std::string Line(const std::string& key, const Tensor& t) {
  std::string dims;
  for (int64_t d : t.shape().dims()) dims += std::to_string(d) + ",";
  return key + "/.ATTRIBUTES/VARIABLE_VALUE " + std::string(eager::DTypeName(t.dtype())) + " " +
         (dims.empty() ? "-" : dims) + " " + Hex(t) + "\n";
}

int Run(int argc, char** argv) {
  eager::distributed::World world(argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: distributed_tf_driver DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  eager::testing::SmallMlp model;
  eager::Adam adam(0.01);
  eager::distributed::DistributedOptimizer optimizer(adam);
  for (int step = 0; step < 3; ++step) {
    const auto share =
        eager::testing::Share(eager::testing::GlobalBatch(step), world.rank(), world.size());
    eager::GradientTape tape;
    const Tensor loss = eager::testing::MeanLoss(model, share);
    const std::vector<Variable*> vars = model.TrainableVariables();
    optimizer.ApplyGradients(tape.Gradient(loss, vars), vars);
  }
  Variable extra(Tensor::FromVector<double>({0.1, -2.5, 1e300}), "extra");
  eager::Checkpoint checkpoint({{"model", &model}, {"optimizer", &adam}, {"extra", &extra}});
  const std::string path = checkpoint.Save(dir + "/ckpt", {.distributed = true});

  const std::vector<std::pair<std::string, Variable*>> named = {
      {"model/hidden/kernel", &model.hidden.kernel()},
      {"model/hidden/bias", model.hidden.bias()},
      {"model/logits/kernel", &model.logits.kernel()},
      {"model/logits/bias", model.logits.bias()}};
  std::string lines;
  for (const auto& [key, variable] : named) {
    lines += Line(key, variable->value());
    for (const char* slot : {"m", "v"}) {
      lines +=
          Line(key + "/.OPTIMIZER_SLOT/optimizer/" + slot, adam.GetSlot(*variable, slot)->value());
    }
  }
  lines += Line("optimizer/iter", Tensor(adam.iterations()));
  lines += Line("extra", extra.value());
  lines += Line("save_counter", checkpoint.save_counter().value());
  std::ofstream(dir + "/values.rank" + std::to_string(world.rank()) + ".txt") << lines;
  if (world.is_root()) {
    checkpoint.Write(dir + "/reference");
    std::printf("saved %s on %d ranks\n", path.c_str(), world.size());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "distributed_tf_driver: error: %s\n", e.what());
    return 1;
  }
}
