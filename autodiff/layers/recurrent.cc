#include "autodiff/layers/recurrent.h"

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "autodiff/activations.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/fused_lstm_cell.h"
#include "ops/matmul.h"
#include "ops/nn_ops.h"
#include "ops/random_generator.h"
#include "ops/random_ops.h"
#include "ops/shape_ops.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager::layers {
namespace {

// FNV-1a, as Dense's default seed: fixed and portable.
uint64_t SeedFromName(std::string_view name) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// Keras's Orthogonal initializer for a [rows, cols] matrix with rows <= cols
// (a recurrent kernel [units, k * units]): a standard normal [cols, rows]
// draw, its QR decomposition's Q with each column's sign set by R's diagonal,
// transposed. Modified Gram-Schmidt gives that Q directly (R's diagonal
// positive), in double.
Tensor Orthogonal(int64_t rows, int64_t cols, uint64_t seed, DType dtype) {
  const std::vector<double> a =
      RandomNormal(Shape{cols, rows}, seed, 0.0, 1.0, DType::kFloat64).ToVector<double>();
  // q[j] is column j of the [cols, rows] draw, orthonormalized in turn.
  std::vector<std::vector<double>> q(rows, std::vector<double>(cols));
  for (int64_t j = 0; j < rows; ++j) {
    for (int64_t i = 0; i < cols; ++i) q[j][i] = a[i * rows + j];
    for (int64_t p = 0; p < j; ++p) {
      double dot = 0;
      for (int64_t i = 0; i < cols; ++i) dot += q[p][i] * q[j][i];
      for (int64_t i = 0; i < cols; ++i) q[j][i] -= dot * q[p][i];
    }
    double norm = 0;
    for (int64_t i = 0; i < cols; ++i) norm += q[j][i] * q[j][i];
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < cols; ++i) q[j][i] /= norm;
  }
  // Transposed: row j of the result is column j of Q.
  std::vector<double> out(rows * cols);
  for (int64_t j = 0; j < rows; ++j) {
    for (int64_t i = 0; i < cols; ++i) out[j * cols + i] = q[j][i];
  }
  const Tensor t = Tensor::FromVector<double>(std::move(out), Shape{rows, cols});
  return dtype == DType::kFloat64 ? t : Cast(t, dtype);
}

// Columns [begin, end) of a matrix [rows, n]. StridedSlice rather than Slice
// (here and below), as Keras's x[:, a:b]: with an unknown batch a graph builds
// its forward pass; Slice's graph gradient needs every dimension known.
Tensor Columns(const Tensor& m, int64_t begin, int64_t end) {
  return StridedSlice(m, {0, begin}, {0, end}, {1, 1}, {.begin = 1, .end = 1});
}

// Row `row` of a [2, n] matrix as a vector [n].
Tensor Row(const Tensor& m, int64_t row) {
  return StridedSlice(m, {row, 0}, {row + 1, 0}, {1, 1}, {.begin = 2, .end = 2, .shrink_axis = 1});
}

}  // namespace

Recurrent::Recurrent(std::string_view class_name, std::string_view default_name,
                     std::string_view cell_name, int64_t units, int gates, int state_count,
                     RecurrentConfig config)
    : Layer(config.name.empty() ? UniqueObjectName(default_name) : config.name),
      who_(StrCat(class_name, " '", name(), "'")),
      units_(units),
      gates_(gates),
      state_count_(state_count),
      config_(std::move(config)),
      seed_(config_.seed ? *config_.seed : SeedFromName(name())),
      cell_name_(cell_name) {
  EAGER_CHECK(units > 0, who_, ": units must be positive, got ", units);
  EAGER_CHECK(config_.activation && config_.recurrent_activation, who_,
              ": activation and recurrent_activation must be set");
  EAGER_CHECK(config_.dropout >= 0 && config_.dropout < 1 && config_.recurrent_dropout >= 0 &&
                  config_.recurrent_dropout < 1,
              who_, ": dropout and recurrent_dropout must be in [0, 1), got ", config_.dropout,
              " and ", config_.recurrent_dropout);
  Track("cell", cell_);
}

