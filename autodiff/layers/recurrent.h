#pragma once

// Recurrent layers: SimpleRNN, LSTM and GRU, as keras.layers (Keras 3 and
// tf_keras) compute them, built from ops the GradientTape differentiates.
//
//   eager::layers::LSTM lstm(32);                       // named "lstm"
//   eager::Tensor last = lstm(x);                       // x [batch, time, features]
//   eager::layers::GRU gru(16, {.return_sequences = true});
//   eager::Tensor seq = gru(x);                         // [batch, time, 16]
//   auto [out, states] = lstm.CallWithState(x);         // Keras's return_state
//
// Each layer holds, as Keras, a child "cell" with three variables, created on
// the first call (or Build()) in the input's dtype (float32 or float64):
//   kernel           [features, k * units]  glorot-uniform (fans of that shape)
//   recurrent_kernel [units, k * units]     orthogonal (Keras's: QR of a normal
//                                           draw, signs fixed by R's diagonal)
//   bias             [k * units]            zeros; LSTM's forget gate ones
//                                           (unit_forget_bias); GRU with
//                                           reset_after: [2, 3 * units]
// with k = 1 (SimpleRNN), 4 (LSTM, gates i, f, c, o) or 3 (GRU, gates z, r,
// h). The draws are seeded: `seed` if given, else one derived from the
// layer's name (as Dense); the recurrent kernel uses seed + 1. Variable
// names are tf_keras's, "<layer>/<cell>/kernel:0" with cell "simple_rnn_cell",
// "lstm_cell" or "gru_cell".
//
// Checkpoint edges, the same in every Keras layout (both lines save them so):
// "cell" -> "kernel", "recurrent_kernel", "bias". A deferred restoration gives
// the variables their saved values at creation (restore-on-create).
//
// Per step t (h, c the states, zeros at the start unless given), as Keras:
//   SimpleRNN  h = act((x_t K + b) + h R)
//   LSTM       z = (x_t K + h R) + b;  i, f, c~, o = split(z)
//              c = ra(f) * c + ra(i) * act(c~);  h = ra(o) * act(c)
//   GRU        xz, xr, xh = split(x_t K + b_in)
//     reset_after:  rz, rr, rh = split(h R + b_rec);  hh = act(xh + ra(r) * rh)
//     otherwise:    rz, rr = split(h R[:, :2u]);  hh = act(xh + (ra(r) * h) R[:, 2u:])
//              z = ra(xz + rz), r = ra(xr + rr);  h = z * h + (1 - z) * hh
// (act = activation, tanh by default; ra = recurrent_activation, sigmoid by
// default). go_backwards reads the steps last to first, and the returned
// sequence is in that reading order, as Keras's.
//
// Masks, as Keras's (autodiff/layer.h; Embedding(mask_zero) makes one, a
// Sequential passes it): mask [batch, time], bool (else nonzero is valid). A
// masked step leaves every state as it was, and its output repeats the last
// valid step's (zeros before the first), as Keras's backend rnn with
// zero_output_for_mask=False (Keras 3's default): the last output is the
// last valid step's h. go_backwards reads the mask backwards with the steps.
// The output's mask is the input's with return_sequences, else none.
//
// dropout and recurrent_dropout, as Keras 3's cells (default
// implementation 2) on TF: every call draws a keep mask for the inputs
// [batch, features] when dropout > 0, then one for the state [batch, units]
// when recurrent_dropout > 0, each as Dropout draws (the stateless Philox
// uniform of seed pair [seed mod (2^31 - 2), n], n counting the draws:
// Keras's SeedGenerator, which the layer's `seed` seeds), and the same masks
// serve every step. In training the inputs are multiplied by theirs (kept
// values scaled by 1 / (1 - rate)) and the previous output by the state's
// before the recurrent matmul. LSTM and GRU with recurrent_dropout > 0 do
// as Keras's implementation 1, which Keras then switches to: k masks of
// each kind (4 for LSTM, 3 for GRU), gate g's input and recurrent columns
// computed from the inputs and state under mask g (GRU's h = z * h + ...
// keeps the undropped h). Inference calls draw nothing but still count
// their draws, as Keras's (its masks are made before it looks at
// `training`). dropout_step() / set_dropout_step() read and move
// n. Training calls with dropout need a known batch and run eagerly only
// (in a graph: UnimplementedError).
//
// Not offered: stateful, unroll (the loop is always unrolled over the known
// time steps), cuDNN's layout.
//
// In a graph (Graph::AsDefault) the layers add TF's nodes (MatMul, BiasAdd,
// StridedSlice, Pack, Sigmoid, Tanh, ...) per step, the time steps known; the
// batch may be unknown for the forward pass, but graph gradients need it
// known (ops/ does not infer StridedSliceGrad's shape at run time yet).
//
// Errors name the layer: an input that is not [batch, time, features] with
// time >= 1, not float, or whose features or dtype differ from the built
// ones; initial states of the wrong count or shape (InvalidArgumentError).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autodiff/dense.h"  // Activation
#include "autodiff/layer.h"
#include "ops/unary_ops.h"

