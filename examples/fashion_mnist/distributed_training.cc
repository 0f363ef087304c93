#include "examples/fashion_mnist/distributed_training.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <optional>
#include <span>

#include "distributed/distributed_optimizer.h"
#include "distributed/world.h"
#include "ops/array_ops.h"
#include "runtime/errors.h"
#include "runtime/threads.h"

namespace fashion_mnist {
namespace {

// Discards what is written to it.
class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
};

}  // namespace

struct DataParallel::State {
  State(int& argc, char**& argv) : world(argc, argv) {}
  eager::distributed::World world;
  std::optional<eager::distributed::DistributedOptimizer> optimizer;
  // Ctrl-C reaches the ranks at different steps: training stops when any
  // rank's flag was set, decided in each step's allreduce, so every rank
  // stops (and saves) after the same step.
  const std::atomic<bool>* local_stop = nullptr;
  std::atomic<bool> agreed_stop{false};
  NullBuffer null_buffer;
  std::ostream null_stream{&null_buffer};
};

DataParallel::DataParallel(int& argc, char**& argv) : state_(std::make_unique<State>(argc, argv)) {
  if (size() == 1) return;
  // One machine's cores shared by its ranks (mpirun's placement here).
  eager::SetNumThreads(std::max(1, eager::GetNumThreads() / size()));
  if (!is_root()) std::freopen("/dev/null", "w", stdout);
}

DataParallel::~DataParallel() = default;

int DataParallel::rank() const { return state_->world.rank(); }
int DataParallel::size() const { return state_->world.size(); }

std::ostream& DataParallel::Log(std::ostream& log) { return is_root() ? log : state_->null_stream; }

void DataParallel::Configure(TrainOptions& options) {
  if (size() == 1) return;
  EAGER_CHECK(options.batch_size % size() == 0, "--batch_size ", options.batch_size,
              " does not divide among ", size(), " ranks; use a multiple of ", size());
  options.distributed_checkpoints = true;
  state_->local_stop = options.stop;
  options.stop = &state_->agreed_stop;
  options.train_step = [this](Classifier& model, eager::Adam& adam, const Dataset& batch) {
    State& state = *state_;
    if (!state.optimizer || &state.optimizer->optimizer() != &adam) state.optimizer.emplace(adam);
    // This rank's contiguous share of the global batch.
    const int64_t share = batch.size() / size();
    const eager::Tensor images =
        eager::Slice(batch.images, {rank() * share, 0}, {share, kImageSize});
    const eager::Tensor labels = eager::Slice(batch.labels, {rank() * share}, {share});
    eager::GradientTape tape;
    const eager::Tensor loss =
        eager::ReduceMean(eager::SparseSoftmaxCrossEntropyWithLogits(labels, model(images)));
    const std::vector<eager::Variable*> variables = model.TrainableVariables();
    state.optimizer->ApplyGradients(tape.Gradient(loss, variables), variables);
    // The global batch's loss (the mean of the shares'), and whether any
    // rank was asked to stop: one 8-byte allreduce.
    float sums[2] = {loss.scalar<float>(),
                     state.local_stop != nullptr && state.local_stop->load() ? 1.0f : 0.0f};
    state.world.AllreduceSum(std::span<float>(sums, 2));
    if (sums[1] > 0) state.agreed_stop.store(true);
    return sums[0] / static_cast<float>(size());
  };
}

}  // namespace fashion_mnist