Recurrent::~Recurrent() = default;

Tensor Recurrent::InitialBias(DType dtype) const { return Tensor::Zeros(BiasShape(), dtype); }

Shape Recurrent::BiasShape() const { return Shape{gates_ * units_}; }

void Recurrent::Build(int64_t input_dim, DType dtype) {
  if (built()) {
    throw FailedPreconditionError(StrCat(who_, ": Build called on a layer already built with ",
                                         "input_dim ", kernel_->shape().dim(0)));
  }
  EAGER_CHECK(input_dim > 0, who_, ": input_dim must be positive, got ", input_dim);
  EAGER_CHECK(IsFloating(dtype), who_, ": variables must be float32 or float64, got ", dtype);
  NameScope scope(NameScope::Current() + name() + "/" + cell_name_ + "/");
  const int64_t width = gates_ * units_;
  const double limit = std::sqrt(6.0 / static_cast<double>(input_dim + width));
  kernel_ = &cell_.AddVariable("kernel",
                               RandomUniform(Shape{input_dim, width}, seed_, -limit, limit, dtype));
  recurrent_kernel_ =
      &cell_.AddVariable("recurrent_kernel", Orthogonal(units_, width, seed_ + 1, dtype));
  if (config_.use_bias) bias_ = &cell_.AddVariable("bias", InitialBias(dtype));
}

Variable& Recurrent::kernel() const {
  if (!built()) {
    throw FailedPreconditionError(
        StrCat(who_, ": kernel does not exist before the layer is built (call it or Build)"));
  }
  return *kernel_;
}

Variable& Recurrent::recurrent_kernel() const {
  kernel();  // the same precondition
  return *recurrent_kernel_;
}

Variable* Recurrent::bias() const {
  kernel();
  return bias_;
}

Tensor Recurrent::RecurrentProduct(const Tensor& h, const Tensor& kernel) const {
  if (state_keep_.size() <= 1) return MatMul(h, kernel);
  // Keras's implementation 1: gate g's columns from h under state mask g.
  const int64_t gates = kernel.shape().dim(1) / units_;
  std::vector<Tensor> blocks;
  for (int64_t g = 0; g < gates; ++g) {
    blocks.push_back(MatMul(Mul(h, state_keep_[g]), Columns(kernel, g * units_, (g + 1) * units_)));
  }
  return Concat(blocks, 1);
}

Tensor Recurrent::StateForGate(const Tensor& h, int gate) const {
  return state_keep_.size() <= 1 ? h : Mul(h, state_keep_[gate]);
}

Tensor Recurrent::Gate(const Tensor& m, int gate) const {
  return Columns(m, gate * units_, (gate + 1) * units_);
}

Tensor Recurrent::ProjectInputs(const Tensor& rows) const {
  const Tensor xk = MatMul(rows, kernel_->value());
  return bias_ == nullptr ? xk : BiasAdd(xk, bias_->value());
}

Tensor Recurrent::Call(const Tensor& x) { return CallWithState(x).output; }

Tensor Recurrent::Call(const Tensor& x, bool training) {
  return CallWithState(x, {}, std::nullopt, training).output;
}

Tensor Recurrent::CallMasked(const Tensor& x, const std::optional<Tensor>& mask, bool training) {
  return CallWithState(x, {}, mask, training).output;
}

void Recurrent::set_dropout_step(int64_t step) {
  EAGER_CHECK(step >= 0, who_, ": the dropout step must be >= 0, got ", step);
  dropout_step_ = step;
}

