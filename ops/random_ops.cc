#include "ops/random_ops.h"

#include <memory>
#include <random>
#include <type_traits>
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

NodeOutputs RunRandomUniform(const NodeContext& c) {
  EAGER_CHECK(c.inputs.size() == 1, "node '", c.node.name, "' (", c.node.op,
              ") needs 1 input (shape), has ", c.inputs.size());
  const DType dtype = c.attrs.GetType("dtype");
  CheckOutputDType(dtype, "RandomUniform");
  const Shape shape = OutputShape(c.inputs[0]);
  internal::CheckTensorBytes("RandomUniform", shape, dtype);
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
  return {{UniformTensor(start, shape, dtype)}};
}

}  // namespace

const OpDef kRandomUniformOp = {.type = "RandomUniform", .num_inputs = 1, .run = RunRandomUniform};

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
