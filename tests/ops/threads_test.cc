// The intra-op pool (ops/parallel.h) under eager::SetNumThreads's limit
// (runtime/threads.h, tested in tests/runtime/threads_test.cc), and results
// that do not depend on it.

#include "runtime/threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/matmul.h"
#include "ops/parallel.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "ops/unary_ops.h"

namespace eager {
namespace {

// Restores the limit a test changed.
class ThreadsTest : public ::testing::Test {
 protected:
  void TearDown() override { SetNumThreads(saved_); }
  const int saved_ = GetNumThreads();
};

// float32 and float64 MatMul (OpenBLAS, split into blocks) against a
// double-precision triple loop, and bit-identical for 1, 2 and 3 threads.
TEST_F(ThreadsTest, MatMulIsCorrectAndIdenticalForAnyThreadCount) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (auto [ta, tb] : {std::pair{false, false}, {false, true}, {true, false}, {true, true}}) {
      // Both a row split (m >= n) and a column split, several blocks each.
      for (auto [m, n] : {std::pair<int64_t, int64_t>{517, 67}, {67, 517}}) {
        const int64_t k = 300;
        const Tensor a = RandomUniform(ta ? Shape{k, m} : Shape{m, k}, 1, -1.0, 1.0, dtype);
        const Tensor b = RandomUniform(tb ? Shape{n, k} : Shape{k, n}, 2, -1.0, 1.0, dtype);
        const std::vector<double> av = Cast(a, DType::kFloat64).ToVector<double>();
        const std::vector<double> bv = Cast(b, DType::kFloat64).ToVector<double>();
        std::vector<std::vector<double>> results;
        for (int threads : {1, 2, 3}) {
          SetNumThreads(threads);
          results.push_back(Cast(MatMul(a, b, ta, tb), DType::kFloat64).ToVector<double>());
        }
        const std::vector<double>& got = results[0];
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double want = 0;
            for (int64_t p = 0; p < k; ++p) {
              want += av[ta ? p * m + i : i * k + p] * bv[tb ? j * k + p : p * n + j];
            }
            ASSERT_NEAR(got[i * n + j], want, dtype == DType::kFloat32 ? 1e-4 : 1e-12)
                << dtype << " ta=" << ta << " tb=" << tb << " m=" << m << " at " << i << "," << j;
          }
        }
        EXPECT_EQ(results[0], results[1]) << dtype << " ta=" << ta << " tb=" << tb << " m=" << m;
        EXPECT_EQ(results[0], results[2]) << dtype << " ta=" << ta << " tb=" << tb << " m=" << m;
      }
    }
  }
}

TEST_F(ThreadsTest, EmptyInnerDimensionGivesZeros) {
  const Tensor a = Tensor::Zeros(Shape{3, 0}, DType::kFloat32);
  const Tensor b = Tensor::Zeros(Shape{0, 2}, DType::kFloat32);
  EXPECT_EQ(MatMul(a, b).ToVector<float>(), std::vector<float>(6, 0.0f));
  EXPECT_EQ(MatMul(Tensor::Zeros(Shape{0, 4}), Tensor::Zeros(Shape{4, 5})).shape(), (Shape{0, 5}));
}

// Large elementwise ops go over the pool: same values as one thread, and as
// a scalar loop.
TEST_F(ThreadsTest, LargeElementwiseOpsAreIdenticalForAnyThreadCount) {
  const int64_t n = (int64_t{1} << 18) + 77;  // several blocks and a ragged tail
  const Tensor x = RandomUniform(Shape{n}, 3, -2.0, 2.0, DType::kFloat32);
  const Tensor y = RandomUniform(Shape{n}, 4, 0.5, 2.0, DType::kFloat32);
  const Tensor s = Tensor::Scalar<float>(0.25f);
  auto run = [&] {
    return std::vector<std::vector<float>>{
        Add(x, y).ToVector<float>(), Mul(x, s).ToVector<float>(), Div(s, y).ToVector<float>(),
        Exp(x).ToVector<float>(),    Relu(x).ToVector<float>(),   ReluGrad(y, x).ToVector<float>()};
  };
  SetNumThreads(1);
  const auto one = run();
  SetNumThreads(2);
  const auto two = run();
  SetNumThreads(4);
  const auto four = run();
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, four);
  const std::vector<float> xv = x.ToVector<float>();
  const std::vector<float> yv = y.ToVector<float>();
  for (int64_t i = 0; i < n; i += 997) {
    EXPECT_EQ(two[0][i], xv[i] + yv[i]);
    EXPECT_EQ(two[1][i], xv[i] * 0.25f);
    EXPECT_EQ(two[2][i], 0.25f / yv[i]);
    EXPECT_NEAR(two[3][i], std::exp(xv[i]), 1e-6 * std::exp(xv[i]));
    EXPECT_EQ(two[4][i], xv[i] > 0 ? xv[i] : 0.0f);
    EXPECT_EQ(two[5][i], xv[i] > 0 ? yv[i] : 0.0f);
  }
}

