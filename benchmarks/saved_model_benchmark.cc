// TF 2 SavedModels TensorFlow 2.21 wrote (Keras 3's model.export(), a
// tf.function chain of cheap nodes), loaded with LoadSavedModel and run
// through a signature by eager's Session: the eager half of
// benchmarks/saved_model_side_by_side.py, which writes the models into a
// temporary directory, runs the same signatures in TF
// (tf.saved_model.load(dir).signatures[...]) and checks both sides' outputs.
//
//   EAGER_SAVED_MODEL_DIR=/tmp/models build/benchmarks/saved_model_benchmark
//
// The directory holds mlp/, cnn/, cnn_tfk/, chain1/ and chain201/ (see the
// script).
// Cases BM_SavedModel/<model>/<signature>/batch:B/threads:T. Every call is
// timed on its own: counters p50_us and p99_us are the median and 99th
// percentile of the calls (1,000 calls at batch 1), cpu_time the process's
// CPU time per call (every thread's), "fused" the graph
// nodes the last call's signature function ran fused. EAGER_GRAPH_FUSION=0
// runs unfused (the top-level Session and the function bodies' Sessions).
// With EAGER_SAVED_MODEL_OUT=DIR each case first writes its output as raw
// float32 to DIR/<model>_<signature>_b<B>.f32, for the script to compare
// with TF's.

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "benchmarks/call_latency.h"
#include "ops/session.h"
#include "runtime/machine_cores.h"
#include "runtime/threads.h"
#include "saving/saver/saved_model.h"

namespace eager {
namespace {

struct Model {
  const char* name;           // its directory
  const char* signature;      // "serving_default" or "serve"
  std::vector<int64_t> dims;  // per example; empty: the chain's scalars x, c, d
};

const Model kModels[] = {
    {"mlp", "serving_default", {784}},           {"mlp", "serve", {784}},
    {"cnn", "serving_default", {28, 28, 1}},     {"cnn", "serve", {28, 28, 1}},
    {"cnn_tfk", "serving_default", {28, 28, 1}}, {"cnn_tfk", "serve", {28, 28, 1}},
    {"chain1", "serving_default", {}},           {"chain201", "serving_default", {}},
};

// The inputs saved_model_side_by_side.py feeds TF: element i is
// ((i * 7919) mod 1000) / 1000 - 0.5.
Tensor Input(const Shape& shape) {
  std::vector<float> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>((i * 7919) % 1000) / 1000.f - 0.5f;
  return Tensor::FromVector<float>(std::move(v), shape);
}

std::string Dir() {
  const char* dir = std::getenv("EAGER_SAVED_MODEL_DIR");
  return dir != nullptr ? dir : "/tmp/eager_saved_models";
}

void BM_SavedModel(benchmark::State& state, const Model& m) {
  const int64_t batch = state.range(0);
  SetNumThreads(static_cast<int>(state.range(1)));
  const SavedModelBundle model = LoadSavedModel(Dir() + "/" + m.name, {kServingTag});
  SessionOptions options;
  const char* fusion = std::getenv("EAGER_GRAPH_FUSION");
  options.fuse_ops = fusion == nullptr || std::string(fusion) != "0";
  Session sess(model.graph(), options);
  std::map<std::string, Tensor> inputs;
  if (m.dims.empty()) {
    inputs = {{"x", Tensor(0.25f)}, {"c", Tensor(0.5f)}, {"d", Tensor(0.375f)}};
  } else {
    std::vector<int64_t> dims = {batch};
    dims.insert(dims.end(), m.dims.begin(), m.dims.end());
    inputs = {{"x", Input(Shape(dims))}};
  }
  Tensor y;
  for (int i = 0; i < 3; ++i) y = model.Run(sess, m.signature, inputs).begin()->second;
  if (const char* out = std::getenv("EAGER_SAVED_MODEL_OUT"); out != nullptr) {
    std::ofstream f(
        std::string(out) + "/" + m.name + "_" + m.signature + "_b" + std::to_string(batch) + ".f32",
        std::ios::binary);
    const auto v = y.data<float>();
    f.write(reinterpret_cast<const char*>(v.data()),
            static_cast<std::streamsize>(v.size() * sizeof(float)));
  }
  bench::TimeCalls(state, sess, batch, [&] { return model.Run(sess, m.signature, inputs); });
  SetNumThreads(internal::MachineCores());
}

void Register() {
  for (const Model& m : kModels) {
    for (const int batch : {1, 64}) {
      if (m.dims.empty() && batch != 1) continue;
      for (const int threads : {1, 2}) {
        const std::string name = std::string("BM_SavedModel/") + m.name + "/" + m.signature;
        auto* b = benchmark::RegisterBenchmark(name.c_str(),
                                               [&m](benchmark::State& s) { BM_SavedModel(s, m); });
        b->Args({batch, threads})->ArgNames({"batch", "threads"})->UseRealTime();
        b->MeasureProcessCPUTime();  // all threads' CPU, as the script's time.process_time
        b->Iterations(batch == 1 ? 1000 : 200);
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
