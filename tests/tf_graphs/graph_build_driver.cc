// graph_build_driver: eager's side of the graph differential test (eager -> TF).
//
//   graph_build_driver SEED DIR
//
// Builds a random TF1 graph from SEED with eager's graph-mode API
// (Graph::AsDefault, the op functions, Variables, Switch/Merge), initializes
// it, saves DIR/model.ckpt and DIR/model.ckpt.meta with eager's Saver, and
// writes
//   DIR/feeds    a bundle: the fed values of "x:0" (float32) and "flag:0" (bool)
//   DIR/eager    a bundle: every recorded tensor as eager's Session computed it
//   DIR/fetches  the recorded tensor names, one per line
// for TF to import, restore, run and compare. The graph: a float32
// placeholder x [batch, width], a bool placeholder flag, and 8 to 14 random
// ops over 2-D float32 tensors (random_graphs.py's families, built in C++).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <exception>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "eager.h"
#include "ops/binary_ops.h"
#include "ops/control_flow_ops.h"
#include "ops/shape_ops.h"
#include "ops/unary_ops.h"

namespace {

using eager::Shape;
using eager::Tensor;

class Builder {
 public:
  explicit Builder(uint64_t seed) : rng_(seed) {}

  void Build() {
    const int64_t batch = Choice<int64_t>({2, 3, 5});
    const int64_t width = Choice<int64_t>({4, 6, 8, 12});
    x_ = eager::Placeholder(eager::DType::kFloat32, Shape{batch, width}, "x");
    flag_ = eager::Placeholder(eager::DType::kBool, Shape{}, "flag");
    x_value_ = Normal(Shape{batch, width}, 1.0);
    flag_value_ = Uniform(2) == 1;
    pool_.push_back(*x_);
    BiasAdd();  // at least one variable, for the Saver
    const int count = 8 + Uniform(7);
    for (int i = 0; i < count; ++i) {
      switch (Uniform(17)) {
        case 0:
          MatMul();
          break;
        case 1:
          BiasAdd();
          break;
        case 2:
          Binary();
          break;
        case 3:
        case 4:
          Unary();
          break;
        case 5:
          Reduce();
          break;
        case 6:
          ArgMax();
          break;
        case 7:
          Rec(Reshaped());
          break;
        case 8:
          Rec(eager::Transpose(Pick()));
          break;
        case 9:
          Concat();
          break;
        case 10:
          Slice();
          break;
        case 11:
          Conv();
          break;
        case 12:
          Cond();
          break;
        case 13:
          Gradient();
          break;
        case 14:
          ConvGradient();
          break;
        case 15:
          Misc();
          break;
        default:
          Rec(eager::Cast(Rec(eager::Cast(Rec(Pick() * 4.0f), eager::DType::kInt32), false),
                          eager::DType::kFloat32));
      }
    }
  }

  void Save(const std::string& dir) {
    eager::Session sess(*eager::Graph::Current());
    sess.Run(eager::GlobalVariablesInitializer());
    eager::Saver saver;
    saver.Save(sess, dir + "/model.ckpt");
    eager::BundleWriter feeds(dir + "/feeds");
    feeds.Add("x:0", x_value_);
    feeds.Add("flag:0", Tensor(flag_value_));
    feeds.Finish();
    std::vector<eager::Fetch> fetches(recorded_.begin(), recorded_.end());
    const auto values = sess.Run(fetches, {{*x_, x_value_}, {*flag_, Tensor(flag_value_)}});
    eager::BundleWriter out(dir + "/eager");
    std::ofstream names(dir + "/fetches");
    for (size_t i = 0; i < values.size(); ++i) {
      out.Add(recorded_[i].name(), *values[i]);
      names << recorded_[i].name() << "\n";
    }
    out.Finish();
  }

