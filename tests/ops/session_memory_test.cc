// What a Session keeps for a large graph (issue 27): a run of the last node
// of a 200k-node chain leaves the Session holding its plan, some 28 bytes
// per node run (it held some 300 when it copied every node's attributes and
// kept per-node records of vectors), and a second run adds nothing; the run
// itself needs memory of a fraction of the graph's and no stack per node of
// depth. Heap sizes are glibc's (mallinfo2) in this process; peaks are a
// forked child's peak resident memory (tests/testing/memory_measurement.h).

#include <gtest/gtest.h>
#include <malloc.h>
#include <pthread.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "ops/session.h"
#include "runtime/graph.h"
#include "runtime/threads.h"
#include "tests/testing/memory_measurement.h"

namespace eager {
namespace {

constexpr int kNodes = 200000;

// x (Placeholder), then layer{i}/add = AddV2(previous, x), built as node
// records (as an import makes them); returns the last node's tensor name.
std::string BuildChain(Graph& graph, int nodes = kNodes) {
  graph.AddNode({.name = "x",
                 .op = "Placeholder",
                 .attrs = {{"dtype", DType::kFloat32}, {"shape", Shape{}}},
                 .output_specs = {{Shape{}, DType::kFloat32}}});
  std::string previous = "x";
  for (int i = 0; i < nodes; ++i) {
    std::string name = StrCat("layer", i, "/add");
    graph.AddNode({.name = name,
                   .op = "AddV2",
                   .inputs = {previous, "x"},
                   .attrs = {{"T", DType::kFloat32}},
                   .output_specs = {{Shape{}, DType::kFloat32}}});
    previous = std::move(name);
  }
  return previous + ":0";
}

// x = 1: y_i = y_{i-1} + 1 from y_0 = 2.
constexpr float kLastValue = kNodes + 1.0f;

// Bytes the heap holds now (glibc), its free pages given back first.
int64_t HeapBytes() {
  malloc_trim(0);
  return testing::HeapInUseBytes();
}

// AddressSanitizer's allocator answers no mallinfo2, and its quarantine
// holds freed memory back: the sanitized pass checks the values only.
constexpr bool kHeapIsGlibcs = testing::kMemoryIsMeasurable;

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(SessionMemoryTest, ARunKeepsAFewBytesPerNodeAndPeaksAtAFractionOfTheGraph) {
  const int64_t empty = HeapBytes();
  Graph graph;
  const std::string last = BuildChain(graph);
  const Feeds feeds = {{"x:0", Tensor(1.0f)}};
  const int64_t before = HeapBytes();
  Session session(graph);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(session.Run(last.c_str(), feeds).data<float>()[0], kLastValue);
  const double first_s = Seconds(start);
  const int64_t after_first = HeapBytes();
  start = std::chrono::steady_clock::now();
  EXPECT_EQ(session.Run(last.c_str(), feeds).data<float>()[0], kLastValue);
  const double second_s = Seconds(start);
  const int64_t after_second = HeapBytes();
  const double graph_per_node = static_cast<double>(before - empty) / kNodes;
  const double first_per_node = static_cast<double>(after_first - before) / kNodes;
  const double second_per_node = static_cast<double>(after_second - after_first) / kNodes;
  std::printf(
      "%d-node chain: graph %.1f B/node; the Session keeps %.1f B/node after the first run "
      "(%.3f s), %.1f more after the second (%.3f s)\n",
      kNodes, graph_per_node, first_per_node, first_s, second_per_node, second_s);
  if (kHeapIsGlibcs) {
    // The plan is 12 bytes per step and 8 per input: 28 per node here.
    EXPECT_LT(first_per_node, 40);
    EXPECT_LT(second_per_node, 1);
  }

  // A first run in a new Session, in a child: its plan, the search that
  // makes it, and the run's own arrays at once (some 260 B/node when each
  // run had arrays over the graph's nodes next to the Session's records).
  const long growth_kb = testing::ChildPeakGrowthKb([&] {
    SetNumThreads(1);  // the parent's pool does not survive a fork
    Session fresh(graph);
    return fresh.Run(last.c_str(), feeds).data<float>()[0] == kLastValue;
  });
  ASSERT_GE(growth_kb, 0) << "the run in a child failed or computed a wrong value";
  const double peak_per_node = growth_kb * 1024.0 / kNodes;
  std::printf("a first run's peak: +%.1f B/node\n", peak_per_node);
  if (kHeapIsGlibcs) {
    EXPECT_LT(peak_per_node, 120);
  }
}

// Running every node of a chain in turn (a different kind of call each
// time) keeps a bounded number of plans, not one per call: 14 MB of plans
// for this 1000-node chain, some 0.5 MB when at most 16 are kept.
TEST(SessionMemoryTest, EveryNodeInTurnKeepsABoundedNumberOfPlans) {
  constexpr int kShort = 1000;
  Graph graph;
  BuildChain(graph, kShort);
  const Feeds feeds = {{"x:0", Tensor(1.0f)}};
  Session session(graph);
  const int64_t before = HeapBytes();
  for (int i = 0; i < kShort; ++i) {
    const std::string name = StrCat("layer", i, "/add:0");
    ASSERT_EQ(session.Run(name.c_str(), feeds).data<float>()[0], i + 2.0f);
  }
  const int64_t kept = HeapBytes() - before;
  std::printf("%d runs of different nodes: the Session keeps %lld B\n", kShort,
              static_cast<long long>(kept));
  if (kHeapIsGlibcs) {
    EXPECT_LT(kept, 2'000'000);
  }
}

// A run recurses on nothing: the chain's 200k levels run on a thread with
// 256 KB of stack, where a frame per level would overflow.
TEST(SessionMemoryTest, ADeepChainRunsOnASmallStack) {
  Graph graph;
  const std::string last = BuildChain(graph);
  struct Work {
    Graph* graph;
    const std::string* last;
    float value = 0;
  } work{&graph, &last};
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
  pthread_t thread;
  const auto run = [](void* arg) -> void* {
    auto& w = *static_cast<Work*>(arg);
    try {
      Session session(*w.graph);
      w.value = session.Run(w.last->c_str(), {{"x:0", Tensor(1.0f)}}).data<float>()[0];
    } catch (const std::exception&) {
      w.value = -1;
    }
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, run, &work), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  pthread_attr_destroy(&attr);
  EXPECT_EQ(work.value, kLastValue);
}

}  // namespace
}  // namespace eager
