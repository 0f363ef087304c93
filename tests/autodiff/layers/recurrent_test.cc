// layers::SimpleRNN, LSTM and GRU (autodiff/layers/recurrent.h): variables
// as Keras lays them out and initializes them, the forward pass against a
// plain-loop reference in double written from Keras's cell equations, and
// the tape's gradients against central finite differences (float64).

#include "autodiff/layers/recurrent.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/gradient_tape.h"
#include "ops/binary_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "runtime/errors.h"

namespace eager {
namespace {

using layers::GRU;
using layers::LSTM;
using layers::Recurrent;
using layers::RecurrentConfig;
using layers::SimpleRNN;

std::vector<double> ToDouble(const Tensor& t) {
  if (t.dtype() == DType::kFloat64) return t.ToVector<double>();
  std::vector<double> out;
  for (float v : t.data<float>()) out.push_back(v);
  return out;
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

double Sig(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// Row-vector times matrix: v [n] @ m [n, cols] (row-major), columns
// [c0, c0 + width) of m.
std::vector<double> VecMat(const std::vector<double>& v, const std::vector<double>& m, int64_t cols,
                           int64_t c0, int64_t width) {
  std::vector<double> out(width, 0.0);
  for (size_t k = 0; k < v.size(); ++k) {
    for (int64_t j = 0; j < width; ++j) out[j] += v[k] * m[k * cols + c0 + j];
  }
  return out;
}

// The layer's output by Keras's cell equations, in double: kind "simple",
// "lstm", "gru" (reset_after from the config). Returns the output and the
// final states concatenated as [output..., h..., (c...)].
std::vector<double> Reference(const std::string& kind, Recurrent& layer, const Tensor& x) {
  const RecurrentConfig& cfg = layer.config();
  const int64_t batch = x.shape().dim(0), steps = x.shape().dim(1), feat = x.shape().dim(2);
  const int64_t u = layer.units(), w = layer.kernel().shape().dim(1);
  const std::vector<double> xs = ToDouble(x), k = ToDouble(layer.kernel().value()),
                            r = ToDouble(layer.recurrent_kernel().value());
  std::vector<double> b = layer.bias() ? ToDouble(layer.bias()->value()) : std::vector<double>();
  if (b.empty()) b.assign(kind == "gru" && cfg.reset_after ? 2 * w : w, 0.0);
  std::vector<double> seq(batch * steps * u), last_h(batch * u), last_c(batch * u);
  for (int64_t n = 0; n < batch; ++n) {
    std::vector<double> h(u, 0.0), c(u, 0.0);
    for (int64_t i = 0; i < steps; ++i) {
      const int64_t t = cfg.go_backwards ? steps - 1 - i : i;
      const std::vector<double> xt(xs.begin() + (n * steps + t) * feat,
                                   xs.begin() + (n * steps + t + 1) * feat);
      const std::vector<double> xk = VecMat(xt, k, w, 0, w);
      std::vector<double> nh(u);
      if (kind == "simple") {
        const std::vector<double> hr = VecMat(h, r, w, 0, w);
        for (int64_t j = 0; j < u; ++j) nh[j] = std::tanh(xk[j] + b[j] + hr[j]);
      } else if (kind == "lstm") {
        const std::vector<double> hr = VecMat(h, r, w, 0, w);
        std::vector<double> z(w);
        for (int64_t j = 0; j < w; ++j) z[j] = xk[j] + hr[j] + b[j];
        for (int64_t j = 0; j < u; ++j) {
          c[j] = Sig(z[u + j]) * c[j] + Sig(z[j]) * std::tanh(z[2 * u + j]);
          nh[j] = Sig(z[3 * u + j]) * std::tanh(c[j]);
        }
      } else {
        const bool after = cfg.reset_after;
        const std::vector<double> hr = VecMat(h, r, w, 0, after ? w : 2 * u);
        std::vector<double> zg(u), rg(u), rh(u);
        const double* rb = after ? &b[w] : nullptr;
        for (int64_t j = 0; j < u; ++j) {
          zg[j] = Sig(xk[j] + b[j] + hr[j] + (after ? rb[j] : 0));
          rg[j] = Sig(xk[u + j] + b[u + j] + hr[u + j] + (after ? rb[u + j] : 0));
        }
        if (!after) {
          std::vector<double> rhv(u);
          for (int64_t j = 0; j < u; ++j) rhv[j] = rg[j] * h[j];
          rh = VecMat(rhv, r, w, 2 * u, u);
        }
        for (int64_t j = 0; j < u; ++j) {
          const double inner = after ? rg[j] * (hr[2 * u + j] + rb[2 * u + j]) : rh[j];
          const double hh = std::tanh(xk[2 * u + j] + b[2 * u + j] + inner);
          nh[j] = zg[j] * h[j] + (1 - zg[j]) * hh;
        }
      }
      h = nh;
      for (int64_t j = 0; j < u; ++j) seq[(n * steps + i) * u + j] = h[j];
    }
    for (int64_t j = 0; j < u; ++j) {
      last_h[n * u + j] = h[j];
      last_c[n * u + j] = c[j];
    }
  }
  std::vector<double> out = cfg.return_sequences ? seq : last_h;
  out.insert(out.end(), last_h.begin(), last_h.end());
  if (kind == "lstm") out.insert(out.end(), last_c.begin(), last_c.end());
  return out;
}

std::unique_ptr<Recurrent> Make(const std::string& kind, int64_t units,
                                const RecurrentConfig& cfg) {
  if (kind == "simple") return std::make_unique<SimpleRNN>(units, cfg);
  if (kind == "lstm") return std::make_unique<LSTM>(units, cfg);
  return std::make_unique<GRU>(units, cfg);
}

// Random small weights (biases too), so every term of the equations counts.
void Randomize(Recurrent& layer, uint64_t seed) {
  std::vector<Variable*> vars = {&layer.kernel(), &layer.recurrent_kernel()};
  if (layer.bias()) vars.push_back(layer.bias());
  for (Variable* v : vars) {
    v->Assign(RandomNormal(v->shape(), seed++, 0.0, 0.5, v->dtype()));
  }
}

struct Case {
  std::string kind;
  RecurrentConfig cfg;
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const char* kind : {"simple", "lstm", "gru"}) {
    for (bool seq : {false, true}) {
      for (bool back : {false, true}) {
        RecurrentConfig cfg;
        cfg.return_sequences = seq;
        cfg.go_backwards = back;
        cases.push_back({kind, cfg});
        if (std::string(kind) == "gru") {
          cfg.reset_after = false;
          cases.push_back({kind, cfg});
        }
      }
    }
  }
  RecurrentConfig no_bias;
  no_bias.use_bias = false;
  for (const char* kind : {"simple", "lstm", "gru"}) cases.push_back({kind, no_bias});
  return cases;
}

std::string Describe(const Case& c) {
  return c.kind + (c.cfg.return_sequences ? " seq" : "") + (c.cfg.go_backwards ? " back" : "") +
         (c.cfg.reset_after ? "" : " reset_before") + (c.cfg.use_bias ? "" : " no_bias");
}

TEST(RecurrentTest, ForwardMatchesKerasEquations) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(Describe(c));
    auto layer = Make(c.kind, 3, c.cfg);
    const Tensor x = RandomNormal(Shape{2, 4, 5}, 7);
    (*layer)(x);  // builds
    Randomize(*layer, 11);
    auto result = layer->CallWithState(x);
    std::vector<double> got = ToDouble(result.output);
    EXPECT_EQ(result.output.shape(), (c.cfg.return_sequences ? Shape{2, 4, 3} : Shape{2, 3}));
    ASSERT_EQ(static_cast<int>(result.states.size()), c.kind == "lstm" ? 2 : 1);
    for (const Tensor& s : result.states) {
      const std::vector<double> sv = ToDouble(s);
      got.insert(got.end(), sv.begin(), sv.end());
    }
    ExpectNear(got, Reference(c.kind, *layer, x), 2e-6);
    EXPECT_EQ(ToDouble((*layer)(x)), ToDouble(result.output));
  }
}

TEST(RecurrentTest, VariablesHaveKerasNamesShapesAndEdges) {
  LSTM lstm(4, {.name = "enc"});
  GRU gru(4, {.name = "g2"});
  GRU gru_before(4, {.reset_after = false, .name = "g3"});
  SimpleRNN rnn(4, {.name = "r"});
  const Tensor x = Tensor::Zeros(Shape{1, 2, 3});
  lstm(x);
  gru(x);
  gru_before(x);
  rnn(x);
  EXPECT_EQ(lstm.kernel().name(), "enc/lstm_cell/kernel:0");
  EXPECT_EQ(lstm.recurrent_kernel().name(), "enc/lstm_cell/recurrent_kernel:0");
  EXPECT_EQ(lstm.bias()->name(), "enc/lstm_cell/bias:0");
  EXPECT_EQ(gru.kernel().name(), "g2/gru_cell/kernel:0");
  EXPECT_EQ(rnn.kernel().name(), "r/simple_rnn_cell/kernel:0");
  EXPECT_EQ(lstm.kernel().shape(), (Shape{3, 16}));
  EXPECT_EQ(lstm.recurrent_kernel().shape(), (Shape{4, 16}));
  EXPECT_EQ(lstm.bias()->shape(), (Shape{16}));
  EXPECT_EQ(gru.bias()->shape(), (Shape{2, 12}));
  EXPECT_EQ(gru_before.bias()->shape(), (Shape{12}));
  EXPECT_EQ(rnn.recurrent_kernel().shape(), (Shape{4, 4}));
  // The layer's one edge is "cell"; the cell holds the three variables.
  ASSERT_EQ(lstm.Children().size(), 1u);
  EXPECT_EQ(lstm.Children()[0].name, "cell");
  std::vector<std::string> edges;
  for (const auto& c : lstm.cell().Children()) edges.push_back(c.name);
  EXPECT_EQ(edges, (std::vector<std::string>{"kernel", "recurrent_kernel", "bias"}));
  EXPECT_EQ(lstm.TrainableVariables().size(), 3u);
  // Default names as Keras's.
  EXPECT_EQ(LSTM(2).name().rfind("lstm", 0), 0u);
  EXPECT_EQ(GRU(2).name().rfind("gru", 0), 0u);
  EXPECT_EQ(SimpleRNN(2).name().rfind("simple_rnn", 0), 0u);
}

TEST(RecurrentTest, InitializersAreKeras) {
  LSTM lstm(5, {.seed = 3});
  lstm(Tensor::Zeros(Shape{1, 1, 7}));
  // glorot-uniform over [7, 20]: |k| <= sqrt(6 / 27), and not all zero.
  const std::vector<double> k = ToDouble(lstm.kernel().value());
  double max_abs = 0;
  for (double v : k) max_abs = std::max(max_abs, std::abs(v));
  EXPECT_LE(max_abs, std::sqrt(6.0 / 27.0));
  EXPECT_GT(max_abs, 0.5 * std::sqrt(6.0 / 27.0));
  // Orthogonal [5, 20]: orthonormal rows, R R^T = I.
  const std::vector<double> r = ToDouble(lstm.recurrent_kernel().value());
  for (int a = 0; a < 5; ++a) {
    for (int b = 0; b < 5; ++b) {
      double dot = 0;
      for (int j = 0; j < 20; ++j) dot += r[a * 20 + j] * r[b * 20 + j];
      EXPECT_NEAR(dot, a == b ? 1.0 : 0.0, 1e-6) << a << "," << b;
    }
  }
  // unit_forget_bias: zeros, ones for the forget gate, zeros.
  std::vector<double> want(20, 0.0);
  for (int j = 5; j < 10; ++j) want[j] = 1.0;
  EXPECT_EQ(ToDouble(lstm.bias()->value()), want);
  LSTM plain(5, {.unit_forget_bias = false, .seed = 3});
  plain(Tensor::Zeros(Shape{1, 1, 7}));
  EXPECT_EQ(ToDouble(plain.bias()->value()), std::vector<double>(20, 0.0));
  // The same seed draws the same kernels.
  EXPECT_EQ(ToDouble(plain.kernel().value()), k);
  EXPECT_EQ(ToDouble(plain.recurrent_kernel().value()), r);
}

TEST(RecurrentTest, InitialStateIsUsed) {
  LSTM lstm(3);
  const Tensor x = RandomNormal(Shape{2, 3, 4}, 5);
  lstm(x);
  const Tensor h0 = RandomNormal(Shape{2, 3}, 6), c0 = RandomNormal(Shape{2, 3}, 8);
  // Two steps from the state after the first equal three from zeros.
  auto first = lstm.CallWithState(Slice(x, {0, 0, 0}, {-1, 1, -1}));
  auto rest = lstm.CallWithState(Slice(x, {0, 1, 0}, {-1, -1, -1}), first.states);
  ExpectNear(ToDouble(rest.output), ToDouble(lstm(x)), 1e-6);
  EXPECT_NE(ToDouble(lstm.CallWithState(x, {h0, c0}).output), ToDouble(lstm(x)));
  EXPECT_THROW(lstm.CallWithState(x, {h0}), InvalidArgumentError);
  EXPECT_THROW(lstm.CallWithState(x, {h0, Tensor::Zeros(Shape{2, 4})}), InvalidArgumentError);
}

TEST(RecurrentTest, BadInputsNameTheLayer) {
  GRU gru(3, {.name = "my_gru"});
  auto message = [&](const Tensor& x) -> std::string {
    try {
      gru(x);
    } catch (const InvalidArgumentError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message(Tensor::Zeros(Shape{2, 4})).find("GRU 'my_gru'"), std::string::npos);
  EXPECT_NE(message(Tensor::Zeros(Shape{2, 0, 4})).find("[2,0,4]"), std::string::npos);
  gru(Tensor::Zeros(Shape{2, 3, 4}));
  const std::string wrong = message(Tensor::Zeros(Shape{2, 3, 5}));
  EXPECT_NE(wrong.find("built for inputs [batch, time, 4] of float32, got [2,3,5]"),
            std::string::npos)
      << wrong;
  EXPECT_THROW(LSTM(0), InvalidArgumentError);
  LSTM unbuilt(2);
  EXPECT_THROW(unbuilt.kernel(), FailedPreconditionError);
}

// Central differences of sum(layer(x) * w) with respect to x and every
// variable, float64, against the tape's gradients.
TEST(RecurrentTest, GradientsMatchFiniteDifferences) {
  for (const Case& c : Cases()) {
    if (c.cfg.go_backwards && !c.cfg.return_sequences) continue;  // covered by seq+back
    SCOPED_TRACE(Describe(c));
    auto layer = Make(c.kind, 2, c.cfg);
    const Tensor x = RandomNormal(Shape{2, 3, 3}, 21, 0.0, 1.0, DType::kFloat64);
    (*layer)(x);
    Randomize(*layer, 31);
    const Tensor w = RandomNormal((*layer)(x).shape(), 99, 0.0, 1.0, DType::kFloat64);
    auto loss = [&](const Tensor& input) {
      return ToDouble(ReduceSum(Mul((*layer)(input), w)))[0];
    };
    GradientTape tape_x;
    tape_x.Watch(x);
    auto gx = tape_x.Gradient(ReduceSum(Mul((*layer)(x), w)), {x});
    GradientTape tape_v;
    const Tensor lv = ReduceSum(Mul((*layer)(x), w));
    std::vector<const Variable*> vars;
    for (Variable* v : layer->TrainableVariables()) vars.push_back(v);
    auto gv = tape_v.Gradient(lv, vars);
    const double h = 1e-6;
    ASSERT_TRUE(gx[0]);
    const std::vector<double> xs = ToDouble(x), got_x = ToDouble(*gx[0]);
    for (size_t i = 0; i < xs.size(); ++i) {
      std::vector<double> p = xs, m = xs;
      p[i] += h;
      m[i] -= h;
      const double fd = (loss(Tensor::FromVector<double>(p, x.shape())) -
                         loss(Tensor::FromVector<double>(m, x.shape()))) /
                        (2 * h);
      EXPECT_NEAR(got_x[i], fd, 1e-6 * (1 + std::abs(fd))) << "d/dx at " << i;
    }
    for (size_t v = 0; v < vars.size(); ++v) {
      ASSERT_TRUE(gv[v]) << vars[v]->name();
      Variable* var = layer->TrainableVariables()[v];
      const std::vector<double> base = ToDouble(var->value()), got = ToDouble(*gv[v]);
      for (size_t j = 0; j < base.size(); ++j) {
        std::vector<double> p = base, m = base;
        p[j] += h;
        m[j] -= h;
        var->Assign(Tensor::FromVector<double>(p, var->shape()));
        const double lp = loss(x);
        var->Assign(Tensor::FromVector<double>(m, var->shape()));
        const double lm = loss(x);
        var->Assign(Tensor::FromVector<double>(base, var->shape()));
        const double fd = (lp - lm) / (2 * h);
        EXPECT_NEAR(got[j], fd, 1e-6 * (1 + std::abs(fd))) << var->name() << " at " << j;
      }
    }
  }
}

}  // namespace
}  // namespace eager
