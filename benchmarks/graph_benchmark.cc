// TF1 graphs TensorFlow wrote (../shared/realdata), imported from their
// .meta, restored from their checkpoint and run by eager's Session: the
// inference half of benchmarks/graph_side_by_side.py, whose TF side runs the
// same files on the same inputs with TF 2.21's Session.run.
//
//   EAGER_REALDATA_DIR=../shared/realdata build/benchmarks/graph_benchmark
//
// Cases BM_Graph/<model>/batch:B/threads:T. Every call is timed on its own:
// counters p50_us and p99_us are the median and 99th percentile of the calls
// (1,000 calls at batch 1), "fused" the graph nodes that ran fused
// (ops/internal/graph_fusion.h). EAGER_GRAPH_FUSION=0 runs unfused.

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/call_latency.h"
#include "ops/session.h"
#include "runtime/graph.h"
#include "runtime/machine_cores.h"
#include "runtime/threads.h"
#include "saving/saver/meta_graph_import_export.h"
#include "saving/saver/saver.h"

namespace eager {
namespace {

struct Model {
  const char* name;
  const char* prefix;  // under the realdata directory
  const char* input;   // float32 [batch, dims...]
  std::vector<int64_t> dims;
  const char* output;
  const char* training_flag;  // a bool placeholder fed false, or nullptr
};

// LeNet (CarND lab, TF 1.0.1): Conv2D + Add(bias) + Relu, MaxPool, dense.
// An MLP with ELU and batch normalization (Hands-on ML, TF 1.12): MatMul +
// BiasAdd, batch norm, Elu.
const Model kModels[] = {
    {"lenet", "tf1_saver_lenet_adam/lenet", "Placeholder:0", {32, 32, 1}, "add_4:0", nullptr},
    {"elu_mlp",
     "tf1_saver_handson_bn_partial_adam/dnn11_0_to_4.ckpt",
     "X:0",
     {784},
     "dnn/y_prob:0",
     "dnn/training:0"},
};

// The inputs graph_side_by_side.py feeds TF: element i is
// ((i * 7919) mod 1000) / 1000 - 0.5.
Tensor Input(const Shape& shape) {
  std::vector<float> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>((i * 7919) % 1000) / 1000.f - 0.5f;
  return Tensor::FromVector<float>(std::move(v), shape);
}

std::string RealdataDir() {
  const char* dir = std::getenv("EAGER_REALDATA_DIR");
  return dir != nullptr ? dir : "../shared/realdata";
}

void BM_Graph(benchmark::State& state, const Model& m) {
  const int64_t batch = state.range(0);
  SetNumThreads(static_cast<int>(state.range(1)));
  const std::string prefix = RealdataDir() + "/" + m.prefix;
  Graph graph;
  std::unique_ptr<Saver> saver;
  {
    Graph::AsDefault in(graph);
    saver = ImportMetaGraph(prefix + ".meta");
  }
  SessionOptions options;
  const char* fusion = std::getenv("EAGER_GRAPH_FUSION");
  options.fuse_ops = fusion == nullptr || std::string(fusion) != "0";
  Session sess(graph, options);
  saver->Restore(sess, prefix);
  std::vector<int64_t> dims = {batch};
  dims.insert(dims.end(), m.dims.begin(), m.dims.end());
  Feeds feeds = {{m.input, Input(Shape(dims))}};
  if (m.training_flag != nullptr) feeds.emplace_back(m.training_flag, Tensor(false));
  for (int i = 0; i < 3; ++i) sess.Run(m.output, feeds);  // plans, filter reorders
  bench::TimeCalls(state, sess, batch, [&] { return sess.Run(m.output, feeds); });
  SetNumThreads(internal::MachineCores());
}

void Register() {
  for (const Model& m : kModels) {
    for (const int batch : {1, 64}) {
      for (const int threads : {1, 2}) {
        auto* b = benchmark::RegisterBenchmark((std::string("BM_Graph/") + m.name).c_str(),
                                               [&m](benchmark::State& s) { BM_Graph(s, m); });
        b->Args({batch, threads})->ArgNames({"batch", "threads"})->UseRealTime();
        if (batch == 1) b->Iterations(1000);
      }
    }
  }
}

}  // namespace
}  // namespace eager

int main(int argc, char** argv) {
  eager::Register();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
