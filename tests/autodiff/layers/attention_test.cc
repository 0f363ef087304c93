// layers::MultiHeadAttention (autodiff/layers/attention.h): variables as
// Keras lays them out, the forward pass against a plain-loop reference of
// Keras's einsums in double, and gradients against central finite
// differences (float64).

#include "autodiff/layers/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "autodiff/gradient_tape.h"
#include "ops/binary_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "runtime/errors.h"

namespace eager {
namespace {

using layers::MultiHeadAttention;

std::vector<double> ToDouble(const Tensor& t) {
  if (t.dtype() == DType::kFloat64) return t.ToVector<double>();
  std::vector<double> out;
  for (float v : t.data<float>()) out.push_back(v);
  return out;
}

// x [B, T, D] through kernel [D, N, H] and bias [N, H]: [B, T, N, H] flat.
std::vector<double> Project(const std::vector<double>& x, int64_t B, int64_t T, int64_t D,
                            MultiHeadAttention::Projection& p) {
  const std::vector<double> k = ToDouble(p.kernel().value());
  const int64_t nh = static_cast<int64_t>(k.size()) / D;
  const std::vector<double> b = p.bias() ? ToDouble(p.bias()->value()) : std::vector<double>(nh);
  std::vector<double> out(B * T * nh);
  for (int64_t r = 0; r < B * T; ++r) {
    for (int64_t j = 0; j < nh; ++j) {
      double s = b[j];
      for (int64_t d = 0; d < D; ++d) s += x[r * D + d] * k[d * nh + j];
      out[r * nh + j] = s;
    }
  }
  return out;
}

// Keras's _compute_attention and output projection, in double.
std::vector<double> Reference(MultiHeadAttention& mha, const Tensor& query, const Tensor& value) {
  const int64_t B = query.shape().dim(0), T = query.shape().dim(1), D = query.shape().dim(2);
  const int64_t S = value.shape().dim(1), Dv = value.shape().dim(2);
  const int64_t N = mha.num_heads(), H = mha.key_dim(), Hv = mha.value_dim();
  const std::vector<double> q = Project(ToDouble(query), B, T, D, mha.query_dense());
  const std::vector<double> k = Project(ToDouble(value), B, S, Dv, mha.key_dense());
  const std::vector<double> v = Project(ToDouble(value), B, S, Dv, mha.value_dense());
  const std::vector<double> ok = ToDouble(mha.output_dense().kernel().value());
  const int64_t E = static_cast<int64_t>(ok.size()) / (N * Hv);
  const std::vector<double> ob = ToDouble(mha.output_dense().bias()->value());
  std::vector<double> out(B * T * E);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < T; ++t) {
      std::vector<double> att(N * Hv, 0.0);
      for (int64_t n = 0; n < N; ++n) {
        std::vector<double> s(S);
        double mx = -1e300, sum = 0;
        for (int64_t j = 0; j < S; ++j) {
          double dot = 0;
          for (int64_t h = 0; h < H; ++h) {
            dot += q[((b * T + t) * N + n) * H + h] * k[((b * S + j) * N + n) * H + h];
          }
          s[j] = dot / std::sqrt(static_cast<double>(H));
          mx = std::max(mx, s[j]);
        }
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (int64_t j = 0; j < S; ++j) {
          for (int64_t h = 0; h < Hv; ++h) {
            att[n * Hv + h] += s[j] / sum * v[((b * S + j) * N + n) * Hv + h];
          }
        }
      }
      for (int64_t e = 0; e < E; ++e) {
        double acc = ob[e];
        for (int64_t j = 0; j < N * Hv; ++j) acc += att[j] * ok[j * E + e];
        out[(b * T + t) * E + e] = acc;
      }
    }
  }
  return out;
}

void Randomize(MultiHeadAttention& mha, uint64_t seed) {
  for (Variable* v : mha.TrainableVariables()) {
    v->Assign(RandomNormal(v->shape(), seed++, 0.0, 0.5, v->dtype()));
  }
}

TEST(MultiHeadAttentionTest, ForwardMatchesKerasEinsums) {
  MultiHeadAttention mha(2, 3, {.value_dim = 4, .output_dim = 6});
  const Tensor q = RandomNormal(Shape{2, 3, 5}, 1), v = RandomNormal(Shape{2, 4, 7}, 2);
  mha.Attend(q, v);
  Randomize(mha, 10);
  auto [out, scores] = mha.AttendWithScores(q, v);
  EXPECT_EQ(out.shape(), (Shape{2, 3, 6}));
  EXPECT_EQ(scores.shape(), (Shape{2, 2, 3, 4}));
  const std::vector<double> got = ToDouble(out), want = Reference(mha, q, v);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 2e-5) << i;
  // Each row of scores sums to 1.
  const std::vector<double> s = ToDouble(scores);
  for (size_t r = 0; r < s.size() / 4; ++r) {
    EXPECT_NEAR(s[r * 4] + s[r * 4 + 1] + s[r * 4 + 2] + s[r * 4 + 3], 1.0, 1e-6);
  }
  // Self-attention is Attend(x, x).
  MultiHeadAttention self(2, 3);
  EXPECT_EQ(ToDouble(self(q)), ToDouble(self.Attend(q, q)));
}

