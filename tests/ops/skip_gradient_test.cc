// OpCall::skip_gradient: a gradient function computes only the input
// gradients the tape asks for, and those it does compute are unchanged.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "ops/binary_ops.h"
#include "ops/execute.h"
#include "ops/matmul.h"
#include "ops/random_generator.h"
#include "ops/recorder.h"

namespace eager {
namespace {

// Counts the ops run while it is registered, recording nothing.
class OpCounter : public OpRecorder {
 public:
  OpCounter() : scope_(this) {}
  bool ShouldRecord(const OpDef& op, std::span<const Tensor>) override {
    types.emplace_back(op.type);
    return false;
  }
  void Record(const OpCall&) override {}
  int Count(std::string_view type) const {
    return static_cast<int>(std::count(types.begin(), types.end(), type));
  }
  std::vector<std::string> types;

 private:
  ScopedRecording scope_;
};

struct SkipCase {
  std::string name;
  const OpDef* op;
  std::vector<Tensor> inputs;
  Attrs attrs;
};

Tensor Uniform(const Shape& shape, uint64_t seed) {
  return RandomUniform(shape, seed, 0.5, 2.0, DType::kFloat32);
}

std::vector<SkipCase> Cases() {
  auto mm = [](bool ta, bool tb) { return Attrs{{"transpose_a", ta}, {"transpose_b", tb}}; };
  const Shape m{3, 4};
  std::vector<SkipCase> c;
  c.push_back({"MatMul", &kMatMulOp, {Uniform({3, 4}, 1), Uniform({4, 5}, 2)}, mm(false, false)});
  c.push_back({"MatMulTB", &kMatMulOp, {Uniform({3, 4}, 3), Uniform({5, 4}, 4)}, mm(false, true)});
  c.push_back({"MatMulTA", &kMatMulOp, {Uniform({4, 3}, 5), Uniform({4, 5}, 6)}, mm(true, false)});
  c.push_back({"MatMulTATB", &kMatMulOp, {Uniform({4, 3}, 7), Uniform({5, 4}, 8)}, mm(true, true)});
  c.push_back({"AddBias", &kAddOp, {Uniform(m, 9), Uniform({4}, 10)}, {}});
  c.push_back({"SubBias", &kSubOp, {Uniform(m, 11), Uniform({4}, 12)}, {}});
  c.push_back({"MulBroadcast", &kMulOp, {Uniform({4}, 13), Uniform(m, 14)}, {}});
  c.push_back({"DivBroadcast", &kDivOp, {Uniform(m, 15), Uniform({1, 4}, 16)}, {}});
  c.push_back({"Pow", &kPowOp, {Uniform(m, 17), Uniform(m, 18)}, {}});
  c.push_back({"Maximum", &kMaximumOp, {Uniform(m, 19), Uniform({4}, 20)}, {}});
  c.push_back({"Minimum", &kMinimumOp, {Uniform(m, 21), Uniform({4}, 22)}, {}});
  return c;
}

class SkipGradientTest : public ::testing::TestWithParam<SkipCase> {};

TEST_P(SkipGradientTest, SkippedInputIsNulloptAndTheOtherIsUnchanged) {
  const SkipCase& c = GetParam();
  const Tensor output = Execute(*c.op, c.inputs, c.attrs);
  const Tensor grad = RandomUniform(output.shape(), 99, -1.0, 1.0, DType::kFloat32);
  const OpCall full{c.op, c.inputs, output, c.attrs};
  const std::vector<std::optional<Tensor>> all = c.op->gradient(full, grad);
  ASSERT_EQ(all.size(), 2u);
  ASSERT_TRUE(all[0].has_value() && all[1].has_value());

  for (int skipped = 0; skipped < 2; ++skipped) {
    SCOPED_TRACE("skipping input " + std::to_string(skipped));
    const int kept = 1 - skipped;
    OpCall call = full;
    call.skip_gradient = uint64_t{1} << skipped;
    const std::vector<std::optional<Tensor>> some = c.op->gradient(call, grad);
    ASSERT_EQ(some.size(), 2u);
    EXPECT_FALSE(some[skipped].has_value());
    ASSERT_TRUE(some[kept].has_value());
    // Bit for bit: the kept gradient is computed the same way.
    EXPECT_EQ(some[kept]->ToVector<float>(), all[kept]->ToVector<float>());
  }
}

INSTANTIATE_TEST_SUITE_P(TwoInputOps, SkipGradientTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

TEST(SkipGradientTest, MatMulRunsOneProductPerWantedGradient) {
  const Tensor a = Uniform({3, 4}, 1);
  const Tensor b = Uniform({4, 5}, 2);
  const Attrs attrs{{"transpose_a", false}, {"transpose_b", false}};
  const Tensor out = Execute(kMatMulOp, {a, b}, attrs);
  const Tensor grad = Uniform({3, 5}, 3);
  for (uint64_t skip : {0u, 1u, 2u, 3u}) {
    OpCall call{&kMatMulOp, {a, b}, out, attrs};
    call.skip_gradient = skip;
    OpCounter counter;
    (void)kMatMulOp.gradient(call, grad);
    EXPECT_EQ(counter.Count("MatMul"), 2 - std::popcount(skip)) << "skip mask " << skip;
  }
}

TEST(SkipGradientTest, BiasAddSkipsTheBatchReductionForTheActivations) {
  const Tensor x = Uniform({8, 4}, 1);
  const Tensor bias = Uniform({4}, 2);
  const Tensor out = Add(x, bias);
  OpCall call{&kAddOp, {x, bias}, out, {}};
  call.skip_gradient = 2;  // the bias is constant: only the activations' gradient
  OpCounter counter;
  std::vector<std::optional<Tensor>> grads = kAddOp.gradient(call, Uniform({8, 4}, 3));
  EXPECT_TRUE(grads[0].has_value());
  EXPECT_FALSE(grads[1].has_value());
  EXPECT_TRUE(counter.types.empty())
      << "ran " << counter.types.size() << " ops, first " << counter.types.front();
}

TEST(SkipGradientTest, NeedsGradientReadsTheMask) {
  OpCall call;
  EXPECT_TRUE(call.NeedsGradient(0));
  call.skip_gradient = 0b101;
  EXPECT_FALSE(call.NeedsGradient(0));
  EXPECT_TRUE(call.NeedsGradient(1));
  EXPECT_FALSE(call.NeedsGradient(2));
  EXPECT_TRUE(call.NeedsGradient(64));  // past the mask: always wanted
}

}  // namespace
}  // namespace eager
