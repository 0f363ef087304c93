// TensorBundle save/restore bandwidth beside the machine's own limits,
// measured in the same run: memcpy, and a plain write(2) of the same bytes
// followed by fsync (what a save cannot beat). Also the peak extra resident
// memory during a save (VmHWM after resetting it, minus RSS before).
//
//   build/benchmarks/bundle_benchmark --benchmark_filter=100MB
//   EAGER_BENCH_TMPDIR=/some/disk build/benchmarks/bundle_benchmark
//
// The 1 GB cases write 1 GB (three times per iteration) to EAGER_BENCH_TMPDIR
// (default /tmp); they are never run by the test suite. BM_Save/1GB/shards:N
// writes N data files in parallel (BundleWriterOptions::num_shards); its
// counters say where the time goes: crc32c_MBps (one stream, in memory),
// memcpy_MBps, and the fsync'd plain write of the same bytes.

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/bundle/crc32c.h"
#include "saving/bundle/internal/read_chunking.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string BenchDir() {
  const char* env = std::getenv("EAGER_BENCH_TMPDIR");
  const fs::path dir =
      fs::path(env ? env : "/tmp") / ("eager_bundle_bench_" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir.string();
}

// "VmRSS" / "VmHWM" from /proc/self/status, in bytes.
int64_t ProcStatusBytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
  }
  return -1;
}

// Page faults of this process so far (minor and major).
int64_t PageFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt + usage.ru_majflt;
}

// Makes VmHWM restart from the current RSS (Linux >= 4.0).
void ResetPeakRss() { std::ofstream("/proc/self/clear_refs") << "5"; }

std::vector<Tensor> MakeTensors(int count, int64_t floats_each) {
  std::vector<Tensor> tensors;
  for (int i = 0; i < count; ++i) {
    std::vector<float> values(static_cast<size_t>(floats_each));
    for (size_t j = 0; j < values.size(); ++j) values[j] = float(i) + 1e-3f * float(j % 1000);
    tensors.push_back(Tensor::FromVector<float>(std::move(values)));
  }
  return tensors;
}

// CPU time of the calling thread (user + system: the kernel's copy in
// pread(2) included), in seconds. On a loaded machine it leaves out the
// time the thread waited for a core.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// The thread CPU seconds of the last PageCacheRead*Bandwidth call.
double last_read_cpu_seconds = 0;

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// write(2) every tensor's bytes to one new file, fsync, close. With
// `early_writeback`, also start writeback every 8 MiB as BundleWriter does:
// the tighter bound for a save.
void PlainWriteAndFsync(const std::string& path, const std::vector<Tensor>& tensors,
                        bool early_writeback) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("open " + path);
  off_t written = 0;
  off_t started = 0;
  for (const Tensor& t : tensors) {
    const auto bytes = t.bytes();
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n <= 0) throw std::runtime_error("write " + path);
      done += static_cast<size_t>(n);
      written += n;
      if (early_writeback && written - started >= (8 << 20)) {
        ::sync_file_range(fd, started, written - started, SYNC_FILE_RANGE_WRITE);
        started = written;
      }
    }
  }
  ::fsync(fd);
  ::close(fd);
}

double MemcpyBandwidth(const std::vector<Tensor>& tensors) {
  std::vector<char> dst(tensors[0].bytes().size());
  const auto start = Clock::now();
  size_t total = 0;
  for (const Tensor& t : tensors) {
    std::memcpy(dst.data(), t.bytes().data(), t.bytes().size());
    benchmark::DoNotOptimize(dst.data());
    total += t.bytes().size();
  }
  return double(total) / Seconds(start);
}

double Crc32cBandwidth(const std::vector<Tensor>& tensors) {
  const auto start = Clock::now();
  size_t total = 0;
  uint32_t crc = 0;
  for (const Tensor& t : tensors) {
    crc = internal::crc32c::Extend(crc, t.bytes().data(), t.bytes().size());
    total += t.bytes().size();
  }
  benchmark::DoNotOptimize(crc);
  return double(total) / Seconds(start);
}

void RemoveBundle(const std::string& dir, const std::string& base) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().starts_with(base + ".")) fs::remove(entry.path());
  }
}

