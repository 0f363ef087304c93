#include "distributed/distributed_optimizer.h"

#include "runtime/errors.h"

namespace eager::distributed {
namespace {

const World& CurrentWorld() {
  const World* world = World::Current();
  if (world == nullptr) {
    throw FailedPreconditionError(
        "DistributedOptimizer: no eager::distributed::World is alive; make one first (in main)");
  }
  return *world;
}

}  // namespace

DistributedOptimizer::DistributedOptimizer(Optimizer& optimizer,
                                           DistributedOptimizerOptions options)
    : optimizer_(optimizer), world_(CurrentWorld()), options_(options) {}

void DistributedOptimizer::ApplyGradients(std::span<const std::optional<Tensor>> grads,
                                          std::span<Variable* const> vars) {
  EAGER_CHECK(grads.size() == vars.size(), "DistributedOptimizer::ApplyGradients: ", grads.size(),
              " gradients for ", vars.size(), " variables");
  const std::vector<std::optional<Tensor>> mean =
      AverageAcrossRanks(world_, grads, options_.bucket_bytes, &stats_);
  optimizer_.ApplyGradients(mean, vars);
}

}  // namespace eager::distributed
