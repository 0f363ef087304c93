// RandomStandardNormal and TruncatedNormal in a Session: TF 2.21's numbers
// for seeded nodes (printed by TF, not by eager), the distributions' shape
// over many draws, the per-run sequence and bad inputs.
// tests/tf_graphs/layer_ops_test.py compares more dtypes and shapes with TF.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "ops/session.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

// Adds node "r" to `g`: `op` of `dtype` on the shape `shape`.
void NormalGraph(Graph& g, const std::string& op, const Tensor& shape, DType dtype, int64_t seed,
                 int64_t seed2) {
  Node c{.name = "shape", .op = "Const"};
  c.attrs = Attrs().Set("dtype", shape.dtype()).Set("value", shape);
  g.AddNode(std::move(c));
  Node r{.name = "r", .op = op, .inputs = {"shape"}};
  r.attrs =
      Attrs().Set("dtype", dtype).Set("T", shape.dtype()).Set("seed", seed).Set("seed2", seed2);
  g.AddNode(std::move(r));
}

std::vector<uint32_t> Bits(const Tensor& t) {
  std::vector<uint32_t> out;
  for (float v : t.data<float>()) out.push_back(std::bit_cast<uint32_t>(v));
  return out;
}

TEST(NormalRandomTest, GivesTensorFlowsNumbersForSeededNodes) {
  Graph n;
  NormalGraph(n, "RandomStandardNormal", Tensor::Vector<int32_t>({4}), DType::kFloat32, 87654321,
              5);
  Session sess(n);
  EXPECT_EQ(Bits(sess.Run("r:0")),
            (std::vector<uint32_t>{0xbf96cb6b, 0xbf35beb8, 0xbfdfc3a4, 0xbefda16f}));
  // The next run starts past what TF reserves for the first.
  EXPECT_EQ(Bits(sess.Run("r:0")),
            (std::vector<uint32_t>{0x3c7c6475, 0xbf54f066, 0xbfd808f1, 0x3ed49028}));

  Graph t;
  NormalGraph(t, "TruncatedNormal", Tensor::Vector<int32_t>({6}), DType::kFloat32, 1234, 8);
  Session tsess(t);
  EXPECT_EQ(Bits(tsess.Run("r:0")), (std::vector<uint32_t>{0xbec95d8f, 0xbeece040, 0xbf36c98b,
                                                           0xbff46187, 0xbf7fac72, 0xbf31ee9b}));
  Graph d;
  NormalGraph(d, "TruncatedNormal", Tensor::Vector<int64_t>({3}), DType::kFloat64, 1234, 8);
  Session dsess(d);
  EXPECT_EQ(dsess.Run("r:0").ToVector<double>(),
            (std::vector<double>{-0.2709174687528879, -0.5696312557268928, -0.7393935188156648}));
}

// Mean 0 and variance 1 (standard), or the variance of a normal cut at
// +-2 standard deviations, 0.7737, with every value inside the cut.
TEST(NormalRandomTest, DistributionsOverManyDraws) {
  for (const std::string op : {"RandomStandardNormal", "TruncatedNormal"}) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      Graph g;
      NormalGraph(g, op, Tensor::Vector<int32_t>({20001}), dtype, 7, 11);
      Session sess(g);
      const Tensor r = sess.Run("r:0");
      std::vector<double> v;
      if (dtype == DType::kFloat32) {
        for (float x : r.data<float>()) v.push_back(x);
      } else {
        v = r.ToVector<double>();
      }
      double sum = 0, sq = 0, largest = 0;
      for (double x : v) {
        sum += x;
        sq += x * x;
        largest = std::max(largest, std::abs(x));
      }
      const double mean = sum / static_cast<double>(v.size());
      const double var = sq / static_cast<double>(v.size()) - mean * mean;
      SCOPED_TRACE(op + " " + std::string(DTypeName(dtype)));
      EXPECT_NEAR(mean, 0.0, 0.03);
      if (op == "TruncatedNormal") {
        EXPECT_LT(largest, 2.0);
        EXPECT_NEAR(var, 0.7737, 0.03);
      } else {
        EXPECT_GT(largest, 3.0);
        EXPECT_NEAR(var, 1.0, 0.04);
      }
    }
  }
}

TEST(NormalRandomTest, BadShapesAndDTypesAreRefused) {
  for (const std::string op : {"RandomStandardNormal", "TruncatedNormal"}) {
    {
      Graph g;
      NormalGraph(g, op, Tensor::Vector<int32_t>({2, -3}), DType::kFloat32, 1, 2);
      Session sess(g);
      EXPECT_THROW(sess.Run("r:0"), InvalidArgumentError);
    }
    {
      // 2^62 elements: refused before any allocation.
      Graph g;
      NormalGraph(g, op, Tensor::Vector<int64_t>({int64_t{1} << 31, int64_t{1} << 31}),
                  DType::kFloat32, 1, 2);
      Session sess(g);
      EXPECT_ANY_THROW(sess.Run("r:0"));
    }
    {
      Graph g;
      NormalGraph(g, op, Tensor::Vector<int32_t>({2}), DType::kInt32, 1, 2);
      try {
        Session sess(g);
        sess.Run("r:0");
        FAIL() << "an int32 " << op << " ran";
      } catch (const InvalidArgumentError& e) {
        EXPECT_THAT(e.what(), HasSubstr("'r'"));
      }
    }
  }
}

}  // namespace
}  // namespace eager