 private:
  template <typename T>
  T Choice(std::initializer_list<T> values) {
    return *(values.begin() + Uniform(static_cast<int>(values.size())));
  }
  int Uniform(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  Tensor Normal(const Shape& shape, double scale) {
    std::normal_distribution<float> normal(0.0f, static_cast<float>(scale));
    std::vector<float> values(static_cast<size_t>(shape.num_elements()));
    for (float& v : values) v = normal(rng_);
    return Tensor::FromVector(std::move(values), shape);
  }

  Tensor Rec(const Tensor& t, bool pool = true) {
    recorded_.push_back(t);
    if (pool && t.dtype() == eager::DType::kFloat32 && t.rank() == 2) pool_.push_back(t);
    return t;
  }
  Tensor Pick() { return pool_[static_cast<size_t>(Uniform(static_cast<int>(pool_.size())))]; }
  Tensor Var(const Shape& shape, double scale = 1.0) {
    std::string name = std::to_string(variables_.size());
    name.insert(name.begin(), 'v');
    variables_.push_back(std::make_unique<eager::Variable>(Normal(shape, scale), name));
    return variables_.back()->value();
  }
  Tensor Positive(const Tensor& t, float offset) { return Rec(Rec(eager::Square(t)) + offset); }
  int64_t Rows(const Tensor& t) { return t.shape().dim(0); }
  int64_t Cols(const Tensor& t) { return t.shape().dim(1); }

  void MatMul() {
    const Tensor t = Pick();
    const int64_t inner = Cols(t);
    const int64_t units = Choice<int64_t>({3, 4, 6, 8});
    const double scale = 1.0 / std::sqrt(static_cast<double>(inner));
    if (Uniform(2) == 0) {
      Rec(eager::MatMul(t, Var(Shape{units, inner}, scale), false, true));
    } else {
      Rec(eager::MatMul(t, Var(Shape{inner, units}, scale)));
    }
  }
  void BiasAdd() {
    const Tensor t = Pick();
    Rec(eager::BiasAdd(t, Var(Shape{Cols(t)})));
  }
  void Binary() {
    const Tensor t = Pick();
    std::vector<Tensor> same;
    for (const Tensor& p : pool_) {
      if (p.shape() == t.shape() && p.id() != t.id()) same.push_back(p);
    }
    Tensor other;
    if (!same.empty() && Uniform(5) < 3) {
      other = same[static_cast<size_t>(Uniform(static_cast<int>(same.size())))];
    } else {
      const int form = Uniform(3);
      other = Var(form == 0 ? Shape{Cols(t)} : form == 1 ? Shape{1, Cols(t)} : Shape{Rows(t), 1});
    }
    switch (Uniform(7)) {
      case 0:
        Rec(t + other);
        break;
      case 1:
        Rec(t - other);
        break;
      case 2:
        Rec(t * other);
        break;
      case 3:
        Rec(eager::Maximum(t, other));
        break;
      case 4:
        Rec(eager::Minimum(t, other));
        break;
      case 5:
        Rec(eager::SquaredDifference(t, other));
        break;
      default:
        Rec(t / Positive(other, 1.0f));
    }
  }
  void Unary() {
    const Tensor t = Pick();
    switch (Uniform(12)) {
      case 0:
        Rec(-t);
        break;
      case 1:
        Rec(eager::Relu(t));
        break;
      case 2:
        Rec(eager::Elu(t));
        break;
      case 3:
        Rec(eager::Sigmoid(t));
        break;
      case 4:
        Rec(eager::Tanh(t));
        break;
      case 5:
        Rec(eager::Exp(Rec(eager::Tanh(t))));
        break;
      case 6:
        Rec(eager::Log(Positive(t, 0.5f)));
        break;
      case 7:
        Rec(eager::Sqrt(Rec(eager::Square(t))));
        break;
      case 8:
        Rec(eager::Rsqrt(Positive(t, 0.25f)));
        break;
      case 9:
        Rec(eager::Pow(Positive(t, 0.5f), Tensor(1.5f)));
        break;
      case 10:
        Rec(eager::Softmax(t));
        break;
      default:
        Rec(eager::LogSoftmax(t));
    }
  }
  void Reduce() {
    const Tensor t = Pick();
    const int64_t axis = Uniform(2);
    const int kind = Uniform(3);
    auto reduce = [&](int64_t a) {
      return kind == 0   ? eager::ReduceSum(t, {a}, true)
             : kind == 1 ? eager::ReduceMean(t, {a}, true)
                         : eager::ReduceMax(t, {a}, true);
    };
    if (Uniform(4) == 0) {
      Rec(eager::Squeeze(Rec(reduce(1)), {1}), false);
    } else {
      Rec(reduce(axis));
    }
  }
  void ArgMax() {
    const Tensor t = Pick();
    const Tensor index = Rec(eager::ArgMax(t, 1), false);
    if (Uniform(2) == 0) {
      Rec(eager::OneHot(index, Cols(t)));
    } else {
      Rec(eager::Gather(Var(Shape{Cols(t), Choice<int64_t>({2, 5})}), index));
    }
  }
  Tensor Reshaped() {
    const Tensor t = Pick();
    const int64_t size = t.num_elements();
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= size; ++d) {
      if (size % d == 0) divisors.push_back(d);
    }
    const int64_t cols = divisors[static_cast<size_t>(Uniform(static_cast<int>(divisors.size())))];
    return eager::Reshape(t, {size / cols, cols});
  }
  void Concat() {
    const Tensor t = Pick();
    const int64_t axis = Uniform(2);
    std::vector<Tensor> partners;
    for (const Tensor& p : pool_) {
      if (p.shape().dim(1 - axis) == t.shape().dim(1 - axis)) partners.push_back(p);
    }
    Rec(eager::Concat(
        {t, partners[static_cast<size_t>(Uniform(static_cast<int>(partners.size())))]}, axis));
  }
  void Slice() {
    const Tensor t = Pick();
    const int64_t r0 = Uniform(static_cast<int>(Rows(t)));
    const int64_t c0 = Uniform(static_cast<int>(Cols(t)));
    Rec(eager::Slice(t, {r0, c0},
                     {1 + Uniform(static_cast<int>(Rows(t) - r0)),
                      1 + Uniform(static_cast<int>(Cols(t) - c0))}));
  }
  void Conv() {
    const Tensor t = Pick();
    const int64_t rows = Rows(t), cols = Cols(t);
    std::vector<std::array<int64_t, 3>> shapes;
    for (int64_t c = 1; c <= 3; ++c) {
      for (int64_t h = 2; h <= cols; ++h) {
        if (cols % (h * c) == 0 && cols / (h * c) >= 2) shapes.push_back({h, cols / (h * c), c});
      }
    }
    if (shapes.empty()) return Unary();
    const auto [h, w, c] = shapes[static_cast<size_t>(Uniform(static_cast<int>(shapes.size())))];
    const Tensor image = Rec(eager::Reshape(t, {rows, h, w, c}), false);
    const int64_t k = 1 + Uniform(static_cast<int>(std::min({h, w, int64_t{3}})));
    const int64_t stride = 1 + Uniform(2);
    eager::Conv2DOptions conv;
    conv.strides = {1, stride, stride, 1};
    conv.padding = Uniform(2) == 0 ? "SAME" : "VALID";
    const int64_t out_channels = 1 + Uniform(3);
    Tensor out = Rec(eager::Conv2D(image,
                                   Var(Shape{k, k, c, out_channels},
                                       1.0 / std::sqrt(static_cast<double>(k * k * c))),
                                   conv),
                     false);
    if (Uniform(5) < 3 && std::min(out.shape().dim(1), out.shape().dim(2)) >= 2) {
      eager::PoolOptions pool;
      const int64_t s = 1 + Uniform(2);
      pool.strides = {1, s, s, 1};
      pool.padding = Uniform(2) == 0 ? "SAME" : "VALID";
      out = Rec(eager::MaxPool(out, pool), false);
    }
    Rec(eager::Reshape(out, {rows, out.num_elements() / rows}));
  }
  // The gradient kernels a TF1 training graph runs.
  void Gradient() {
    const Tensor t = Pick();
    const Tensor dy = Var(t.shape());
    switch (Uniform(3)) {
      case 0:
        Rec(eager::ReluGrad(dy, t));
        break;
      case 1:
        Rec(eager::EluGrad(dy, Rec(eager::Elu(t))));
        break;
      default:
        Rec(eager::RsqrtGrad(Rec(eager::Rsqrt(Positive(t, 0.25f))), dy));
    }
  }
  // Conv2DBackpropInput / Filter and MaxPoolGrad on a random NHWC case.
  void ConvGradient() {
    const int64_t n = 1 + Uniform(3), h = 2 + Uniform(4), w = 2 + Uniform(4);
    const int64_t c = 1 + Uniform(3), o = 1 + Uniform(3), k = 1 + Uniform(2);
    const int64_t stride = 1 + Uniform(2);
    eager::Conv2DOptions conv;
    conv.strides = {1, stride, stride, 1};
    conv.padding = Uniform(2) == 0 ? "SAME" : "VALID";
    const Tensor image = Var(Shape{n, h, w, c});
    const Tensor kernel = Var(Shape{k, k, c, o});
    const Tensor out = Rec(eager::Conv2D(image, kernel, conv), false);
    const Tensor dy = Var(out.shape());
    Tensor grad;
    switch (Uniform(3)) {
      case 0:
        grad = eager::Conv2DBackpropInput(
            Tensor::Vector<int32_t>({static_cast<int32_t>(n), static_cast<int32_t>(h),
                                     static_cast<int32_t>(w), static_cast<int32_t>(c)}),
            kernel, dy, conv);
        break;
      case 1:
        grad = eager::Conv2DBackpropFilter(
            image,
            Tensor::Vector<int32_t>({static_cast<int32_t>(k), static_cast<int32_t>(k),
                                     static_cast<int32_t>(c), static_cast<int32_t>(o)}),
            dy, conv);
        break;
      default: {
        eager::PoolOptions pool;
        pool.strides = conv.strides;
        pool.padding = conv.padding;
        const Tensor pooled = Rec(eager::MaxPool(image, pool), false);
        if (pooled.num_elements() == 0) return;
        grad = eager::MaxPoolGrad(image, pooled, Var(pooled.shape()), pool);
      }
    }
    Rec(grad, false);
    Rec(eager::Reshape(grad, {grad.shape().dim(0), grad.num_elements() / grad.shape().dim(0)}));
  }
  void Misc() {
    const Tensor t = Pick();
    // Case 0 checks that the exporter writes one shape per TF output of
    // SparseSoftmaxCrossEntropyWithLogits: TF rejects a .meta whose
    // "_output_shapes" lists one ("Node ... has 2 outputs but the
    // _output_shapes attribute specifies shapes for 1 outputs").
    switch (Uniform(5)) {
      case 0: {
        std::vector<int32_t> labels;
        for (int64_t i = 0; i < Rows(t); ++i) labels.push_back(Uniform(static_cast<int>(Cols(t))));
        Rec(eager::SparseSoftmaxCrossEntropyWithLogits(Tensor::FromVector(labels), t), false);
        break;
      }
      case 1:
        Rec(eager::BroadcastTo(Var(Shape{1, Cols(t)}), t.shape()));
        break;
      case 2: {
        const int segments = 1 + Uniform(static_cast<int>(Rows(t)) + 1);
        std::vector<int32_t> ids;
        for (int64_t i = 0; i < Rows(t); ++i) ids.push_back(Uniform(segments));
        Rec(eager::UnsortedSegmentSum(t, Tensor::FromVector(ids), segments));
        break;
      }
      case 3:
        Rec(eager::StopGradient(t));
        break;
      default:
        Rec(eager::Cast(Rec(eager::Equal(Rec(eager::Relu(t)), Tensor(0.0f)), false),
                        eager::DType::kFloat32));
    }
  }
  // tf.cond(flag, tanh(t) * 2, relu(t) - 1) as TF1 builds it: a Switch of t
  // on flag, each branch on its output, a Merge.
  void Cond() {
    const Tensor t = Pick();
    const eager::SwitchOutputs sw = eager::Switch(t, *flag_);
    const Tensor when_true = eager::Tanh(sw.output_true) * 2.0f;
    const Tensor when_false = eager::Relu(sw.output_false) - 1.0f;
    Rec(eager::Merge({when_false, when_true}).output);
  }

  std::mt19937_64 rng_;
  std::optional<Tensor> x_, flag_;
  Tensor x_value_;
  bool flag_value_ = false;
  std::vector<Tensor> pool_;
  std::vector<Tensor> recorded_;
  std::vector<std::unique_ptr<eager::Variable>> variables_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: graph_build_driver SEED DIR\n";
    return 2;
  }
  try {
    eager::Graph graph;
    eager::Graph::AsDefault in(graph);
    Builder builder(std::stoull(argv[1]));
    builder.Build();
    builder.Save(argv[2]);
  } catch (const std::exception& e) {
    std::cerr << "graph_build_driver: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
