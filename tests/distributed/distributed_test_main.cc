// The main of distributed_tests, run by ctest under `mpirun -np 2` and
// `-np 3` and as a plain process (size 1): one World for every test, the
// usual gtest output from rank 0, and from the other ranks only their
// failures, prefixed with the rank. Every rank runs every test in the same
// order, so the collectives inside them meet.

#include <gtest/gtest.h>

#include <cstdio>

#include "distributed/world.h"

namespace {

class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "rank %d: %s:%d: failure\n%s\n", rank_,
                 result.file_name() != nullptr ? result.file_name() : "?", result.line_number(),
                 result.summary());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  eager::distributed::World world(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (!world.is_root()) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(world.rank()));
  }
  return RUN_ALL_TESTS();
}
