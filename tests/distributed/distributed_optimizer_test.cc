#include "distributed/distributed_optimizer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "autodiff/adam.h"
#include "distributed/broadcast_variables.h"
#include "runtime/errors.h"
#include "tests/distributed/data_parallel_model.h"

namespace eager::distributed {
namespace {

using ::eager::testing::GlobalBatch;
using ::eager::testing::MeanLoss;
using ::eager::testing::ParameterBytes;
using ::eager::testing::Share;
using ::eager::testing::SmallMlp;

const World& TheWorld() { return *World::Current(); }

// `steps` Adam steps, each rank on its share of every global batch; returns
// the parameters' bytes.
std::string Train(SmallMlp& model, int steps, int64_t* allreduce_calls = nullptr) {
  const World& world = TheWorld();
  Adam adam(0.01);
  DistributedOptimizer optimizer(adam);
  for (int step = 0; step < steps; ++step) {
    const auto share = Share(GlobalBatch(step), world.rank(), world.size());
    GradientTape tape;
    const Tensor loss = MeanLoss(model, share);
    const std::vector<Variable*> vars = model.TrainableVariables();
    optimizer.ApplyGradients(tape.Gradient(loss, vars), vars);
  }
  if (allreduce_calls != nullptr) *allreduce_calls = optimizer.stats().allreduce_calls;
  return ParameterBytes(model);
}

TEST(DistributedOptimizerTest, EveryRankEndsWithTheSameBits) {
  SmallMlp model;
  int64_t calls = 0;
  const std::string mine = Train(model, 5, &calls);
  EXPECT_EQ(calls, TheWorld().size() == 1 ? 0 : 5) << "one bucketed allreduce per step";
  for (const std::string& theirs : TheWorld().AllGather(mine)) EXPECT_TRUE(theirs == mine);
}

// Two trainings from the same seeds on the same ranks give the same bits;
// EAGER_DISTRIBUTED_PARAMS_OUT also writes them out, so that ctest compares
// two separate mpirun runs (tests/CMakeLists.txt).
TEST(DistributedOptimizerTest, TrainingTwiceGivesBitIdenticalParameters) {
  SmallMlp first;
  SmallMlp second;
  const std::string a = Train(first, 8);
  const std::string b = Train(second, 8);
  EXPECT_TRUE(a == b);
  if (const char* out = std::getenv("EAGER_DISTRIBUTED_PARAMS_OUT");
      out != nullptr && TheWorld().is_root()) {
    std::ofstream(out, std::ios::binary) << a;
  }
}

// N ranks on B/N examples each take the steps one process takes on B.
TEST(DistributedOptimizerTest, RanksTrainAsOneProcessOnTheGlobalBatch) {
  SmallMlp distributed;
  const std::string mine = Train(distributed, 5);
  SmallMlp single;
  Adam adam(0.01);
  for (int step = 0; step < 5; ++step) {
    GradientTape tape;
    const Tensor loss = MeanLoss(single, GlobalBatch(step));
    const std::vector<Variable*> vars = single.TrainableVariables();
    adam.ApplyGradients(tape.Gradient(loss, vars), vars);
  }
  const std::vector<Variable*> a = distributed.Variables();
  const std::vector<Variable*> b = single.Variables();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const std::vector<float> x = a[i]->value().ToVector<float>();
    const std::vector<float> y = b[i]->value().ToVector<float>();
    ASSERT_EQ(x.size(), y.size());
    for (size_t j = 0; j < x.size(); ++j) EXPECT_NEAR(x[j], y[j], 1e-5f) << a[i]->name();
  }
}

// Nothing but the association of the batch sum differs from one process:
// the ranks end with exactly the bits of one process that computes each
// step's gradient on the shares and averages them, (g0 + g1 + ...) / N in
// rank order, as MPI's sum does here (two terms add the same in either
// order; for 3 ranks and buckets this small OpenMPI also adds in rank
// order). So no per-rank state (initialization, data order, optimizer)
// differs; one process on the whole batch differs only by the rounding of
// the batch sum's association (RanksTrainAsOneProcessOnTheGlobalBatch).
TEST(DistributedOptimizerTest, RanksHaveTheBitsOfOneProcessAveragingTheShares) {
  const int ranks = TheWorld().size();
  SmallMlp distributed;
  const std::string mine = Train(distributed, 5);
  SmallMlp single;
  Adam adam(0.01);
  for (int step = 0; step < 5; ++step) {
    std::vector<Variable*> vars;
    std::vector<std::vector<float>> sums;
    for (int rank = 0; rank < ranks; ++rank) {
      GradientTape tape;
      const Tensor loss = MeanLoss(single, Share(GlobalBatch(step), rank, ranks));
      vars = single.TrainableVariables();  // built by the first call
      const std::vector<std::optional<Tensor>> grads = tape.Gradient(loss, vars);
      for (size_t i = 0; i < grads.size(); ++i) {
        const std::vector<float> g = grads[i]->ToVector<float>();
        if (rank == 0) {
          sums.push_back(g);
        } else {
          for (size_t j = 0; j < g.size(); ++j) sums[i][j] += g[j];
        }
      }
    }
    std::vector<std::optional<Tensor>> means;
    for (size_t i = 0; i < sums.size(); ++i) {
      for (float& x : sums[i]) x /= static_cast<float>(ranks);
      means.emplace_back(Tensor::FromVector<float>(sums[i], vars[i]->value().shape()));
    }
    adam.ApplyGradients(means, vars);
  }
  EXPECT_TRUE(ParameterBytes(single) == mine);
}

TEST(DistributedOptimizerTest, MismatchedListsAreRefused) {
  Adam adam;
  DistributedOptimizer optimizer(adam);
  Variable v(Tensor::FromVector<float>({1}), "v");
  std::vector<std::optional<Tensor>> grads;
  std::vector<Variable*> vars = {&v};
  EXPECT_THROW(optimizer.ApplyGradients(grads, vars), InvalidArgumentError);
}

TEST(BroadcastVariablesTest, EveryRankGetsRootsValues) {
  const World& world = TheWorld();
  const int root = world.size() - 1;
  Variable a(Tensor::FromVector<float>({float(world.rank()), 1}), "a");
  Variable b(Tensor::FromVector<int64_t>({world.rank() * 10}, Shape{1, 1}), "b");
  std::vector<Variable*> vars = {&a, &b};
  BroadcastVariables(vars, root);
  EXPECT_EQ(a.value().ToVector<float>(), (std::vector<float>{float(root), 1}));
  EXPECT_EQ(b.value().ToVector<int64_t>(), (std::vector<int64_t>{root * 10}));
}

TEST(BroadcastVariablesTest, DifferentListsFailOnEveryRank) {
  const World& world = TheWorld();
  // Rank 1 (when there is one) has a longer vector: every rank must throw.
  Variable a(Tensor::Zeros(Shape{world.rank() == 1 ? 3 : 2}), "a");
  std::vector<Variable*> vars = {&a};
  if (world.size() == 1) {
    EXPECT_NO_THROW(BroadcastVariables(vars, 0));
    return;
  }
  try {
    BroadcastVariables(vars, 0);
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 passes different variables than root 0 "
                                         "(first at variable 0)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(a.value().ToVector<float>(), std::vector<float>(world.rank() == 1 ? 3 : 2, 0.0f));
}

}  // namespace
}  // namespace eager::distributed
