#pragma once

// DistributedOptimizer: data parallelism's optimizer. Each rank computes the
// gradients of its share of the global batch; ApplyGradients averages them
// across ranks (gradient_averaging.h: a few bucketed MPI_Allreduce calls),
// then lets the wrapped optimizer apply the mean, the same update on every
// rank, so replicas that start equal (BroadcastVariables) stay equal.
//
//   eager::distributed::World world(argc, argv);
//   eager::Adam adam;
//   eager::distributed::DistributedOptimizer optimizer(adam);
//   eager::distributed::BroadcastVariables(model.Variables(), /*root=*/0);
//   ...
//   eager::GradientTape tape;
//   eager::Tensor loss = Loss(model(my_share_of_x), my_share_of_y);
//   auto vars = model.TrainableVariables();
//   optimizer.ApplyGradients(tape.Gradient(loss, vars), vars);
//
// With a per-rank mean loss over equal shares, the averaged gradient is the
// gradient of the global batch's mean loss: N ranks on B/N examples each
// train as one process on B.
//
// The wrapped optimizer owns the state (slots, iterations): checkpoint it,
// not this wrapper. No overlap of the allreduce with the backward pass:
// GradientTape::Gradient returns every gradient at once, so the collectives
// start after it (docs/distributed.md measures what overlap could gain).
// REQUIRES: a live World (World::Current(), else FailedPreconditionError at
// construction); every rank calls ApplyGradients at the same steps with the
// same variables (gradient_averaging.h).

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "autodiff/optimizer.h"
#include "distributed/gradient_averaging.h"
#include "runtime/tensor.h"
#include "runtime/variable.h"

namespace eager::distributed {

struct DistributedOptimizerOptions {
  // Largest flat buffer one MPI_Allreduce reduces.
  size_t bucket_bytes = kDefaultBucketBytes;
};

class DistributedOptimizer {
 public:
  // `optimizer` must outlive this wrapper.
  explicit DistributedOptimizer(Optimizer& optimizer, DistributedOptimizerOptions options = {});

  // Averages grads across ranks, then optimizer().ApplyGradients(mean, vars).
  // Errors as Optimizer::ApplyGradients, plus AverageAcrossRanks'.
  void ApplyGradients(std::span<const std::optional<Tensor>> grads,
                      std::span<Variable* const> vars);

  Optimizer& optimizer() { return optimizer_; }
  const World& world() const { return world_; }
  // Collectives and bytes of every ApplyGradients so far.
  const AveragingStats& stats() const { return stats_; }

 private:
  Optimizer& optimizer_;
  const World& world_;
  DistributedOptimizerOptions options_;
  AveragingStats stats_;
};

}  // namespace eager::distributed