namespace eager::layers {

struct RecurrentConfig {
  eager::Activation activation = eager::Tanh;               // Keras's "tanh"
  eager::Activation recurrent_activation = eager::Sigmoid;  // LSTM, GRU gates
  bool use_bias = true;
  bool return_sequences = false;  // the whole sequence, else the last output
  bool go_backwards = false;
  double dropout = 0;                           // the inputs' drop rate in training, in [0, 1)
  double recurrent_dropout = 0;                 // the state's drop rate in training, in [0, 1)
  bool unit_forget_bias = true;                 // LSTM only: forget-gate bias starts at 1
  bool reset_after = true;                      // GRU only: reset gate after the matmul
  std::optional<uint64_t> seed = std::nullopt;  // default: derived from the name
  std::string name = "";                        // default: "lstm", "gru_1", ...
};

// The output (the sequence or the last step's) and the final states: [h] for
// SimpleRNN and GRU, [h, c] for LSTM (Keras's return_state list, after the
// output).
struct RecurrentOutput {
  Tensor output;
  std::vector<Tensor> states;
};

// The common part of the three layers; construct one of them.
class Recurrent : public Layer {
 public:
  ~Recurrent() override;

  // x: [batch, time, features]; builds on the first call. The output is
  // [batch, time, units] with return_sequences, else [batch, units].
  Tensor Call(const Tensor& x) override;
  // As Call, with the final states, starting from `initial_state` (empty:
  // zeros; else one [batch, units] tensor per state, in the layer's dtype),
  // skipping the steps `mask` ([batch, time]) marks invalid.
  // `training` applies dropout (see above).
  RecurrentOutput CallWithState(const Tensor& x, const std::vector<Tensor>& initial_state = {},
                                const std::optional<Tensor>& mask = std::nullopt,
                                bool training = false);
  // The training call: CallWithState(x, {}, nullopt, training).output.
  Tensor Call(const Tensor& x, bool training) override;
  // Layer's masked call: CallWithState(x, {}, mask).output.
  Tensor CallMasked(const Tensor& x, const std::optional<Tensor>& mask, bool training) override;
  // The mask with return_sequences, else nullopt (one output per sequence).
  std::optional<Tensor> ComputeMask(const Tensor& x, const std::optional<Tensor>& mask) override;
  // Keras's RNN: call(mask=...), and the mask passes on with return_sequences.
  KerasMaskRule KerasMasking() const override;

  // Creates the variables now. Throws FailedPreconditionError when already
  // built, InvalidArgumentError for input_dim <= 0 or a non-float dtype.
  void Build(int64_t input_dim, DType dtype = DType::kFloat32);

  bool built() const { return kernel_ != nullptr; }
  int64_t units() const { return units_; }
  const RecurrentConfig& config() const { return config_; }
  uint64_t seed() const { return seed_; }
  // The number of the next dropout mask draw (see above).
  int64_t dropout_step() const { return dropout_step_; }
  // REQUIRES: step >= 0 (else InvalidArgumentError naming the layer).
  void set_dropout_step(int64_t step);
  // The number of states: 2 for LSTM, else 1.
  int state_count() const { return state_count_; }
  // The child tracked as "cell", holding the variables.
  Module& cell() { return cell_; }
  // REQUIRES: built() (else FailedPreconditionError naming the layer).
  Variable& kernel() const;
  Variable& recurrent_kernel() const;
  // nullptr when use_bias is false. REQUIRES: built().
  Variable* bias() const;

