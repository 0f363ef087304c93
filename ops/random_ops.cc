#include "ops/random_ops.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ops/internal/graph_builder.h"
#include "ops/internal/memory_limit.h"
#include "ops/internal/philox.h"
#include "ops/op_def.h"
#include "ops/parallel.h"
#include "runtime/graph.h"
#include "runtime/half.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

// One node's generator in one Session (TF's GuardedPhiloxRandom).
struct GeneratorState final : NodeState {
  GeneratorState(uint64_t seed, uint64_t seed2) : philox(seed, seed2) {}
  internal::Philox4x32 philox;
};

// TF's kernel reserves this many 128-bit blocks per output element of a run
// (random_op.cc: ReserveRandomOutputs(size, 256)), so the next run starts
// that far on: its values are not the continuation of this run's.
constexpr uint64_t kBlocksPerElement = 256;

void CheckOutputDType(DType dtype, std::string_view where) {
  if (dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kHalf ||
      dtype == DType::kBFloat16) {
    return;
  }
  throw InvalidArgumentError(
      StrCat(where, ": dtype must be one of half, bfloat16, float, double; got ", dtype));
}

// The output shape a shape tensor holds, as TF's MakeShape checks it.
Shape OutputShape(const Tensor& shape) {
  if ((shape.dtype() != DType::kInt32 && shape.dtype() != DType::kInt64) || shape.rank() != 1) {
    throw InvalidArgumentError(StrCat("shape must be a vector of {int32,int64}, got a ",
                                      shape.dtype(), " tensor of shape ", shape.shape()));
  }
  std::vector<int64_t> dims;
  if (shape.dtype() == DType::kInt64) {
    dims = shape.ToVector<int64_t>();
  } else {
    for (int32_t d : shape.data<int32_t>()) dims.push_back(d);
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      throw InvalidArgumentError(
          StrCat("Dimension ", dims[i], " must be >= 0 (dimension ", i, " of the shape input)"));
    }
  }
  return Shape(dims);
}

// Values of T from one block: 4 (float32, and the 16-bit types from each
// word's low half) or 2 (float64, from word pairs).
template <typename T>
constexpr int64_t kGroup = std::is_same_v<T, double> ? 2 : 4;

template <typename T>
T FromBlock(const internal::Philox4x32::Block& block, size_t i) {
  if constexpr (std::is_same_v<T, float>) {
    return internal::UniformFloat(block[i]);
  } else if constexpr (std::is_same_v<T, double>) {
    return internal::UniformDouble(block[2 * i], block[2 * i + 1]);
  } else if constexpr (std::is_same_v<T, Half>) {  // 1.mantissa - 1: 10 bits, exact
    return Half(static_cast<float>(block[i] & 0x3ffu) * 0x1.0p-10f);
  } else {  // BFloat16: 7 bits
    return BFloat16(static_cast<float>(block[i] & 0x7fu) * 0x1.0p-7f);
  }
}

// Fills `out` (n values of T) from `philox` as TF's FillPhiloxRandom: group g
// of values comes from block g, so any split of the groups over threads
// gives the same tensor.
template <typename T>
void Fill(internal::Philox4x32 philox, T* out, int64_t n) {
  const int64_t groups = (n + kGroup<T> - 1) / kGroup<T>;
  internal::ParallelFor(groups, internal::kElementwiseGrain / kGroup<T>,
                        internal::kParallelElementwiseMin / kGroup<T>, [&](int64_t b, int64_t e) {
                          internal::Philox4x32 gen = philox;
                          gen.Skip(static_cast<uint64_t>(b));
                          for (int64_t g = b; g < e; ++g) {
                            const internal::Philox4x32::Block block = gen.Next();
                            const int64_t first = g * kGroup<T>;
                            for (int64_t i = 0; i < kGroup<T> && first + i < n; ++i) {
                              out[first + i] = FromBlock<T>(block, static_cast<size_t>(i));
                            }
                          }
                        });
}