Tensor Recurrent::DropoutMask(const Shape& shape, double rate, int64_t step, DType dtype) const {
  EAGER_CHECK(Graph::Current() == nullptr, who_,
              ": dropout in a training call is drawn eagerly; in a graph call it with "
              "training=false");
  EAGER_CHECK(shape.IsFullyDefined(), who_, ": dropout needs a known batch, got the mask shape ",
              shape);
  // Keras 3's seed pair [seed, step], reduced as its TF backend's _cast_seed.
  constexpr uint64_t kSeedModulus = 2147483646;
  const Tensor u = StatelessRandomUniform(shape, static_cast<int64_t>(seed_ % kSeedModulus),
                                          step % static_cast<int64_t>(kSeedModulus), dtype);
  const Tensor scale = Cast(Tensor::Scalar<double>(1.0 / (1.0 - rate)), dtype);
  return SelectV2(GreaterEqual(u, Cast(Tensor::Scalar<double>(rate), dtype)), scale,
                  Tensor::Zeros(Shape{}, dtype));
}

Layer::KerasMaskRule Recurrent::KerasMasking() const {
  return {.output = config_.return_sequences ? KerasMaskOutput::kInput : KerasMaskOutput::kNone,
          .call_takes_mask = true};
}

std::optional<Tensor> Recurrent::ComputeMask(const Tensor& x, const std::optional<Tensor>& mask) {
  (void)x;
  return config_.return_sequences ? mask : std::nullopt;
}