 protected:
  // gates: k above; cell_name: the cell's name scope.
  Recurrent(std::string_view class_name, std::string_view default_name, std::string_view cell_name,
            int64_t units, int gates, int state_count, RecurrentConfig config);

  // The bias's initial value (zeros by default).
  virtual Tensor InitialBias(DType dtype) const;
  virtual Shape BiasShape() const;
  // x @ kernel (+ the input bias) for every step at once: [batch * time, k*u]
  // rows in [batch, time] order.
  virtual Tensor ProjectInputs(const Tensor& rows) const;
  // One step from the projected input xp [batch, k*u] and the states; returns
  // the new states (the first is the step's output).
  virtual std::vector<Tensor> Step(const Tensor& xp, const std::vector<Tensor>& states) const = 0;

  // Whether one state mask multiplies the previous output (SimpleRNN); else
  // recurrent_dropout means per-gate masks (Keras's implementation 1).
  virtual bool AppliesRecurrentDropout() const { return false; }

  // h @ kernel, or with per-gate state masks (LSTM and GRU with
  // recurrent_dropout in training) gate g's columns from (h * mask g).
  Tensor RecurrentProduct(const Tensor& h, const Tensor& kernel) const;
  // h under gate `gate`'s state mask (h itself without per-gate masks).
  Tensor StateForGate(const Tensor& h, int gate) const;

  // The gate-th block of `units` columns of a [rows, k*u] matrix.
  Tensor Gate(const Tensor& m, int gate) const;

  std::string who_;  // "LSTM 'lstm'", for messages
  int64_t units_;
  int gates_;
  int state_count_;
  RecurrentConfig config_;
  uint64_t seed_;
  int64_t dropout_step_ = 0;
  // The state's dropout masks during a training call (one, or one per gate).
  std::vector<Tensor> state_keep_;

 private:
  // Keras's dropout(ones(shape), rate) for draw `step`: 1 / (1 - rate) where
  // kept, else 0, in `dtype`.
  Tensor DropoutMask(const Shape& shape, double rate, int64_t step, DType dtype) const;

  // The cell as a plain Module whose AddVariable the layer can call.
  class Cell : public Module {
   public:
    using Module::AddVariable;
    using Module::Module;
  };

  std::string cell_name_;
  Cell cell_;
  Variable* kernel_ = nullptr;  // owned by cell_
  Variable* recurrent_kernel_ = nullptr;
  Variable* bias_ = nullptr;
};

// keras.layers.SimpleRNN: h = activation(x_t K + b + h R).
class SimpleRNN final : public Recurrent {
 public:
  // REQUIRES: units > 0 (else InvalidArgumentError).
  explicit SimpleRNN(int64_t units, RecurrentConfig config = {});

 protected:
  bool AppliesRecurrentDropout() const override { return true; }
  std::vector<Tensor> Step(const Tensor& xp, const std::vector<Tensor>& states) const override;
};

// keras.layers.LSTM (gates i, f, c, o; states [h, c]).
class LSTM final : public Recurrent {
 public:
  // REQUIRES: units > 0 (else InvalidArgumentError).
  explicit LSTM(int64_t units, RecurrentConfig config = {});

 protected:
  Tensor InitialBias(DType dtype) const override;
  Tensor ProjectInputs(const Tensor& rows) const override;
  std::vector<Tensor> Step(const Tensor& xp, const std::vector<Tensor>& states) const override;

 private:
  // Sigmoid gates and a tanh cell, Keras's defaults: Step runs the fused
  // cell ops.
  bool default_activations_;
};

// keras.layers.GRU (gates z, r, h), reset_after either way.
class GRU final : public Recurrent {
 public:
  // REQUIRES: units > 0 (else InvalidArgumentError).
  explicit GRU(int64_t units, RecurrentConfig config = {});

 protected:
  Shape BiasShape() const override;
  Tensor ProjectInputs(const Tensor& rows) const override;
  std::vector<Tensor> Step(const Tensor& xp, const std::vector<Tensor>& states) const override;
};

}  // namespace eager::layers
