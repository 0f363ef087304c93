// oneDNN as Conv2D's float32 kernel (ops/internal/dnnl_conv.h).
//
// A Plan (primitive, layouts, scratchpad size) is made once per op kind,
// geometry and chunk size and cached for the process: making a oneDNN
// primitive costs far more than running a small one. Primitives run with a
// user-owned scratchpad per thread, so one Plan serves any number of threads
// at once.

#include "ops/internal/dnnl_conv.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "ops/parallel.h"
#include "runtime/machine_cores.h"

namespace eager::internal {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr memory::data_type kF32 = memory::data_type::f32;

enum class Kind : int64_t { kForward, kBackwardData, kBackwardWeights };

const dnnl::engine& Engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// oneDNN's own OpenMP team stays at one thread on every thread that calls
// it: eager's pool supplies the parallelism, over fixed chunks.
void KeepDnnlSingleThreaded() {
  if (omp_get_max_threads() != 1) omp_set_num_threads(1);
}

// How a batch is cut: `count` chunks of `size` items, the last `last` items.
struct Chunks {
  int64_t size = 0;
  int64_t count = 0;
  int64_t last = 0;
};

Chunks ChunksOf(int64_t batch) {
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(batch, MachineCores()));
  Chunks c;
  c.size = (batch + parts - 1) / parts;
  c.count = (batch + c.size - 1) / c.size;
  c.last = batch - (c.count - 1) * c.size;
  return c;
}

// What a forward convolution does after the sum (_FusedConv2D's epilogue);
// always {false, false} for the gradients.
struct Epilogue {
  bool bias = false;
  bool relu = false;
};

struct Plan {
  bool usable = false;
  Kind kind = Kind::kForward;
  dnnl::primitive conv;
  memory::desc src, filter, dst;  // the primitive's (activations nhwc)
  memory::desc bias;              // [out_c], when the epilogue has one
  memory::desc user_filter;       // hwio
  memory::desc scratchpad;
  // user_filter -> filter (forward, backward data) or back (backward
  // weights), made once; empty when the two layouts are the same.
  dnnl::primitive filter_reorder;
};

memory::dims Dims(int64_t a, int64_t b, int64_t c, int64_t d) { return {a, b, c, d}; }

