#pragma once

// The per-call timing the graph and SavedModel benchmarks share: each
// iteration's call is timed on its own, and the counters report its
// distribution, not only the mean Google Benchmark gives:
//   p50_us, p99_us    the median and 99th percentile of the calls (us),
//   fused             graph nodes the last call ran through fused kernels,
//   examples_per_s    `batch` examples per call, as a rate.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ops/session.h"

namespace eager::bench {

// Runs `call()` once per iteration of `state`; `sess` is the Session it runs.
template <typename Call>
void TimeCalls(benchmark::State& state, const Session& sess, int64_t batch, Call&& call) {
  std::vector<double> us;
  us.reserve(1000);
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    auto result = call();
    benchmark::DoNotOptimize(result);
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  if (us.empty()) return;
  std::sort(us.begin(), us.end());
  const auto at = [&](double q) { return us[static_cast<size_t>(q * (us.size() - 1))]; };
  state.counters["p50_us"] = at(0.5);
  state.counters["p99_us"] = at(0.99);
  state.counters["fused"] = static_cast<double>(sess.last_run_fused_nodes());
  state.counters["examples_per_s"] =
      benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace eager::bench
