// Einsum (ops/matmul.h): values against a brute-force reference (every
// assignment of every letter, summed), hand-computed cases, BatchMatMulV2
// for "..." broadcasting, the refused equations, and the gradient by
// central differences.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "ops/matmul.h"
#include "ops/random_generator.h"
#include "ops/shape_ops.h"
#include "tests/testing/numeric_gradient.h"

namespace eager {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Independent reference for letter-only equations: loops over every
// assignment of every letter and adds the product of the operands' entries
// into the output's entry. float64.
Tensor BruteForceEinsum(const std::string& equation, const std::vector<Tensor>& in) {
  const size_t arrow = equation.find("->");
  std::vector<std::string> subs;
  std::string lhs = equation.substr(0, arrow);
  for (size_t comma; (comma = lhs.find(',')) != std::string::npos; lhs = lhs.substr(comma + 1)) {
    subs.push_back(lhs.substr(0, comma));
  }
  subs.push_back(lhs);
  const std::string out = equation.substr(arrow + 2);
  std::map<char, int64_t> size;
  for (size_t k = 0; k < in.size(); ++k) {
    for (size_t i = 0; i < subs[k].size(); ++i) size[subs[k][i]] = in[k].shape().dim(int(i));
  }
  std::vector<char> letters;
  letters.reserve(size.size());
  for (const auto& [c, n] : size) letters.push_back(c);
  std::vector<int64_t> out_dims;
  for (char c : out) out_dims.push_back(size[c]);
  std::vector<double> result(static_cast<size_t>(Shape(out_dims).num_elements()), 0.0);
  std::map<char, int64_t> at;
  for (char c : letters) at[c] = 0;
  const auto offset = [&](const std::string& s, const Shape& shape) {
    int64_t o = 0;
    for (size_t i = 0; i < s.size(); ++i) o = o * shape.dim(int(i)) + at[s[i]];
    return o;
  };
  for (;;) {
    bool empty = false;
    for (char c : letters) empty = empty || size[c] == 0;
    if (empty) break;
    double product = 1;
    for (size_t k = 0; k < in.size(); ++k) {
      product *= in[k].data<double>()[static_cast<size_t>(offset(subs[k], in[k].shape()))];
    }
    result[static_cast<size_t>(offset(out, Shape(out_dims)))] += product;
    size_t d = letters.size();
    while (d > 0 && ++at[letters[d - 1]] == size[letters[d - 1]]) at[letters[--d]] = 0;
    if (d == 0) break;
  }
  return Tensor::FromVector<double>(result, Shape(out_dims));
}

Tensor Uniform(const Shape& shape, uint64_t seed) {
  return RandomUniform(shape, seed, -2.0, 2.0, DType::kFloat64);
}

void ExpectNear(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  const auto g = got.data<double>();
  const auto w = want.data<double>();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], 1e-12) << "at " << i;
}

struct ValueCase {
  std::string equation;
  std::vector<Shape> shapes;
};

class EinsumValueTest : public ::testing::TestWithParam<ValueCase> {};

TEST_P(EinsumValueTest, EqualsBruteForce) {
  const ValueCase& c = GetParam();
  std::vector<Tensor> in;
  for (size_t k = 0; k < c.shapes.size(); ++k) in.push_back(Uniform(c.shapes[k], 40 + k));
  ExpectNear(Einsum(c.equation, in), BruteForceEinsum(c.equation, in));
}

