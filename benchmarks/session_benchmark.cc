// Graph mode's per-node cost: Session::Run on a graph of small nodes, so
// that the time is the Session's own work per node (finding the node's op,
// its attributes, its inputs' values) rather than the kernels'. The
// "per_node" counter divides a Run by the nodes it runs.
//
//   build-bench/benchmarks/session_benchmark --benchmark_min_time=0.5
//
// Instructions per Run, repeatable whatever the machine's load: the
// BM_SessionRunFixed case runs a fixed 2000 Runs through RunOnce, which
// callgrind counts alone (see benchmarks/README.md, "Issue 24").

#include <benchmark/benchmark.h>

#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/variable.h"

namespace eager {
namespace {

// A chain of `links` x 4 op nodes on a [1, 4] float tensor: AddV2 with an
// eager constant (a Const node), Mul by a variable (VariableV2 + read),
// Tanh, and Sum over axis 0 with keep_dims (a Const input attr and a bool
// attribute), fed from a Placeholder.
struct ChainGraph {
  explicit ChainGraph(int links) {
    Graph::AsDefault in(graph);
    x = Placeholder(DType::kFloat32, Shape{1, 4}, "x");
    v = std::make_unique<Variable>(Tensor::Matrix<float>({{0.5f, 0.25f, 0.75f, 1.0f}}), "v");
    Tensor y = x;
    for (int i = 0; i < links; ++i) {
      y = Add(y, Tensor::Matrix<float>({{0.1f, 0.2f, 0.3f, 0.4f}}));
      y = Mul(y, v->value());
      y = Tanh(y);
      y = ReduceSum(y, {0}, /*keep_dims=*/true);
    }
    out = y;
    init = GlobalVariablesInitializer();
  }

  Graph graph;
  Tensor x, out;
  std::unique_ptr<Variable> v;
  Operation init;
};

// The nodes a Run of `out` runs: every node but the initializer's
// (init, v/Assign, v/initial_value), and the fed Placeholder.
int NodesRun(const ChainGraph& g) { return g.graph.num_nodes() - 4; }

[[gnu::noinline]] Tensor RunOnce(Session& sess, const ChainGraph& g, const Feeds& feeds) {
  return sess.Run(g.out, feeds);
}

void BM_SessionRun(benchmark::State& state) {
  ChainGraph g(static_cast<int>(state.range(0)));
  Session sess(g.graph);
  sess.Run(g.init);
  const Feeds feeds = {{g.x, Tensor::Matrix<float>({{1, 2, 3, 4}})}};
  for (auto _ : state) {
    Tensor y = RunOnce(sess, g, feeds);
    benchmark::DoNotOptimize(y);
  }
  state.counters["nodes"] = NodesRun(g);
  state.counters["per_node"] = benchmark::Counter(
      NodesRun(g), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SessionRun)->Arg(1)->Arg(25);

// A fixed number of Runs, for callgrind (instructions per Run).
void BM_SessionRunFixed(benchmark::State& state) { BM_SessionRun(state); }
BENCHMARK(BM_SessionRunFixed)->Arg(25)->Iterations(2000);

}  // namespace
}  // namespace eager

BENCHMARK_MAIN();