// Large reductions go over the pool in an order fixed by the shape: the same
// bits for 1, 2 and 3 threads, and close to a double-precision sum. Shapes
// cover the three parallel plans (all to one value, an outer kept dimension,
// [reduced, kept] columns) and a serial one ([kept, reduced, kept] reduced
// over the middle goes by outer rows; [reduced, kept, reduced] stays serial).
TEST_F(ThreadsTest, LargeReductionsAreIdenticalForAnyThreadCount) {
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
  };
  const std::vector<Case> cases = {
      {Shape{(int64_t{1} << 18) + 77}, {0}},  // one value, 9 blocks, ragged tail
      {Shape{1000, 300}, {0}},                // column sums (a bias gradient)
      {Shape{1000, 300}, {1}},                // row sums
      {Shape{64, 3000, 2}, {1}},              // outer kept, inner kept
      {Shape{40, 3000, 3}, {0, 2}},           // serial
      {Shape{700, 400}, {0, 1}},              // all axes of a matrix: one value
  };
  for (const Case& c : cases) {
    const Tensor x = RandomUniform(c.shape, 7, -1.0, 1.0, DType::kFloat32);
    const std::vector<float> xv = x.ToVector<float>();
    std::vector<std::vector<std::vector<float>>> runs;
    for (int threads : {1, 2, 3}) {
      SetNumThreads(threads);
      runs.push_back({ReduceSum(x, c.axes).ToVector<float>(),
                      ReduceMean(x, c.axes).ToVector<float>(),
                      ReduceMax(x, c.axes).ToVector<float>()});
    }
    EXPECT_EQ(runs[0], runs[1]) << c.shape;
    EXPECT_EQ(runs[0], runs[2]) << c.shape;
    // Against a double-precision reference computed by index.
    const Tensor want_sum = ReduceSum(Cast(x, DType::kFloat64), c.axes);
    const Tensor want_max = ReduceMax(Cast(x, DType::kFloat64), c.axes);
    const std::vector<double> ws = want_sum.ToVector<double>();
    const std::vector<double> wm = want_max.ToVector<double>();
    ASSERT_EQ(runs[0][0].size(), ws.size());
    const double count = static_cast<double>(xv.size()) / static_cast<double>(ws.size());
    for (size_t i = 0; i < ws.size(); ++i) {
      EXPECT_NEAR(runs[0][0][i], ws[i], 1e-6 * count + 1e-4) << c.shape << " sum " << i;
      EXPECT_NEAR(runs[0][1][i], ws[i] / count, 1e-5) << c.shape << " mean " << i;
      EXPECT_EQ(runs[0][2][i], static_cast<float>(wm[i])) << c.shape << " max " << i;
    }
  }
  // The whole-input sum is the documented blocked order: each block of 2^15
  // elements summed alone, then the block sums added left to right.
  const int64_t n = (int64_t{1} << 17) + 5;
  const Tensor x = RandomUniform(Shape{n}, 8, 0.0, 1.0, DType::kFloat32);
  float want = 0.0f;
  for (int64_t b = 0; b < n; b += int64_t{1} << 15) {
    const int64_t len = std::min(int64_t{1} << 15, n - b);
    want += ReduceSum(Slice(x, {b}, {len}), {0}).scalar<float>();
  }
  for (int threads : {1, 2, 3}) {
    SetNumThreads(threads);
    EXPECT_EQ(ReduceSum(x, {0}).scalar<float>(), want) << threads << " threads";
  }
}

// Runs parallel jobs of four ~20 us blocks until one block runs on a thread
// other than the caller (or `limit` passes); returns how many jobs it took,
// or -1 if none did. Every job must still run all its blocks exactly once.
int JobsUntilAHelperJoins(std::chrono::milliseconds limit) {
  struct Job {
    std::thread::id caller = std::this_thread::get_id();
    std::atomic<int> blocks{0};
    std::atomic<int> helped{0};
  };
  const auto end = std::chrono::steady_clock::now() + limit;
  for (int jobs = 1; std::chrono::steady_clock::now() < end; ++jobs) {
    Job job;
    internal::RunBlocks(
        4, 1,
        [](void* context, int64_t begin, int64_t stop) {
          Job& j = *static_cast<Job*>(context);
          const auto busy = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
          while (std::chrono::steady_clock::now() < busy) {
          }
          j.blocks.fetch_add(static_cast<int>(stop - begin));
          if (std::this_thread::get_id() != j.caller) j.helped.fetch_add(1);
        },
        &job);
    EXPECT_EQ(job.blocks.load(), 4);
    if (job.helped.load() > 0) return jobs;
  }
  return -1;
}