// A new tensor of `shape` and float `dtype`, filled from `philox`.
Tensor UniformTensor(const internal::Philox4x32& philox, const Shape& shape, DType dtype) {
  const int64_t n = shape.num_elements();
  Tensor out = internal::NewTensor(shape, dtype);
  switch (dtype) {
    case DType::kFloat32:
      Fill(philox, internal::MutableData<float>(out), n);
      break;
    case DType::kFloat64:
      Fill(philox, internal::MutableData<double>(out), n);
      break;
    case DType::kHalf:
      Fill(philox, internal::MutableData<Half>(out), n);
      break;
    default:
      Fill(philox, internal::MutableData<BFloat16>(out), n);
  }
  return out;
}

// The generator for this run of a random node whose output has `shape`: the
// node's Session state (made from its seeds on the first run), then moved
// past what TF's kernel reserves for this run.
internal::Philox4x32 ThisRunsGenerator(const NodeContext& c, const Shape& shape) {
  std::unique_ptr<NodeState>& slot = *c.state;
  if (slot == nullptr) {
    auto seed = static_cast<uint64_t>(c.attrs.GetInt("seed"));
    auto seed2 = static_cast<uint64_t>(c.attrs.GetInt("seed2"));
    if (seed == 0 && seed2 == 0) {  // TF: both unset means random seeds
      std::random_device device;
      const auto draw64 = [&] { return (uint64_t{device()} << 32) | device(); };
      seed = draw64();
      seed2 = draw64();
    }
    slot = std::make_unique<GeneratorState>(seed, seed2);
  }
  internal::Philox4x32& generator = static_cast<GeneratorState&>(*slot).philox;
  const internal::Philox4x32 start = generator;
  generator.Skip(static_cast<uint64_t>(shape.num_elements()) * kBlocksPerElement);
  return start;
}

// The node's output shape and dtype, checked (its input is the shape).
std::pair<Shape, DType> RandomOutputSpec(const NodeContext& c) {
  EAGER_CHECK(c.inputs.size() == 1, "node '", c.node.name, "' (", c.node.op,
              ") needs 1 input (shape), has ", c.inputs.size());
  const DType dtype = c.attrs.GetType("dtype");
  CheckOutputDType(dtype, StrCat("node '", c.node.name, "' (", c.node.op, ")"));
  const Shape shape = OutputShape(c.inputs[0]);
  internal::CheckTensorBytes(c.node.op, shape, dtype);
  return {shape, dtype};
}

NodeOutputs RunRandomUniform(const NodeContext& c) {
  const auto [shape, dtype] = RandomOutputSpec(c);
  return {{UniformTensor(ThisRunsGenerator(c, shape), shape, dtype)}};
}

// ---- RandomStandardNormal, TruncatedNormal ----------------------------------------------

// TF's BoxMullerFloat: two normals from two words. 2 * pi * u is computed in
// double and rounded to float, as TF's expression (M_PI is a double) is;
// log, sqrt and sincos of float.
std::pair<float, float> BoxMullerFloat(uint32_t x0, uint32_t x1) {
  constexpr float kEpsilon = 1.0e-7f;
  const float u1 = std::max(internal::UniformFloat(x0), kEpsilon);
  const auto v1 = static_cast<float>(2.0f * M_PI * internal::UniformFloat(x1));
  const float u2 = std::sqrt(-2.0f * std::log(u1));
  float s = 0, co = 0;
  sincosf(v1, &s, &co);
  return {s * u2, co * u2};
}

// TF's BoxMullerDouble: two normals from two 52-bit uniforms (four words).
std::pair<double, double> BoxMullerDouble(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3) {
  constexpr double kEpsilon = 1.0e-7;
  const double u1 = std::max(internal::UniformDouble(x0, x1), kEpsilon);
  const double v1 = 2 * M_PI * internal::UniformDouble(x2, x3);
  const double u2 = std::sqrt(-2.0 * std::log(u1));
  double s = 0, co = 0;
  sincos(v1, &s, &co);
  return {s * u2, co * u2};
}