std::shared_ptr<const Plan> MakePlan(Kind kind, const ConvShape& s, int64_t batch,
                                     Epilogue epilogue) {
  // oneDNN sizes its work split for the threads it may use when it makes a
  // primitive, and runs that many: one.
  KeepDnnlSingleThreaded();
  auto plan = std::make_shared<Plan>();
  plan->kind = kind;
  const int64_t end_h =
      (s.out_h - 1) * s.stride_h + (s.k_h - 1) * s.dilation_h + 1 - s.in_h - s.pad_top;
  const int64_t end_w =
      (s.out_w - 1) * s.stride_w + (s.k_w - 1) * s.dilation_w + 1 - s.in_w - s.pad_left;
  if (end_h < 0 || end_w < 0 || batch < 1) return plan;
  const memory::desc src(Dims(batch, s.in_c, s.in_h, s.in_w), kF32, Tag::nhwc);
  const memory::desc dst(Dims(batch, s.out_c, s.out_h, s.out_w), kF32, Tag::nhwc);
  const memory::desc any_filter(Dims(s.out_c, s.in_c, s.k_h, s.k_w), kF32, Tag::any);
  const memory::dims strides = {s.stride_h, s.stride_w};
  const memory::dims dilates = {s.dilation_h - 1, s.dilation_w - 1};
  const memory::dims pad_begin = {s.pad_top, s.pad_left};
  const memory::dims pad_end = {end_h, end_w};
  const memory::desc bias(memory::dims{s.out_c}, kF32, Tag::x);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  try {
    const dnnl::convolution_forward::primitive_desc forward(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                        dnnl::algorithm::convolution_direct, src, any_filter, dst,
                                        strides, dilates, pad_begin, pad_end),
        attr, Engine());
    std::string impl;
    switch (kind) {
      case Kind::kForward: {
        dnnl::primitive_attr fused = attr;
        if (epilogue.relu) {
          dnnl::post_ops relu;
          relu.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
          fused.set_post_ops(relu);
        }
        const dnnl::convolution_forward::primitive_desc pd =
            epilogue.bias
                ? dnnl::convolution_forward::primitive_desc(
                      dnnl::convolution_forward::desc(
                          dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                          src, any_filter, bias, dst, strides, dilates, pad_begin, pad_end),
                      fused, Engine())
                : dnnl::convolution_forward::primitive_desc(
                      dnnl::convolution_forward::desc(
                          dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                          src, any_filter, dst, strides, dilates, pad_begin, pad_end),
                      fused, Engine());
        impl = pd.impl_info_str();
        plan->conv = dnnl::convolution_forward(pd);
        plan->filter = pd.weights_desc();
        plan->scratchpad = pd.scratchpad_desc();
        break;
      }
      case Kind::kBackwardData: {
        const dnnl::convolution_backward_data::primitive_desc pd(
            dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, src,
                                                  any_filter, dst, strides, dilates, pad_begin,
                                                  pad_end),
            attr, Engine(), forward);
        impl = pd.impl_info_str();
        plan->conv = dnnl::convolution_backward_data(pd);
        plan->filter = pd.weights_desc();
        plan->scratchpad = pd.scratchpad_desc();
        break;
      }
      case Kind::kBackwardWeights: {
        const dnnl::convolution_backward_weights::primitive_desc pd(
            dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, src,
                                                     any_filter, dst, strides, dilates, pad_begin,
                                                     pad_end),
            attr, Engine(), forward);
        impl = pd.impl_info_str();
        plan->conv = dnnl::convolution_backward_weights(pd);
        plan->filter = pd.diff_weights_desc();
        plan->scratchpad = pd.scratchpad_desc();
        break;
      }
    }
    // oneDNN's reference loops are slower than im2col + GEMM.
    if (impl.rfind("ref", 0) == 0) return plan;
  } catch (const dnnl::error&) {
    return plan;  // a shape oneDNN does not take
  }
  plan->src = src;
  plan->dst = dst;
  plan->bias = bias;
  plan->user_filter = memory::desc(Dims(s.out_c, s.in_c, s.k_h, s.k_w), kF32, Tag::hwio);
  if (plan->filter != plan->user_filter) {
    try {
      const bool out = kind == Kind::kBackwardWeights;
      plan->filter_reorder = dnnl::reorder(
          dnnl::reorder::primitive_desc(Engine(), out ? plan->filter : plan->user_filter, Engine(),
                                        out ? plan->user_filter : plan->filter));
    } catch (const dnnl::error&) {
      return plan;
    }
  }
  plan->usable = true;
  return plan;
}

std::shared_ptr<const Plan> GetPlan(Kind kind, const ConvShape& s, int64_t batch,
                                    Epilogue epilogue) {
  using Key = std::array<int64_t, 18>;
  const Key key = {static_cast<int64_t>(kind),
                   (epilogue.bias ? 1 : 0) + (epilogue.relu ? 2 : 0),
                   batch,
                   s.in_h,
                   s.in_w,
                   s.in_c,
                   s.k_h,
                   s.k_w,
                   s.out_c,
                   s.out_h,
                   s.out_w,
                   s.stride_h,
                   s.stride_w,
                   s.dilation_h,
                   s.dilation_w,
                   s.pad_top,
                   s.pad_left,
                   s.batch};
  static std::mutex mutex;
  static std::map<Key, std::shared_ptr<const Plan>> plans;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = plans.find(key); it != plans.end()) return it->second;
  }
  std::shared_ptr<const Plan> plan = MakePlan(kind, s, batch, epilogue);
  const std::lock_guard<std::mutex> lock(mutex);
  return plans.emplace(key, std::move(plan)).first->second;
}

