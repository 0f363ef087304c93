// The transcendental kernels (Exp, Log, Tanh, Sigmoid, Elu, Selu, Softplus,
// Erf: also the two halves of GELU, exact and tanh-approximated) against
// long double references from <cmath>, in units in the last place of the
// reference's type, over dense sweeps of each op's useful range. Most run
// on Eigen's vectorized packet math (polynomial or rational fits, not the C
// library): these bounds say how far from correct rounding that is, and
// catch a kernel that falls back to, or drifts from, what it was.

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "ops/activation_ops.h"
#include "ops/unary_ops.h"
#include "runtime/tensor.h"

namespace eager {
namespace {

using Ref = std::function<long double(long double)>;

constexpr long double kSeluScale = 1.0507009873554804934193349852946L;
constexpr long double kSeluAlpha = 1.6732632423543772848170429916717L;

struct Case {
  std::string name;
  std::function<Tensor(const Tensor&)> op;
  Ref ref;
  double lo, hi;          // the sweep
  double max_ulp_float;   // bound for float32
  double max_ulp_double;  // bound for float64
  // Errors are in ulps of max(|reference|, floor): TF's Elu and Selu are
  // exp(x) - 1 for x < 0 (eager keeps TF's values), which cancels for
  // small |x|: accurate to an ulp of 1, not of the result.
  long double floor = 0;
};

std::vector<Case> Cases() {
  return {
      {"Exp", [](const Tensor& t) { return Exp(t); }, [](long double x) { return expl(x); }, -80,
       80, 5, 2},
      {"Log", [](const Tensor& t) { return Log(t); }, [](long double x) { return logl(x); }, 1e-30,
       1e30, 2, 2},
      {"Tanh", [](const Tensor& t) { return Tanh(t); }, [](long double x) { return tanhl(x); }, -12,
       12, 5, 6},
      {"Sigmoid", [](const Tensor& t) { return Sigmoid(t); },
       [](long double x) { return 1 / (1 + expl(-x)); }, -60, 30, 5, 3},
      {"Elu", [](const Tensor& t) { return Elu(t); },
       [](long double x) { return x < 0 ? expm1l(x) : x; }, -20, 20, 3, 3, 1},
      {"Selu", [](const Tensor& t) { return Selu(t); },
       [](long double x) { return x < 0 ? kSeluScale * kSeluAlpha * expm1l(x) : kSeluScale * x; },
       -20, 20, 4, 4, kSeluScale * kSeluAlpha},
      {"Softplus", [](const Tensor& t) { return Softplus(t); },
       [](long double x) { return log1pl(expl(x)); }, -60, 30, 8, 8},
      {"Erf", [](const Tensor& t) { return Erf(t); }, [](long double x) { return erfl(x); }, -5, 5,
       6, 2},
  };
}

// A sweep of lo..hi: evenly spaced, plus a geometric sweep of each sign's
// magnitudes within it (small arguments are where cancellation hides).
template <typename T>
std::vector<T> Sweep(double lo, double hi) {
  std::vector<T> v;
  constexpr int kEven = 40000, kGeometric = 20000;
  for (int i = 0; i <= kEven; ++i) v.push_back(static_cast<T>(lo + (hi - lo) * i / kEven));
  for (const double sign : {-1.0, 1.0}) {
    const double top = sign < 0 ? -lo : hi;
    if (top <= 0) continue;
    const double bottom = std::max(lo > 0 ? lo : 0.0, 1e-6);
    for (int i = 0; i <= kGeometric; ++i) {
      const double m = bottom * std::pow(top / bottom, static_cast<double>(i) / kGeometric);
      if (m >= bottom && m <= top) v.push_back(static_cast<T>(sign * m));
    }
  }
  return v;
}

// |got - ref| in units of the spacing of T at ref.
template <typename T>
double Ulps(T got, long double ref, long double floor) {
  if (std::isnan(got) || std::isnan(ref)) return std::isnan(got) == std::isnan(ref) ? 0 : 1e30;
  const long double magnitude =
      std::max({std::fabs(ref), floor, static_cast<long double>(std::numeric_limits<T>::min())});
  const int exponent = std::ilogb(static_cast<T>(magnitude));
  const long double ulp = std::ldexp(1.0L, exponent - std::numeric_limits<T>::digits + 1);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / ulp);
}

template <typename T>
void Check(const Case& c, double bound) {
  const std::vector<T> x = Sweep<T>(c.lo, c.hi);
  const Tensor y = c.op(Tensor::FromVector<T>(x));
  const auto got = y.data<T>();
  double worst = 0;
  T worst_x = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const long double ref = c.ref(static_cast<long double>(x[i]));
    if (std::fabs(ref) > std::numeric_limits<T>::max()) continue;              // overflows in T
    if (ref != 0 && std::fabs(ref) < std::numeric_limits<T>::min()) continue;  // subnormal
    const double u = Ulps<T>(got[i], ref, c.floor);
    if (u > worst) {
      worst = u;
      worst_x = x[i];
    }
  }
  EXPECT_LE(worst, bound) << c.name << " " << (sizeof(T) == 4 ? "float32" : "float64") << ": worst "
                          << worst << " ulp at x = " << worst_x;
  std::printf("%-8s %s max %.2f ulp (x = %.9g)\n", c.name.c_str(),
              sizeof(T) == 4 ? "float32" : "float64", worst, static_cast<double>(worst_x));
}

TEST(TranscendentalUlpTest, Float32WithinTheirBounds) {
  for (const Case& c : Cases()) Check<float>(c, c.max_ulp_float);
}

TEST(TranscendentalUlpTest, Float64WithinTheirBounds) {
  for (const Case& c : Cases()) Check<double>(c, c.max_ulp_double);
}

// float64 Tanh is eager's own vectorized formula (ops/unary_ops.cc): its
// special values are std::tanh's.
TEST(TranscendentalUlpTest, Float64TanhSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x = {0.0, -0.0, inf, -inf, std::nan(""), 1e-300, -1e-20, 19.5, -25};
  const Tensor result = Tanh(Tensor::FromVector<double>(x));  // outlives the span below
  const auto y = result.data<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::tanh(x[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(y[i])) << "tanh(" << x[i] << ")";
      continue;
    }
    EXPECT_EQ(y[i], want) << "tanh(" << x[i] << ")";
    EXPECT_EQ(std::signbit(y[i]), std::signbit(want)) << "tanh(" << x[i] << ")";
  }
}

}  // namespace
}  // namespace eager