// One block's normals: 4 of float32, half, bfloat16 (the 16-bit types from
// float pairs, as TF), 2 of float64 (TF's NormalDistribution).
template <typename T>
T FromNormal(double v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return static_cast<T>(v);
  } else {
    return T(static_cast<float>(v));
  }
}

template <typename T>
void FillNormal(internal::Philox4x32 philox, T* out, int64_t n) {
  const int64_t groups = (n + kGroup<T> - 1) / kGroup<T>;
  for (int64_t g = 0; g < groups; ++g) {
    const internal::Philox4x32::Block b = philox.Next();
    double v[4];
    if constexpr (std::is_same_v<T, double>) {
      std::tie(v[0], v[1]) = BoxMullerDouble(b[0], b[1], b[2], b[3]);
    } else {
      const auto [a0, a1] = BoxMullerFloat(b[0], b[1]);
      const auto [a2, a3] = BoxMullerFloat(b[2], b[3]);
      v[0] = a0, v[1] = a1, v[2] = a2, v[3] = a3;
    }
    for (int64_t i = 0; i < kGroup<T> && g * kGroup<T> + i < n; ++i) {
      out[g * kGroup<T> + i] = FromNormal<T>(v[i]);
    }
  }
}

// TF's SingleSampleAdapter: the words of the generator's blocks one by one.
class SingleSamples {
 public:
  explicit SingleSamples(internal::Philox4x32 philox) : philox_(philox) {}
  uint32_t operator()() {
    if (used_ == 4) {
      block_ = philox_.Next();
      used_ = 0;
    }
    return block_[used_++];
  }

 private:
  internal::Philox4x32 philox_;
  internal::Philox4x32::Block block_{};
  size_t used_ = 4;
};

// TF's TruncatedNormalDistribution with its variable-sample fill: group g
// (kGroup values) draws from the generator skipped g * kGroup * 256 / 4
// blocks on, normals in pairs, keeping those of magnitude below 2 until the
// group is full. A normal is kept with probability 0.95, so a group needs
// about 4.2 pairs of its 256 reserved blocks' words.
template <typename T>
void FillTruncatedNormal(const internal::Philox4x32& philox, T* out, int64_t n) {
  constexpr uint64_t kSkipPerGroup = kGroup<T> * kBlocksPerElement / 4;
  const int64_t groups = (n + kGroup<T> - 1) / kGroup<T>;
  for (int64_t g = 0; g < groups; ++g) {
    internal::Philox4x32 gen = philox;
    gen.Skip(static_cast<uint64_t>(g) * kSkipPerGroup);
    SingleSamples samples(gen);
    int64_t index = 0;
    while (index < kGroup<T>) {
      double pair[2];
      if constexpr (std::is_same_v<T, double>) {
        const uint32_t x0 = samples(), x1 = samples(), x2 = samples(), x3 = samples();
        std::tie(pair[0], pair[1]) = BoxMullerDouble(x0, x1, x2, x3);
      } else {
        const uint32_t x0 = samples(), x1 = samples();
        std::tie(pair[0], pair[1]) = BoxMullerFloat(x0, x1);
      }
      for (const double v : pair) {
        if (std::abs(v) >= 2.0 || index == kGroup<T>) continue;
        if (g * kGroup<T> + index < n) out[g * kGroup<T> + index] = FromNormal<T>(v);
        ++index;
      }
    }
  }
}