// The pool really runs blocks on its workers: back to back (a worker still
// polling after its last job), and after the workers have gone to sleep on
// their futex (idle for far longer than their polling budget).
TEST_F(ThreadsTest, WorkersJoinJobsBackToBackAndAfterSleeping) {
  SetNumThreads(2);
  // Generous limits: on a loaded machine the worker may wait for a core.
  EXPECT_GT(JobsUntilAHelperJoins(std::chrono::seconds(5)), 0);
  EXPECT_GT(JobsUntilAHelperJoins(std::chrono::seconds(5)), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_GT(JobsUntilAHelperJoins(std::chrono::seconds(5)), 0);
}

// With one thread allowed, every block runs on the caller, even right after
// a two-thread job left a worker polling.
TEST_F(ThreadsTest, OneThreadRunsEveryBlockOnTheCaller) {
  SetNumThreads(2);
  (void)JobsUntilAHelperJoins(std::chrono::seconds(5));
  SetNumThreads(1);
  EXPECT_EQ(JobsUntilAHelperJoins(std::chrono::milliseconds(50)), -1);
}

// The caller always runs block 0 itself, even when a polling worker would
// reach it first, so that a GEMM cut into one block per thread leaves each
// block's rows of A and C in the same core's cache from job to job.
TEST_F(ThreadsTest, CallerRunsTheFirstBlock) {
  SetNumThreads(2);
  struct Job {
    std::thread::id caller = std::this_thread::get_id();
    std::atomic<int> first_on_caller{-1};
    std::atomic<bool> second_started{false};
    std::atomic<bool> second_on_worker{false};
  };
  int helped = 0;
  for (int jobs = 0; jobs < 500; ++jobs) {
    Job job;
    internal::RunBlocks(
        2, 1,
        [](void* context, int64_t begin, int64_t) {
          Job& j = *static_cast<Job*>(context);
          const bool on_caller = std::this_thread::get_id() == j.caller;
          if (begin == 1) {
            j.second_on_worker.store(!on_caller);
            j.second_started.store(true);
            // The worker ends last, as in a GEMM, and the next job finds it
            // polling at once.
            const auto busy = std::chrono::steady_clock::now() + std::chrono::microseconds(30);
            while (std::chrono::steady_clock::now() < busy) {
            }
            return;
          }
          j.first_on_caller.store(on_caller);
          // Gives the worker time to take the other block (so that the next
          // job finds it polling), up to 1 ms on a loaded machine.
          const auto limit = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
          while (!j.second_started.load() && std::chrono::steady_clock::now() < limit) {
          }
        },
        &job);
    ASSERT_EQ(job.first_on_caller.load(), 1) << "job " << jobs;
    helped += job.second_on_worker.load();
  }
  // The test means something only if the worker took part.
  EXPECT_GT(helped, 0);
}

// Two threads running large ops at once: one gets the pool, the other works
// alone; both get the right values.
TEST_F(ThreadsTest, ConcurrentCallersShareThePoolSafely) {
  SetNumThreads(2);
  const int64_t n = int64_t{1} << 19;
  const Tensor x = RandomUniform(Shape{n}, 5, -1.0, 1.0, DType::kFloat32);
  const Tensor a = RandomUniform(Shape{300, 300}, 6, -1.0, 1.0, DType::kFloat32);
  SetNumThreads(1);
  const std::vector<float> want_add = Add(x, x).ToVector<float>();
  const std::vector<float> want_mm = MatMul(a, a).ToVector<float>();
  SetNumThreads(2);
  std::vector<int> failures(2, 0);
  std::vector<std::thread> callers;
  callers.reserve(2);
  for (int t = 0; t < 2; ++t) {
    callers.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        if (Add(x, x).ToVector<float>() != want_add) ++failures[t];
        if (MatMul(a, a).ToVector<float>() != want_mm) ++failures[t];
      }
    });
  }
  for (std::thread& c : callers) c.join();
  EXPECT_EQ(failures, (std::vector<int>{0, 0}));
}

}  // namespace
}  // namespace eager
