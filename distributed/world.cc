#include "distributed/world.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <exception>

#include "runtime/errors.h"

namespace eager::distributed {
namespace {

World* g_current = nullptr;

// mpirun (OpenMPI), mpiexec.hydra (MPICH) and PMIx launchers set these in
// every process they start; a plain `./program` has none of them.
bool LaunchedByMpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

void Check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw InternalError(StrCat("eager::distributed: ", call, " failed: ", std::string(text, length)));
}

// MPI counts are ints: a buffer beyond INT_MAX elements goes in pieces.
template <typename T, typename F>
void InPieces(std::span<T> values, F&& f) {
  constexpr size_t kMaxCount = INT_MAX;
  for (size_t begin = 0; begin < values.size(); begin += kMaxCount) {
    const size_t count = std::min(kMaxCount, values.size() - begin);
    f(values.data() + begin, static_cast<int>(count));
  }
}

}  // namespace

World::World() {
  int argc = 0;
  char** argv = nullptr;
  Start(&argc, &argv);
}

World::World(int& argc, char**& argv) { Start(&argc, &argv); }

void World::Start(int* argc, char*** argv) {
  if (g_current != nullptr) {
    throw FailedPreconditionError(
        "eager::distributed::World: a World already exists in this process (MPI starts once)");
  }
  if (LaunchedByMpirun()) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized == 0) {
      int provided = 0;
      Check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
      owns_mpi_ = true;
    }
    uses_mpi_ = true;
    // Errors come back as codes (thrown above), not as MPI's abort.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  g_current = this;
  SetCurrentSaveGroup(this);
}

World::~World() {
  SetCurrentSaveGroup(nullptr);
  g_current = nullptr;
  // Left by an exception (an error on this rank, perhaps on it alone):
  // MPI_Finalize would wait for ranks that may be waiting in a collective
  // for this one, and the job would hang. Without it the process ends
  // unfinalized, and mpirun ends the whole job.
  if (owns_mpi_ && std::uncaught_exceptions() == 0) MPI_Finalize();
}

World* World::Current() { return g_current; }

void World::AllreduceSum(std::span<float> values) const {
  if (size_ == 1) return;
  InPieces(values, [](float* data, int count) {
    Check(MPI_Allreduce(MPI_IN_PLACE, data, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
          "MPI_Allreduce");
  });
}

void World::AllreduceSum(std::span<double> values) const {
  if (size_ == 1) return;
  InPieces(values, [](double* data, int count) {
    Check(MPI_Allreduce(MPI_IN_PLACE, data, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
          "MPI_Allreduce");
  });
}

void World::Broadcast(std::span<std::byte> bytes, int root) const {
  EAGER_CHECK(root >= 0 && root < size_, "World::Broadcast: root ", root, " is not a rank of ",
              size_);
  if (size_ == 1) return;
  InPieces(bytes, [root](std::byte* data, int count) {
    Check(MPI_Bcast(data, count, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
  });
}

std::vector<std::string> World::AllGather(std::string_view bytes) const {
  if (size_ == 1) return {std::string(bytes)};
  EAGER_CHECK(bytes.size() <= INT_MAX, "World::AllGather: ", bytes.size(),
              " bytes is more than one MPI message holds");
  const int mine = static_cast<int>(bytes.size());
  std::vector<int> counts(static_cast<size_t>(size_));
  Check(MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD),
        "MPI_Allgather");
  std::vector<int> displacements(counts.size());
  int64_t total = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    EAGER_CHECK(total + counts[r] <= INT_MAX, "World::AllGather: more than 2 GiB in all");
    displacements[r] = static_cast<int>(total);
    total += counts[r];
  }
  std::string all(static_cast<size_t>(total), '\0');
  Check(MPI_Allgatherv(bytes.data(), mine, MPI_BYTE, all.data(), counts.data(),
                       displacements.data(), MPI_BYTE, MPI_COMM_WORLD),
        "MPI_Allgatherv");
  std::vector<std::string> out;
  out.reserve(counts.size());
  for (size_t r = 0; r < counts.size(); ++r) {
    out.push_back(
        all.substr(static_cast<size_t>(displacements[r]), static_cast<size_t>(counts[r])));
  }
  return out;
}

void World::Barrier() const {
  if (size_ == 1) return;
  Check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

}  // namespace eager::distributed