void BM_Save(benchmark::State& state) {
  const int count = static_cast<int>(state.range(0));
  const int64_t mb_each = state.range(1);
  const int shards = static_cast<int>(state.range(2));
  const std::vector<Tensor> tensors = MakeTensors(count, mb_each * (1 << 20) / 4);
  const int64_t total = count * mb_each * (1 << 20);
  const std::string dir = BenchDir();
  double write_seconds = 0;
  double writeback_seconds = 0;
  double memcpy_bps = 0;
  double crc_bps = 0;
  int64_t peak_extra = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto start = Clock::now();
    PlainWriteAndFsync(dir + "/plain", tensors, false);
    write_seconds += Seconds(start);
    fs::remove(dir + "/plain");
    start = Clock::now();
    PlainWriteAndFsync(dir + "/plain", tensors, true);
    writeback_seconds += Seconds(start);
    fs::remove(dir + "/plain");
    memcpy_bps = std::max(memcpy_bps, MemcpyBandwidth(tensors));
    crc_bps = std::max(crc_bps, Crc32cBandwidth(tensors));
    const int64_t rss_before = ProcStatusBytes("VmRSS");
    ResetPeakRss();
    state.ResumeTiming();

    BundleWriter writer(dir + "/ckpt", BundleWriterOptions{.num_shards = shards});
    for (int i = 0; i < count; ++i)
      writer.Add("layer_" + std::to_string(i) + "/kernel", tensors[i]);
    writer.Finish();

    state.PauseTiming();
    peak_extra = std::max(peak_extra, ProcStatusBytes("VmHWM") - rss_before);
    RemoveBundle(dir, "ckpt");
    state.ResumeTiming();
  }
  state.SetBytesProcessed(state.iterations() * total);
  const double write_bps = double(total) * double(state.iterations()) / write_seconds;
  state.counters["fsync_write_MBps"] = write_bps / 1e6;
  state.counters["fsync_write_wb_MBps"] =
      double(total) * double(state.iterations()) / writeback_seconds / 1e6;
  state.counters["memcpy_MBps"] = memcpy_bps / 1e6;
  state.counters["crc32c_MBps"] = crc_bps / 1e6;
  state.counters["save_MBps"] =
      benchmark::Counter(double(total) / 1e6, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_extra_MB"] = double(peak_extra) / 1e6;
  fs::remove_all(dir);
}

// pread(2) of every tensor's bytes from `path` (in the page cache), one
// tensor at a time, into one reused buffer (`fresh` false: the copy alone)
// or into a new allocation per tensor, as a restore must fill new tensors
// (`fresh` true: the copy plus the fresh pages' faults and zeroing). The
// bandwidth a restore is measured against.
double PageCacheReadBandwidth(const std::string& path, int count, size_t bytes_each, bool fresh) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("open " + path);
  std::unique_ptr<char[]> reused(fresh ? nullptr : new char[bytes_each]);
  if (!fresh) std::memset(reused.get(), 0, bytes_each);  // faulted in before the clock
  const double cpu_start = ThreadCpuSeconds();
  const auto start = Clock::now();
  for (int i = 0; i < count; ++i) {
    std::unique_ptr<char[]> buffer(fresh ? new char[bytes_each] : nullptr);
    char* dst = fresh ? buffer.get() : reused.get();
    size_t done = 0;
    while (done < bytes_each) {
      const ssize_t n = ::pread(fd, dst + done, bytes_each - done,
                                static_cast<off_t>(uint64_t(i) * bytes_each + done));
      if (n <= 0) throw std::runtime_error("pread " + path);
      done += static_cast<size_t>(n);
    }
    benchmark::DoNotOptimize(dst);
  }
  const double seconds = Seconds(start);
  last_read_cpu_seconds = ThreadCpuSeconds() - cpu_start;
  ::close(fd);
  return double(count) * double(bytes_each) / seconds;
}