template <bool kTruncated>
NodeOutputs RunNormal(const NodeContext& c) {
  const auto [shape, dtype] = RandomOutputSpec(c);
  const internal::Philox4x32 start = ThisRunsGenerator(c, shape);
  const int64_t n = shape.num_elements();
  Tensor out = internal::NewTensor(shape, dtype);
  const auto fill = [&](auto* data) {
    if constexpr (kTruncated) {
      FillTruncatedNormal(start, data, n);
    } else {
      FillNormal(start, data, n);
    }
  };
  switch (dtype) {
    case DType::kFloat32:
      fill(internal::MutableData<float>(out));
      break;
    case DType::kFloat64:
      fill(internal::MutableData<double>(out));
      break;
    case DType::kHalf:
      fill(internal::MutableData<Half>(out));
      break;
    default:
      fill(internal::MutableData<BFloat16>(out));
  }
  return {{std::move(out)}};
}

}  // namespace

const OpDef kRandomUniformOp = {.type = "RandomUniform", .num_inputs = 1, .run = RunRandomUniform};
const OpDef kRandomStandardNormalOp = {
    .type = "RandomStandardNormal", .num_inputs = 1, .run = RunNormal<false>};
const OpDef kTruncatedNormalOp = {
    .type = "TruncatedNormal", .num_inputs = 1, .run = RunNormal<true>};

Tensor StatelessRandomUniform(const Shape& shape, int64_t seed0, int64_t seed1, DType dtype) {
  CheckOutputDType(dtype, "StatelessRandomUniform");
  EAGER_CHECK(shape.IsFullyDefined(), "StatelessRandomUniform: the shape must be known, got ",
              shape);
  internal::CheckTensorBytes("StatelessRandomUniform", shape, dtype);
  // TF's GenerateKey: encrypt the seeds (as two 64-bit words) under a fixed
  // key; the block's first half keys the generator, its second half starts
  // the counter's high words.
  const auto s0 = static_cast<uint64_t>(seed0), s1 = static_cast<uint64_t>(seed1);
  internal::Philox4x32 scramble({static_cast<uint32_t>(s0), static_cast<uint32_t>(s0 >> 32),
                                 static_cast<uint32_t>(s1), static_cast<uint32_t>(s1 >> 32)},
                                {0x3ec8f720u, 0x02461e29u});
  const internal::Philox4x32::Block mix = scramble.Next();
  const internal::Philox4x32 start({0, 0, mix[2], mix[3]}, {mix[0], mix[1]});
  return UniformTensor(start, shape, dtype);
}

Tensor RandomUniformNode(const Tensor& shape, DType dtype, int64_t seed, int64_t seed2) {
  Graph* graph = Graph::Current();
  if (graph == nullptr) {
    throw FailedPreconditionError(
        "RandomUniformNode is graph-only: create it inside Graph::AsDefault (eagerly, use "
        "RandomGenerator)");
  }
  CheckOutputDType(dtype, "RandomUniformNode");
  Shape static_shape = Shape::UnknownRank();
  if (!shape.is_symbolic()) {
    static_shape = OutputShape(shape);
  } else if ((shape.dtype() != DType::kInt32 && shape.dtype() != DType::kInt64) ||
             (!shape.shape().unknown_rank() && shape.rank() != 1)) {
    throw InvalidArgumentError(
        StrCat("RandomUniformNode: shape must be a vector of {int32,int64}, got a ", shape.dtype(),
               " tensor of shape ", shape.shape()));
  } else if (!shape.shape().unknown_rank() && shape.shape().dim(0) != Shape::kUnknownDim) {
    static_shape = Shape::Partial(
        std::vector<int64_t>(static_cast<size_t>(shape.shape().dim(0)), Shape::kUnknownDim));
  }
  const std::string input = internal::GraphInput(*graph, shape, "shape");
  Node node{.name = graph->UniqueName("RandomUniform"), .op = "RandomUniform"};
  node.inputs = {input};
  node.attrs = {{"seed", seed}, {"seed2", seed2}, {"dtype", dtype}, {"T", shape.dtype()}};
  node.output_specs = {{static_shape, dtype}};
  return graph->Output(graph->AddNode(std::move(node)));
}

}  // namespace eager
