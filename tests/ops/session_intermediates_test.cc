// Session::Run frees each intermediate once its last reader has run: a long
// chain of large tensors runs in memory of a few of them, not of the chain.
// Each run happens in a forked child, whose peak resident memory
// (getrusage) is its own, under an alarm; the child keeps eager's work on
// its own thread (SetNumThreads(1)), as the parent's pool does not survive
// a fork.

#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "ops/array_ops.h"
#include "ops/graph_ops.h"
#include "ops/operators.h"
#include "ops/session.h"
#include "runtime/graph.h"
#include "runtime/threads.h"
#include "tests/testing/memory_measurement.h"

namespace eager {
namespace {

// The growth of a forked child's peak RSS while it runs `work` on one
// thread, in KB; -1 when `work` returned false or the child failed.
long PeakGrowthKb(const std::function<bool()>& work) {
  return testing::ChildPeakGrowthKb([&] {
    SetNumThreads(1);
    return work();
  });
}

constexpr int kLength = 2000;
constexpr int64_t kElements = 256 * 1024;  // 1 MiB of float32 per intermediate
constexpr long kChainKb = kLength * kElements * 4 / 1024;

// Whether every element of `t` is `value`.
bool AllEqual(const Tensor& t, float value) {
  if (t.num_elements() != kElements) return false;
  for (const float v : t.data<float>()) {
    if (v != value) return false;
  }
  return true;
}

// AddressSanitizer's quarantine holds freed memory back: the sanitized pass
// checks every value, the unsanitized one the memory too.
constexpr bool kPeakMemoryIsEagers = testing::kMemoryIsMeasurable;

TEST(SessionIntermediatesTest, ALongChainOfLargeTensorsRunsInMemoryOfAFewOfThem) {
  // y_0 = x, y_i = y_{i-1} + x: every y_i is 1 MiB and only y_{i+1} reads
  // it, except y_10, also read by the last node, and fetched.
  const long growth = PeakGrowthKb([] {
    Graph graph;
    Tensor x, early, last;
    {
      const Graph::AsDefault in(graph);
      x = Placeholder(DType::kFloat32, Shape{kElements}, "x");
      Tensor y = x;
      for (int i = 1; i <= kLength; ++i) {
        y = y + x;
        if (i == 10) early = y;
      }
      last = y + early;  // y_10 must live until here
    }
    Session session(graph);
    const Tensor ones = Fill(Shape{kElements}, Tensor(1.0f));
    const auto values = session.Run({early, last}, {{x, ones}});
    // Run twice: the counts are per run.
    const Tensor again = session.Run(last, {{x, ones}});
    return AllEqual(*values[0], 11.0f) && AllEqual(*values[1], kLength + 1 + 11.0f) &&
           AllEqual(again, kLength + 1 + 11.0f);
  });
  ASSERT_GE(growth, 0) << "the run failed or computed wrong values";
  if (kPeakMemoryIsEagers) {
    // The graph itself is some KB per node; the chain's tensors would be
    // 2000 MiB if kept.
    EXPECT_LT(growth, kChainKb / 10) << "a chain of " << kLength << " 1 MiB intermediates grew the "
                                     << "peak by " << growth << " KB";
  }
}

}  // namespace
}  // namespace eager