// As PageCacheReadBandwidth into a reused buffer, but in pieces of
// `chunk_bytes`, each checksummed (CRC32C) right after it is read, while in
// cache: what any restore built on pread(2) that keeps the checksums must
// do, without eager's bookkeeping. On one thread the CRC cannot overlap the
// kernel's copy, so this is the bound for BM_Restore/threads:1.
double PageCacheReadCrcBandwidth(const std::string& path, int count, size_t bytes_each,
                                 size_t chunk_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("open " + path);
  std::unique_ptr<char[]> dst(new char[bytes_each]);
  std::memset(dst.get(), 0, bytes_each);
  uint32_t crc = 0;
  const double cpu_start = ThreadCpuSeconds();
  const auto start = Clock::now();
  for (int i = 0; i < count; ++i) {
    for (size_t done = 0; done < bytes_each;) {
      const size_t len = std::min(chunk_bytes, bytes_each - done);
      const ssize_t n =
          ::pread(fd, dst.get() + done, len, static_cast<off_t>(uint64_t(i) * bytes_each + done));
      if (n <= 0) throw std::runtime_error("pread " + path);
      crc = internal::crc32c::Extend(crc, dst.get() + done, static_cast<size_t>(n));
      done += static_cast<size_t>(n);
    }
  }
  const double seconds = Seconds(start);
  last_read_cpu_seconds = ThreadCpuSeconds() - cpu_start;
  benchmark::DoNotOptimize(crc);
  ::close(fd);
  return double(count) * double(bytes_each) / seconds;
}