RecurrentOutput Recurrent::CallWithState(const Tensor& x, const std::vector<Tensor>& initial_state,
                                         const std::optional<Tensor>& mask, bool training) {
  EAGER_CHECK(x.shape().rank() == 3 && x.shape().dim(1) >= 1, who_,
              ": expected an input [batch, time, features] with time >= 1, got shape ", x.shape());
  EAGER_CHECK(IsFloating(x.dtype()), who_, ": expected a float32 or float64 input, got ",
              x.dtype());
  const int64_t batch = x.shape().dim(0), steps = x.shape().dim(1), features = x.shape().dim(2);
  if (!built()) Build(features, x.dtype());
  EAGER_CHECK(features == kernel_->shape().dim(0) && x.dtype() == kernel_->dtype(), who_,
              ": built for inputs [batch, time, ", kernel_->shape().dim(0), "] of ",
              kernel_->dtype(), ", got ", x.shape(), " of ", x.dtype());
  EAGER_CHECK(initial_state.empty() || static_cast<int>(initial_state.size()) == state_count_, who_,
              ": expected ", state_count_, " initial states, got ", initial_state.size());
  for (size_t s = 0; s < initial_state.size(); ++s) {
    const Tensor& given = initial_state[s];
    const bool fits = given.shape().rank() == 2 && given.shape().dim(1) == units_ &&
                      (batch < 0 || given.shape().dim(0) < 0 || given.shape().dim(0) == batch);
    EAGER_CHECK(fits && given.dtype() == x.dtype(), who_, ": initial state ", s, " must be [",
                batch, ", ", units_, "] of ", x.dtype(), ", got ", given.shape(), " of ",
                given.dtype());
  }
  std::optional<NameScope> scope;
  if (Graph::Current() != nullptr) scope.emplace(NameScope::Current() + name() + "/");
  // The input projections of all steps in one matmul, then one step at a time.
  // -1 for the batch: a graph's placeholder may leave it unknown.
  // Keras's dropout masks, drawn (or only counted) in its order: inputs,
  // then state. LSTM and GRU with recurrent_dropout switch to Keras's
  // implementation 1: one mask per gate, for the inputs and for the state.
  const bool per_gate = config_.recurrent_dropout > 0 && !AppliesRecurrentDropout();
  const int masks = per_gate ? gates_ : 1;
  std::vector<Tensor> input_keep;
  state_keep_.clear();
  if (config_.dropout > 0) {
    for (int g = 0; g < masks; ++g) {
      const int64_t draw = dropout_step_++;
      if (training) {
        input_keep.push_back(DropoutMask(Shape{batch, features}, config_.dropout, draw, x.dtype()));
      }
    }
  }
  if (config_.recurrent_dropout > 0) {
    for (int g = 0; g < masks; ++g) {
      const int64_t draw = dropout_step_++;
      if (training) {
        state_keep_.push_back(
            DropoutMask(Shape{batch, units_}, config_.recurrent_dropout, draw, x.dtype()));
      }
    }
  }
  const int64_t width = gates_ * units_;
  auto project = [&](const Tensor& in) {
    return Reshape(ProjectInputs(Reshape(in, {-1, features})), {-1, steps, width});
  };
  // The same input mask at every step: [batch, 1, features]. Per gate, gate
  // g's columns come from the inputs under mask g.
  Tensor projected;
  if (input_keep.empty()) {
    projected = project(x);
  } else if (input_keep.size() == 1) {
    projected = project(Mul(x, ExpandDims(input_keep[0], 1)));
  } else {
    std::vector<Tensor> blocks;
    for (int g = 0; g < gates_; ++g) {
      const Tensor p = project(Mul(x, ExpandDims(input_keep[g], 1)));
      blocks.push_back(StridedSlice(p, {0, 0, g * units_}, {0, 0, (g + 1) * units_}, {1, 1, 1},
                                    {.begin = 3, .end = 3}));
    }
    projected = Concat(blocks, 2);
  }
  auto step_input = [&](int64_t t) {
    return StridedSlice(projected, {0, t, 0}, {0, t + 1, 0}, {1, 1, 1},
                        {.begin = 5, .end = 5, .shrink_axis = 2});
  };
  std::vector<Tensor> states = initial_state;
  if (states.empty()) {
    // Zeros [batch, units]; when the batch is known only at run time, zeros
    // broadcast to a step input's shape (the Reshape keeps units static).
    const Tensor zeros = batch >= 0 ? Tensor::Zeros(Shape{batch, units_}, x.dtype())
                                    : Reshape(BroadcastTo(Tensor::Zeros(Shape{}, x.dtype()),
                                                          ShapeOf(Gate(step_input(0), 0))),
                                              {-1, units_});
    states.assign(state_count_, zeros);
  }
  std::optional<Tensor> valid;  // the mask as bool [batch, time]
  if (mask) {
    const Shape& m = mask->shape();
    EAGER_CHECK(
        m.rank() == 2 && m.dim(1) == steps && (batch < 0 || m.dim(0) < 0 || m.dim(0) == batch),
        who_, ": expected a mask [", batch, ", ", steps, "] for an input of shape ", x.shape(),
        ", got shape ", m);
    valid = mask->dtype() == DType::kBool ? *mask : NotEqual(*mask, ZerosLike(*mask));
  }
  std::vector<Tensor> outputs;
  std::optional<Tensor> output;  // the last output; masked steps repeat it
  for (int64_t i = 0; i < steps; ++i) {
    const int64_t t = config_.go_backwards ? steps - 1 - i : i;
    std::vector<Tensor> next;
    if (state_keep_.size() == 1) {  // SimpleRNN: the previous output, dropped
      std::vector<Tensor> dropped = states;
      dropped[0] = Mul(dropped[0], state_keep_[0]);
      next = Step(step_input(t), dropped);
    } else {  // per gate: RecurrentProduct applies them
      next = Step(step_input(t), states);
    }
    if (valid) {
      // Keras's backend rnn: where(mask_t, new, old) for the output and for
      // each state, the mask [batch, 1] broadcast over the units.
      const Tensor keep = StridedSlice(*valid, {0, t}, {0, t + 1}, {1, 1}, {.begin = 1, .end = 1});
      output = SelectV2(keep, next[0], output ? *output : ZerosLike(next[0]));
      for (size_t s = 0; s < next.size(); ++s) states[s] = SelectV2(keep, next[s], states[s]);
    } else {
      states = std::move(next);
      output = states[0];
    }
    if (config_.return_sequences) outputs.push_back(*output);
  }
  state_keep_.clear();
  Tensor result = config_.return_sequences ? Pack(outputs, 1) : *output;
  return {std::move(result), std::move(states)};
}

SimpleRNN::SimpleRNN(int64_t units, RecurrentConfig config)
    : Recurrent("SimpleRNN", "simple_rnn", "simple_rnn_cell", units, 1, 1, std::move(config)) {}

std::vector<Tensor> SimpleRNN::Step(const Tensor& xp, const std::vector<Tensor>& states) const {
  return {config_.activation(Add(xp, MatMul(states[0], recurrent_kernel().value())))};
}

