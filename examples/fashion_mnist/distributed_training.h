#pragma once

// The main job on many processes: `mpirun -np N fashion_mnist` trains one
// model with data parallelism. Every rank reads the data and shuffles it
// with the same seed, so all see the same global batches, in the order one
// process sees them; each trains on its contiguous 1/N of every batch, and
// eager::distributed::DistributedOptimizer averages the gradients, so the
// ranks take the steps one process takes on the whole batch (to float
// rounding). Only rank 0 prints, draws the progress bar and writes
// summaries; checkpoints are distributed saves (every rank writes its share,
// CheckpointOptions::distributed) into the one --checkpoint_dir, from which
// any number of ranks, or one process, resumes.
//
// Built without MPI (CMake found none) or run without mpirun, DataParallel is
// one rank and training is exactly the single-process job.

#include <memory>
#include <ostream>

#include "examples/fashion_mnist/training.h"

namespace fashion_mnist {

class DataParallel {
 public:
  // Joins the job (MPI_Init under mpirun). With more than one rank: the
  // ops' thread pool gets this machine's cores divided among the ranks
  // (they share one machine here), and stdout is silenced on ranks other
  // than 0.
  DataParallel(int& argc, char**& argv);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  int rank() const;
  int size() const;
  bool is_root() const { return rank() == 0; }

  // `log` on rank 0, a stream that discards everything on the others.
  std::ostream& Log(std::ostream& log);

  // With more than one rank: sets options.train_step to train on this
  // rank's share of each global batch through a DistributedOptimizer, and
  // options.distributed_checkpoints; options.stop (set it first) becomes
  // a flag every rank agrees on in each step. Throws InvalidArgumentError
  // when the batch size does not divide among the ranks.
  void Configure(TrainOptions& options);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace fashion_mnist