// The plans for a full chunk and for the last one; nullptr when either is
// not usable.
struct ChunkPlans {
  Chunks chunks;
  std::shared_ptr<const Plan> full, last;
};

bool GetChunkPlans(Kind kind, const ConvShape& s, ChunkPlans& out, Epilogue epilogue = {}) {
  if (s.batch < 1) return false;
  out.chunks = ChunksOf(s.batch);
  out.full = GetPlan(kind, s, out.chunks.size, epilogue);
  out.last =
      out.chunks.last == out.chunks.size ? out.full : GetPlan(kind, s, out.chunks.last, epilogue);
  return out.full->usable && out.last->usable;
}

memory Wrap(const memory::desc& desc, const void* data) {
  return memory(desc, Engine(), const_cast<void*>(data));
}

// Copies the filter between eager's hwio and the plan's layout (the
// direction plan.filter_reorder was made for) on the calling thread; a plain
// copy when the layouts are the same.
void ReorderFilter(const Plan& plan, const void* from, void* to) {
  const bool out = plan.kind == Kind::kBackwardWeights;
  const memory::desc& from_desc = out ? plan.filter : plan.user_filter;
  const memory::desc& to_desc = out ? plan.user_filter : plan.filter;
  if (plan.filter_reorder.get(true) == nullptr) {
    std::memcpy(to, from, from_desc.get_size());
    return;
  }
  KeepDnnlSingleThreaded();
  memory src = Wrap(from_desc, from);
  memory dst = Wrap(to_desc, to);
  dnnl::stream stream(Engine());
  plan.filter_reorder.execute(stream, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
  stream.wait();
}

// A buffer of at least `count` floats that lives as long as the thread and
// is reused by the next call: fresh large vectors would cost an mmap and a
// page fault per page on every op. `slot` tells a thread's buffers apart.
float* ThreadBuffer(int slot, size_t count) {
  thread_local std::array<std::vector<float>, 4> buffers;
  std::vector<float>& b = buffers[static_cast<size_t>(slot)];
  if (b.size() < count) b.resize(count);
  return b.data();
}

// The filter in each plan's layout (forward and backward data read it), in
// the calling thread's buffers 0 and 1.
struct PlanFilters {
  const float* full = nullptr;
  const float* last = nullptr;
  const float* ForPlan(bool is_last) const { return is_last ? last : full; }
};

PlanFilters FiltersFor(const ChunkPlans& p, const float* filter) {
  PlanFilters f;
  float* full = ThreadBuffer(0, p.full->filter.get_size() / sizeof(float));
  ReorderFilter(*p.full, filter, full);
  f.full = f.last = full;
  if (p.last != p.full) {
    float* last = ThreadBuffer(1, p.last->filter.get_size() / sizeof(float));
    ReorderFilter(*p.last, filter, last);
    f.last = last;
  }
  return f;
}

void Run(const Plan& plan, std::unordered_map<int, memory> args) {
  KeepDnnlSingleThreaded();
  // The thread's scratchpad, 64-byte aligned as oneDNN's own.
  thread_local std::vector<char> scratch;
  const size_t bytes = plan.scratchpad.get_size() + 64;
  if (scratch.size() < bytes) scratch.resize(bytes);
  const auto address = reinterpret_cast<uintptr_t>(scratch.data());
  void* aligned = scratch.data() + ((64 - address % 64) % 64);
  args.emplace(DNNL_ARG_SCRATCHPAD, Wrap(plan.scratchpad, aligned));
  dnnl::stream stream(Engine());
  plan.conv.execute(stream, args);
  stream.wait();
}

// fn(chunk index, first item, is the last chunk, its plan) for every chunk,
// on the pool.
template <typename F>
void ForEachChunk(const ChunkPlans& p, F&& fn) {
  ParallelFor(p.chunks.count, 1, 2, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const bool is_last = i == p.chunks.count - 1;
      fn(i, i * p.chunks.size, is_last, is_last ? *p.last : *p.full);
    }
  });
}

}  // namespace