LSTM::LSTM(int64_t units, RecurrentConfig config)
    : Recurrent("LSTM", "lstm", "lstm_cell", units, 4, 2, std::move(config)),
      default_activations_(KerasActivationName(config_.recurrent_activation) == "sigmoid" &&
                           KerasActivationName(config_.activation) == "tanh") {}

Tensor LSTM::InitialBias(DType dtype) const {
  if (!config_.unit_forget_bias) return Recurrent::InitialBias(dtype);
  // Keras: concat(zeros(units), ones(units), zeros(2 * units)).
  return Concat({Tensor::Zeros(Shape{units_}, dtype), Ones(Shape{units_}, dtype),
                 Tensor::Zeros(Shape{2 * units_}, dtype)},
                0);
}

Tensor LSTM::ProjectInputs(const Tensor& rows) const {
  // Keras adds the bias after the recurrent term: z = (x K + h R) + b.
  return MatMul(rows, kernel().value());
}

std::vector<Tensor> LSTM::Step(const Tensor& xp, const std::vector<Tensor>& states) const {
  Tensor z = Add(xp, RecurrentProduct(states[0], recurrent_kernel().value()));
  if (bias() != nullptr) z = BiasAdd(z, bias()->value());
  if (default_activations_) {
    // Keras's defaults (sigmoid, tanh): the gate math in two fused ops,
    // the same values as the ops below (ops/fused_lstm_cell.h).
    const Tensor c = LstmCellState(z, states[1]);
    return {LstmCellOutput(z, c), c};
  }
  const Activation& ra = config_.recurrent_activation;
  const Tensor i = ra(Gate(z, 0));
  const Tensor f = ra(Gate(z, 1));
  const Tensor c = Add(Mul(f, states[1]), Mul(i, config_.activation(Gate(z, 2))));
  const Tensor o = ra(Gate(z, 3));
  return {Mul(o, config_.activation(c)), c};
}

GRU::GRU(int64_t units, RecurrentConfig config)
    : Recurrent("GRU", "gru", "gru_cell", units, 3, 1, std::move(config)) {}

Shape GRU::BiasShape() const {
  return config_.reset_after ? Shape{2, 3 * units_} : Shape{3 * units_};
}

Tensor GRU::ProjectInputs(const Tensor& rows) const {
  Tensor xk = MatMul(rows, kernel().value());
  if (bias() == nullptr) return xk;
  const Tensor b = bias()->value();
  return BiasAdd(xk, config_.reset_after ? Row(b, 0) : b);
}

std::vector<Tensor> GRU::Step(const Tensor& xp, const std::vector<Tensor>& states) const {
  const Tensor& h = states[0];
  const Tensor r_kernel = recurrent_kernel().value();
  const Activation& ra = config_.recurrent_activation;
  Tensor hh;
  Tensor z;
  if (config_.reset_after) {
    Tensor inner = RecurrentProduct(h, r_kernel);
    if (bias() != nullptr) inner = BiasAdd(inner, Row(bias()->value(), 1));
    z = ra(Add(Gate(xp, 0), Gate(inner, 0)));
    const Tensor r = ra(Add(Gate(xp, 1), Gate(inner, 1)));
    hh = config_.activation(Add(Gate(xp, 2), Mul(r, Gate(inner, 2))));
  } else {
    const Tensor inner = RecurrentProduct(h, Columns(r_kernel, 0, 2 * units_));
    z = ra(Add(Gate(xp, 0), Gate(inner, 0)));
    const Tensor r = ra(Add(Gate(xp, 1), Gate(inner, 1)));
    const Tensor rh = MatMul(Mul(r, StateForGate(h, 2)), Columns(r_kernel, 2 * units_, 3 * units_));
    hh = config_.activation(Add(Gate(xp, 2), rh));
  }
  // h = z * h + (1 - z) * hh, as Keras.
  const Tensor one = Ones(Shape{}, h.dtype());
  return {Add(Mul(z, h), Mul(Sub(one, z), hh))};
}

}  // namespace eager::layers