// Restore of a bundle in the page cache into new tensors (CRC included),
// beside a plain read of the same bytes in the same run (best of the
// iterations, measured between them): into a reused buffer
// (pagecache_read_MBps, the target's baseline) and into fresh memory
// (pagecache_read_fresh_MBps); and the CRC alone (crc32c_MBps). The restore
// is reported as the mean of the iterations (restore_MBps) and, like the
// baselines, their best (restore_best_MBps). On a loaded machine the
// per-iteration ratios are steadier: restore_over_read_median is the median
// of each restore's speed over the plain read just before it, and
// restore_over_read_crc_median the same against pread + CRC in the reader's
// chunks (PageCacheReadCrcBandwidth, pagecache_read_crc_MBps: the bound on
// one thread). restore_page_faults counts the restore's faults per
// iteration. EAGER_BENCH_CHUNK=<bytes> sets the reader's chunk size (a
// probe). The third argument is BundleReaderOptions::num_threads (0: the
// default, two threads on a machine with two cores or more; 1: the calling
// thread alone).
void BM_Restore(benchmark::State& state) {
  const int count = static_cast<int>(state.range(0));
  const int64_t mb_each = state.range(1);
  const BundleReaderOptions options{.num_threads = static_cast<int>(state.range(2))};
  const int64_t total = count * mb_each * (1 << 20);
  const std::string dir = BenchDir();
  double memcpy_bps = 0;
  double crc_bps = 0;
  {
    const std::vector<Tensor> tensors = MakeTensors(count, mb_each * (1 << 20) / 4);
    memcpy_bps = MemcpyBandwidth(tensors);
    crc_bps = Crc32cBandwidth(tensors);
    BundleWriter writer(dir + "/ckpt");
    for (int i = 0; i < count; ++i)
      writer.Add("layer_" + std::to_string(i) + "/kernel", tensors[i]);
    writer.Finish();
  }
  // Tensors are added in this order, so tensor i is at i * bytes_each.
  const std::string data = dir + "/ckpt.data-00000-of-00001";
  const auto bytes_each = static_cast<size_t>(mb_each) << 20;
  double read_bps = 0;
  double read_fresh_bps = 0;
  double restore_best_seconds = 1e30;
  double read_crc_bps = 0;
  // Per iteration: the restore's speed over the reads' just before it, by
  // wall time and by this thread's CPU time.
  std::vector<double> to_read, to_read_crc, cpu_to_read, cpu_to_read_crc;
  int64_t restore_faults = 0;
  if (const char* chunk = std::getenv("EAGER_BENCH_CHUNK"))
    internal::SetReadChunkingForTesting({.chunk_bytes = std::stoull(chunk)});
  for (auto _ : state) {
    state.PauseTiming();
    const double read_now = PageCacheReadBandwidth(data, count, bytes_each, false);
    const double read_cpu = last_read_cpu_seconds;
    read_bps = std::max(read_bps, read_now);
    read_fresh_bps =
        std::max(read_fresh_bps, PageCacheReadBandwidth(data, count, bytes_each, true));
    const double read_crc_now = PageCacheReadCrcBandwidth(
        data, count, bytes_each, internal::CurrentReadChunking().chunk_bytes);
    const double read_crc_cpu = last_read_cpu_seconds;
    read_crc_bps = std::max(read_crc_bps, read_crc_now);
    const int64_t faults_before = PageFaults();
    state.ResumeTiming();
    const double cpu_start = ThreadCpuSeconds();
    const auto start = Clock::now();
    {
      BundleReader reader(dir + "/ckpt", options);  // from the page cache: CPU cost, CRC included
      for (const std::string& key : reader.Keys()) {
        Tensor t = reader.Read(key);
        benchmark::DoNotOptimize(t);
      }
    }
    const double seconds = Seconds(start);
    const double cpu_seconds = ThreadCpuSeconds() - cpu_start;
    state.PauseTiming();
    restore_faults += PageFaults() - faults_before;
    restore_best_seconds = std::min(restore_best_seconds, seconds);
    to_read.push_back(double(total) / seconds / read_now);
    to_read_crc.push_back(double(total) / seconds / read_crc_now);
    cpu_to_read.push_back(read_cpu / cpu_seconds);
    cpu_to_read_crc.push_back(read_crc_cpu / cpu_seconds);
    state.ResumeTiming();
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  state.counters["restore_over_read_median"] = median(to_read);
  state.counters["restore_over_read_crc_median"] = median(to_read_crc);
  // Meaningful with threads:1 only (the helper thread's CPU is not counted).
  state.counters["cpu_restore_over_read_median"] = median(cpu_to_read);
  state.counters["cpu_restore_over_read_crc_median"] = median(cpu_to_read_crc);
  state.counters["pagecache_read_crc_MBps"] = read_crc_bps / 1e6;
  state.counters["restore_page_faults"] = double(restore_faults) / double(state.iterations());
  state.SetBytesProcessed(state.iterations() * total);
  state.counters["memcpy_MBps"] = memcpy_bps / 1e6;
  state.counters["crc32c_MBps"] = crc_bps / 1e6;
  state.counters["pagecache_read_MBps"] = read_bps / 1e6;
  state.counters["pagecache_read_fresh_MBps"] = read_fresh_bps / 1e6;
  state.counters["restore_MBps"] =
      benchmark::Counter(double(total) / 1e6, benchmark::Counter::kIsIterationInvariantRate);
  // Best of the iterations, like the pread baselines (restore_MBps is their mean).
  state.counters["restore_best_MBps"] = double(total) / restore_best_seconds / 1e6;
  fs::remove_all(dir);
}

// CRC32C alone over a buffer that stays in cache (1 MiB: the restore's
// chunk), per kernel (crc32c.h: 0 table, 1 crc32 instruction, 2 carry-less
// multiply); a kernel this CPU lacks reports an error instead of a time.
void BM_Crc32c(benchmark::State& state) {
  const auto kernel = static_cast<internal::crc32c::Kernel>(state.range(0));
  if (!internal::crc32c::HasKernel(kernel)) {
    state.SkipWithError("kernel not available on this CPU");
    return;
  }
  std::vector<char> data(static_cast<size_t>(state.range(1)));
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 + (i >> 9));
  uint32_t crc = 0;
  for (auto _ : state) {
    crc = internal::crc32c::ExtendWith(kernel, crc, data.data(), data.size());
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(state.iterations() * state.range(1));
}

BENCHMARK(BM_Crc32c)->ArgsProduct({{0, 1, 2}, {4096, 1 << 20}})->ArgNames({"kernel", "bytes"});

// {tensor count, MB per tensor, data shards}: 100 MB and 1 GB of float32.
BENCHMARK(BM_Save)
    ->Name("BM_Save/100MB")
    ->Args({100, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Save)
    ->Name("BM_Save/1GB/shards:1")
    ->Args({100, 10, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);
BENCHMARK(BM_Save)
    ->Name("BM_Save/1GB/shards:2")
    ->Args({100, 10, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);
BENCHMARK(BM_Save)
    ->Name("BM_Save/1GB/shards:4")
    ->Args({100, 10, 4})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);
BENCHMARK(BM_Restore)
    ->Name("BM_Restore/100MB")
    ->Args({100, 1, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Restore)
    ->Name("BM_Restore/1GB")
    ->Args({100, 10, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);
BENCHMARK(BM_Restore)
    ->Name("BM_Restore/1GB/threads:1")
    ->Args({100, 10, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(9);

}  // namespace
}  // namespace eager

BENCHMARK_MAIN();