// The equations Keras 3's EinsumDense and MultiHeadAttention write, batch
// matmul, transposes, reductions, outer products, letters summed alone.
INSTANTIATE_TEST_SUITE_P(
    Equations, EinsumValueTest,
    ::testing::Values(ValueCase{"abc,cd->abd", {Shape{2, 3, 4}, Shape{4, 5}}},
                      ValueCase{"abc,cde->abde", {Shape{2, 3, 4}, Shape{4, 2, 3}}},
                      ValueCase{"aecd,abcd->acbe", {Shape{2, 5, 3, 4}, Shape{2, 6, 3, 4}}},
                      ValueCase{"acbe,aecd->abcd", {Shape{2, 3, 6, 5}, Shape{2, 5, 3, 4}}},
                      ValueCase{"abcd,cde->abe", {Shape{2, 6, 3, 4}, Shape{3, 4, 5}}},
                      ValueCase{"bij,bjk->bik", {Shape{3, 2, 4}, Shape{3, 4, 5}}},
                      ValueCase{"ij->ji", {Shape{3, 4}}}, ValueCase{"ij->i", {Shape{3, 4}}},
                      ValueCase{"ijk->", {Shape{2, 3, 4}}}, ValueCase{"ij->ij", {Shape{3, 4}}},
                      ValueCase{"i,j->ij", {Shape{3}, Shape{4}}},
                      ValueCase{"i,i->", {Shape{5}, Shape{5}}},
                      ValueCase{"xij,jky->ki", {Shape{2, 3, 4}, Shape{4, 5, 3}}},
                      ValueCase{"iJ,Jk->kiJ", {Shape{2, 3}, Shape{3, 4}}},
                      ValueCase{"ij,jk->ik", {Shape{2, 0}, Shape{0, 3}}}),
    [](const auto& info) { return "Case" + std::to_string(info.index); });

TEST(EinsumTest, HandComputedMatrixProductAndTrace) {
  const Tensor a = Tensor::Matrix<float>({{1, 2}, {3, 4}});
  const Tensor b = Tensor::Matrix<float>({{5, 6}, {7, 8}});
  EXPECT_EQ(Einsum("ij,jk->ik", {a, b}).ToVector<float>(), (std::vector<float>{19, 22, 43, 50}));
  EXPECT_EQ(Einsum("ij,jk->ki", {a, b}).ToVector<float>(), (std::vector<float>{19, 43, 22, 50}));
  EXPECT_EQ(Einsum("ij,ij->", {a, b}).ToVector<float>(), (std::vector<float>{70}));
  EXPECT_EQ(Einsum("ij->j", {a}).ToVector<float>(), (std::vector<float>{4, 6}));
  const Tensor i = Tensor::FromVector<int64_t>({1, 2, 3}, Shape{3});
  const Tensor j = Tensor::FromVector<int64_t>({10, 20}, Shape{2});
  const Tensor outer = Einsum("i,j->ij", {i, j});
  EXPECT_EQ(outer.shape(), (Shape{3, 2}));
  EXPECT_EQ(outer.ToVector<int64_t>(), (std::vector<int64_t>{10, 20, 20, 40, 30, 60}));
}

// Integer products and sums wrap as TF's (two's complement), as does
// BatchMatMulV2's integer product: INT64_MIN * -2 is 0, INT64_MAX + 1 is
// INT64_MIN (computed in unsigned arithmetic, never signed overflow: the
// ASan+UBSan pass would stop on it).
TEST(EinsumTest, IntegerProductsAndSumsWrapAsTfs) {
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  const Tensor a = Tensor::FromVector<int64_t>({lo, hi}, Shape{1, 2});
  const Tensor b = Tensor::FromVector<int64_t>({-2, 1}, Shape{2, 1});
  // lo * -2 + hi * 1 = 0 + hi (wrapped).
  EXPECT_EQ(Einsum("ij,jk->ik", {a, b}).ToVector<int64_t>(), (std::vector<int64_t>{hi}));
  EXPECT_EQ(BatchMatMulV2(a, b).ToVector<int64_t>(), (std::vector<int64_t>{hi}));
  // A label summed away in one operand: hi + 1 wraps to lo.
  const Tensor ones = Tensor::FromVector<int64_t>({hi, 1}, Shape{1, 2});
  EXPECT_EQ(
      Einsum("ij,k->ik", {ones, Tensor::FromVector<int64_t>({1}, Shape{1})}).ToVector<int64_t>(),
      (std::vector<int64_t>{lo}));
}