bool HaveDnnl() { return true; }

bool DnnlConvForward(const ConvShape& s, const float* input, const float* filter, float* output,
                     const float* bias, bool relu) {
  ChunkPlans p;
  if (!GetChunkPlans(Kind::kForward, s, p, Epilogue{.bias = bias != nullptr, .relu = relu})) {
    return false;
  }
  const PlanFilters filters = FiltersFor(p, filter);
  const int64_t in_item = s.in_h * s.in_w * s.in_c;
  const int64_t out_item = s.out_h * s.out_w * s.out_c;
  ForEachChunk(p, [&](int64_t, int64_t first, bool is_last, const Plan& plan) {
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, Wrap(plan.src, input + first * in_item)},
        {DNNL_ARG_WEIGHTS, Wrap(plan.filter, filters.ForPlan(is_last))},
        {DNNL_ARG_DST, Wrap(plan.dst, output + first * out_item)}};
    if (bias != nullptr) args.emplace(DNNL_ARG_BIAS, Wrap(plan.bias, bias));
    Run(plan, std::move(args));
  });
  return true;
}

bool DnnlConvBackwardData(const ConvShape& s, const float* filter, const float* out_grad,
                          float* input_grad) {
  ChunkPlans p;
  if (!GetChunkPlans(Kind::kBackwardData, s, p)) return false;
  const PlanFilters filters = FiltersFor(p, filter);
  const int64_t in_item = s.in_h * s.in_w * s.in_c;
  const int64_t out_item = s.out_h * s.out_w * s.out_c;
  ForEachChunk(p, [&](int64_t, int64_t first, bool is_last, const Plan& plan) {
    Run(plan, {{DNNL_ARG_DIFF_DST, Wrap(plan.dst, out_grad + first * out_item)},
               {DNNL_ARG_WEIGHTS, Wrap(plan.filter, filters.ForPlan(is_last))},
               {DNNL_ARG_DIFF_SRC, Wrap(plan.src, input_grad + first * in_item)}});
  });
  return true;
}

bool DnnlConvBackwardWeights(const ConvShape& s, const float* input, const float* out_grad,
                             float* filter_grad) {
  ChunkPlans p;
  if (!GetChunkPlans(Kind::kBackwardWeights, s, p)) return false;
  const int64_t in_item = s.in_h * s.in_w * s.in_c;
  const int64_t out_item = s.out_h * s.out_w * s.out_c;
  const int64_t filter_size = s.k_h * s.k_w * s.in_c * s.out_c;
  // Each chunk's partial gradient in hwio (the calling thread's buffer 2);
  // a single chunk writes the result.
  float* partials = p.chunks.count > 1
                        ? ThreadBuffer(2, static_cast<size_t>(p.chunks.count * filter_size))
                        : nullptr;
  ForEachChunk(p, [&](int64_t i, int64_t first, bool, const Plan& plan) {
    float* hwio = partials != nullptr ? partials + i * filter_size : filter_grad;
    float* diff = hwio;
    if (plan.filter != plan.user_filter) {
      diff = ThreadBuffer(3, plan.filter.get_size() / sizeof(float));  // this chunk's thread's
    }
    Run(plan, {{DNNL_ARG_SRC, Wrap(plan.src, input + first * in_item)},
               {DNNL_ARG_DIFF_DST, Wrap(plan.dst, out_grad + first * out_item)},
               {DNNL_ARG_DIFF_WEIGHTS, Wrap(plan.filter, diff)}});
    if (diff != hwio) ReorderFilter(plan, diff, hwio);
  });
  if (p.chunks.count > 1) {
    // Chunk order, whichever thread finished first.
    std::copy(partials, partials + filter_size, filter_grad);
    for (int64_t i = 1; i < p.chunks.count; ++i) {
      const float* part = partials + i * filter_size;
      for (int64_t j = 0; j < filter_size; ++j) filter_grad[j] += part[j];
    }
  }
  return true;
}

}  // namespace eager::internal