TEST(MultiHeadAttentionTest, VariablesHaveKerasNamesShapesAndEdges) {
  MultiHeadAttention mha(2, 3, {.name = "att"});
  const Tensor x = Tensor::Zeros(Shape{1, 4, 5});
  mha(x);
  EXPECT_EQ(mha.query_dense().kernel().name(), "att/query/kernel:0");
  EXPECT_EQ(mha.output_dense().bias()->name(), "att/attention_output/bias:0");
  EXPECT_EQ(mha.key_dense().kernel().shape(), (Shape{5, 2, 3}));
  EXPECT_EQ(mha.value_dense().bias()->shape(), (Shape{2, 3}));
  EXPECT_EQ(mha.output_dense().kernel().shape(), (Shape{2, 3, 5}));
  EXPECT_EQ(mha.output_dense().bias()->shape(), (Shape{5}));
  std::vector<std::string> edges;
  for (const auto& c : mha.Children()) edges.push_back(c.name);
  EXPECT_EQ(edges, (std::vector<std::string>{"_query_dense", "_key_dense", "_value_dense",
                                             "_output_dense"}));
  auto kernel_edge = [&] { return mha.query_dense().Children()[0].name; };
  EXPECT_EQ(kernel_edge(), "kernel");
  SetKerasLayout(mha, KerasLayout::kKeras3);
  EXPECT_EQ(kernel_edge(), "_kernel");
  // glorot-uniform with Keras's fans for [5, 2, 3]: fan_in 10, fan_out 15.
  double max_abs = 0;
  for (double v : ToDouble(mha.query_dense().kernel().value()))
    max_abs = std::max(max_abs, std::abs(v));
  EXPECT_LE(max_abs, std::sqrt(6.0 / 25.0));
  EXPECT_GT(max_abs, 0.5 * std::sqrt(6.0 / 25.0));
  EXPECT_EQ(mha.TrainableVariables().size(), 8u);
}

TEST(MultiHeadAttentionTest, BadInputsNameTheLayer) {
  MultiHeadAttention mha(2, 3, {.name = "att2"});
  try {
    mha.Attend(Tensor::Zeros(Shape{2, 3, 5}), Tensor::Zeros(Shape{3, 4, 5}));
    FAIL() << "no error for batch 2 against 3";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("MultiHeadAttention 'att2'"), std::string::npos);
  }
  EXPECT_THROW(mha(Tensor::Zeros(Shape{2, 5})), InvalidArgumentError);
  mha(Tensor::Zeros(Shape{2, 3, 5}));
  EXPECT_THROW(mha(Tensor::Zeros(Shape{2, 3, 6})), InvalidArgumentError);
  EXPECT_THROW(MultiHeadAttention(0, 3), InvalidArgumentError);
}

TEST(MultiHeadAttentionTest, GradientsMatchFiniteDifferences) {
  MultiHeadAttention mha(2, 2, {.value_dim = 3});
  const Tensor q = RandomNormal(Shape{2, 3, 3}, 5, 0.0, 1.0, DType::kFloat64);
  const Tensor v = RandomNormal(Shape{2, 2, 4}, 6, 0.0, 1.0, DType::kFloat64);
  mha.Attend(q, v);
  Randomize(mha, 20);
  const Tensor w = RandomNormal(Shape{2, 3, 3}, 7, 0.0, 1.0, DType::kFloat64);
  auto loss = [&](const Tensor& qq, const Tensor& vv) {
    return ToDouble(ReduceSum(Mul(mha.Attend(qq, vv), w)))[0];
  };
  GradientTape tape_in;
  tape_in.Watch(q);
  tape_in.Watch(v);
  auto gin = tape_in.Gradient(ReduceSum(Mul(mha.Attend(q, v), w)), {q, v});
  GradientTape tape_v;
  const Tensor lv = ReduceSum(Mul(mha.Attend(q, v), w));
  std::vector<const Variable*> vars;
  for (Variable* var : mha.TrainableVariables()) vars.push_back(var);
  auto gv = tape_v.Gradient(lv, vars);
  const double h = 1e-6;
  for (int which = 0; which < 2; ++which) {
    ASSERT_TRUE(gin[which]);
    const Tensor& x = which == 0 ? q : v;
    const std::vector<double> xs = ToDouble(x), got = ToDouble(*gin[which]);
    for (size_t i = 0; i < xs.size(); ++i) {
      std::vector<double> p = xs, m = xs;
      p[i] += h;
      m[i] -= h;
      const Tensor tp = Tensor::FromVector<double>(p, x.shape());
      const Tensor tm = Tensor::FromVector<double>(m, x.shape());
      const double fd =
          ((which == 0 ? loss(tp, v) : loss(q, tp)) - (which == 0 ? loss(tm, v) : loss(q, tm))) /
          (2 * h);
      EXPECT_NEAR(got[i], fd, 1e-6 * (1 + std::abs(fd))) << (which ? "value" : "query") << i;
    }
  }
  for (size_t k = 0; k < vars.size(); ++k) {
    ASSERT_TRUE(gv[k]) << vars[k]->name();
    Variable* var = mha.TrainableVariables()[k];
    const std::vector<double> base = ToDouble(var->value()), got = ToDouble(*gv[k]);
    for (size_t j = 0; j < base.size(); ++j) {
      std::vector<double> p = base, m = base;
      p[j] += h;
      m[j] -= h;
      var->Assign(Tensor::FromVector<double>(p, var->shape()));
      const double lp = loss(q, v);
      var->Assign(Tensor::FromVector<double>(m, var->shape()));
      const double lm = loss(q, v);
      var->Assign(Tensor::FromVector<double>(base, var->shape()));
      EXPECT_NEAR(got[j], (lp - lm) / (2 * h), 1e-6 * (1 + std::abs((lp - lm) / (2 * h))))
          << var->name() << " at " << j;
    }
  }
}

}  // namespace
}  // namespace eager