TEST(EinsumTest, EllipsisBroadcastsAsBatchMatMul) {
  const Tensor x = Uniform(Shape{2, 1, 2, 3}, 50);
  const Tensor y = Uniform(Shape{3, 3, 4}, 51);
  ExpectNear(Einsum("...ij,...jk->...ik", {x, y}), BatchMatMulV2(x, y));
  // "..." in the middle and at the end; the output's "..." where it likes.
  const Tensor z = Uniform(Shape{4, 2, 3}, 52);
  ExpectNear(Einsum("i...->...i", {z}), Transpose(z, {1, 2, 0}));
  ExpectNear(Einsum("...,...->...", {z, Uniform(Shape{3}, 53)}),
             BruteForceEinsum("abc,c->abc", {z, Uniform(Shape{3}, 53)}));
}

void ExpectRefused(const std::string& equation, const std::vector<Tensor>& in,
                   const std::string& what) {
  try {
    Einsum(equation, in);
    ADD_FAILURE() << equation << " was accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("'" + equation + "'"), HasSubstr(what))) << equation;
  }
}

TEST(EinsumTest, BadEquationsAreInvalidArgumentNamingEquationAndOperand) {
  const Tensor m = Uniform(Shape{2, 3}, 60);
  const Tensor n = Uniform(Shape{4, 5}, 61);
  ExpectRefused("ij,jk", {m, m}, "exactly one '->'");
  ExpectRefused("ij->i->j", {m}, "exactly one '->'");
  ExpectRefused("ij->ik", {m}, "the output's 'k' is in no operand");
  ExpectRefused("ij->ii", {m}, "the output repeats 'i'");
  ExpectRefused("ij,jk->ik", {m, n}, "operand 1 has size 4 for 'j'");
  ExpectRefused("ij,jk->ik", {m}, "names 2 operand(s) but 1 were given");
  ExpectRefused("ij->i", {m, m}, "names 1 operand(s) but 2 were given");
  ExpectRefused("ijk->i", {m}, "operand 0 has shape [2,3]");
  ExpectRefused("i j->j", {m}, "operand 0 ('i j') has ' '");
  ExpectRefused("...ij->ij", {Uniform(Shape{4, 2, 3}, 62)}, "the output has no '...'");
  ExpectRefused("...ij,...jk->...ik", {Uniform(Shape{2, 2, 3}, 63), Uniform(Shape{5, 3, 4}, 64)},
                "operand 1's '...' dimensions of [5,3,4] do not broadcast");
  EXPECT_THROW(Einsum("ij,jk->ik", {m, Tensor::FromVector<int32_t>({1, 2, 3}, Shape{3, 1})}),
               InvalidArgumentError);
  EXPECT_THROW(Einsum("ii->i", {Uniform(Shape{3, 3}, 65)}), UnimplementedError);
}

TEST(EinsumTest, GradientMatchesCentralDifferences) {
  for (const ValueCase& c : {ValueCase{"aecd,abcd->acbe", {Shape{2, 3, 2, 4}, Shape{2, 5, 2, 4}}},
                             ValueCase{"xij,jky->ki", {Shape{2, 3, 4}, Shape{4, 5, 3}}},
                             ValueCase{"a...c,...cd->...ad", {Shape{2, 1, 3}, Shape{4, 3, 2}}},
                             ValueCase{"ij->", {Shape{2, 3}}}}) {
    std::vector<Tensor> in;
    for (size_t k = 0; k < c.shapes.size(); ++k) in.push_back(Uniform(c.shapes[k], 70 + k));
    const testing::GradientCheck check =
        testing::CheckGradient(kEinsumOp, in, Attrs{{"equation", c.equation}});
    EXPECT_LE(check.max_error, 1e-6) << c.equation << ": " << check.worst;
    EXPECT_TRUE(check.without_gradient.empty()) << c.equation;
  }
}

}  // namespace
}  // namespace eager
