#pragma once

// World: this process's place among the processes of a job started by
// `mpirun -np N`, and the collectives they run together (MPI underneath,
// OpenMPI from Debian; no MPI type appears here).
//
//   int main(int argc, char** argv) {
//     eager::distributed::World world(argc, argv);   // MPI_Init; MPI_Finalize at exit
//     if (world.is_root()) std::printf("%d processes\n", world.size());
//     ...
//   }
//
// Without a launcher (no mpirun: none of OpenMPI's, PMI's or PMIx's
// environment variables is set) MPI is not initialized at all: the World has
// rank 0 and size 1, every collective returns its input, and a program runs
// as a plain single process, without MPI's start-up cost.
//
// At most one World lives at a time (MPI can be initialized once per
// process); World::Current() finds it, for the functions of this library
// that take no World argument. Collectives are blocking and must be called
// by every rank in the same order with matching sizes (MPI's rule); they
// are called from the thread that made the World (MPI_THREAD_FUNNELED).
//
// While it lives the World is saving's CurrentSaveGroup()
// (saving/bundle/save_group.h): CheckpointOptions{.distributed = true} saves
// have every rank write its own data file of one bundle.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "saving/bundle/save_group.h"

namespace eager::distributed {

class World final : public SaveGroup {
 public:
  // Initializes MPI (MPI_Init_thread, funneled) when launched by mpirun;
  // `argc`/`argv` are handed to MPI_Init as MPI wants them. Throws
  // FailedPreconditionError when another World is alive, InternalError when
  // MPI fails to start.
  World(int& argc, char**& argv);
  World();
  // MPI_Finalize (when this World initialized MPI), unless an exception is
  // leaving the World's scope: then MPI is left unfinalized, so that when
  // the process exits mpirun ends the job instead of the other ranks
  // waiting forever for this one in a collective.
  ~World() override;
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // The live World, or nullptr.
  static World* Current();

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool is_root() const { return rank_ == 0; }
  // Whether this process runs under MPI (launched by mpirun), even with
  // size 1.
  bool uses_mpi() const { return uses_mpi_; }

  // Element-wise sum over every rank, in place, on every rank. The same
  // inputs on the same rank count give the same bits on every rank and in
  // every run (MPI's algorithm is chosen by size and count alone).
  void AllreduceSum(std::span<float> values) const;
  void AllreduceSum(std::span<double> values) const;
  // Root's bytes into every rank's `bytes` (sizes must match).
  void Broadcast(std::span<std::byte> bytes, int root) const;
  // Every rank's `bytes`, in rank order, on every rank; sizes may differ.
  std::vector<std::string> AllGather(std::string_view bytes) const override;
  void Barrier() const;

 private:
  void Start(int* argc, char*** argv);

  int rank_ = 0;
  int size_ = 1;
  bool uses_mpi_ = false;
  bool owns_mpi_ = false;  // MPI_Init was ours, so MPI_Finalize is too
};

}  // namespace eager::distributed
