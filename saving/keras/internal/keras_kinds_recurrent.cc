// Registrations of the recurrent layers (SimpleRNN, LSTM, GRU) and
// MultiHeadAttention (keras_layer_kinds.h). Keras 3 keeps their variables
// in sublayer groups: an RNN's in "cell" (kernel, recurrent_kernel, bias),
// MultiHeadAttention's in "query_dense", "key_dense", "value_dense" and
// "output_dense" (kernel, bias each), beside the weightless "_softmax" and
// "_dropout_layer". Config keys and orders are those keras 3.15's
// get_config() and build() write (checked with h5py on files TF 2.21's
// Keras saves).

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autodiff/layers/attention.h"
#include "autodiff/layers/recurrent.h"
#include "runtime/errors.h"
#include "saving/keras/internal/keras_layer_kinds.h"

namespace eager::keras_internal {
namespace {

using layers::GRU;
using layers::LSTM;
using layers::MultiHeadAttention;
using layers::Recurrent;
using layers::RecurrentConfig;
using layers::SimpleRNN;

// ---- SimpleRNN, LSTM, GRU ----

std::vector<Variable*> RecurrentVariables(Layer& layer) {
  auto& r = static_cast<Recurrent&>(layer);
  std::vector<Variable*> vars{&r.kernel(), &r.recurrent_kernel()};
  if (r.bias() != nullptr) vars.push_back(r.bias());
  return vars;
}

template <typename R>
std::vector<KerasSublayer> CellOf(const Layer& layer, const char* cell_name) {
  const auto& r = static_cast<const R&>(layer);
  return {{"cell", cell_name, r.config().use_bias ? 3 : 2}};
}

// Gates per kind: the kernels are [input, gates * units], [units, gates * units].
int GatesOf(const Recurrent& r) {
  if (dynamic_cast<const LSTM*>(&r) != nullptr) return 4;
  if (dynamic_cast<const GRU*>(&r) != nullptr) return 3;
  return 1;
}

void RecurrentBuild(Layer& layer, const std::vector<Shape>& shapes, DType dtype) {
  auto& r = static_cast<Recurrent&>(layer);
  if (r.built()) return;
  const std::string what = StrCat(r.name(), " (", r.units(), " units)");
  ExpectCount(what, shapes, r.config().use_bias ? 3 : 2);
  const int64_t width = GatesOf(r) * r.units();
  ExpectShape(what + " kernel", shapes[0], {-1, width});
  ExpectShape(what + " recurrent_kernel", shapes[1], {r.units(), width});
  if (r.config().use_bias) {
    // GRU with reset_after keeps an input and a recurrent bias: [2, width].
    const bool two = dynamic_cast<const GRU*>(&r) != nullptr && r.config().reset_after;
    ExpectShape(what + " bias", shapes[2],
                two ? std::vector<int64_t>{2, width} : std::vector<int64_t>{width});
  }
  r.Build(shapes[0].dim(0), dtype);
}

void RecurrentToConfig(Layer& layer, Json& c) {
  auto& r = static_cast<Recurrent&>(layer);
  const RecurrentConfig& cfg = r.config();
  const bool simple = dynamic_cast<SimpleRNN*>(&r) != nullptr;
  c["return_sequences"] = cfg.return_sequences;
  c["return_state"] = false;
  c["go_backwards"] = cfg.go_backwards;
  c["stateful"] = false;
  c["unroll"] = false;
  c["zero_output_for_mask"] = false;
  c["units"] = r.units();
  c["activation"] = ActivationName(cfg.activation, r.name());
  if (!simple) c["recurrent_activation"] = ActivationName(cfg.recurrent_activation, r.name());
  c["use_bias"] = cfg.use_bias;
  c["kernel_initializer"] = GlorotUniformJson();
  c["recurrent_initializer"] = InitializerJson("Orthogonal", {{"seed", nullptr}, {"gain", 1.0}});
  c["bias_initializer"] = InitializerJson("Zeros");
  if (dynamic_cast<LSTM*>(&r) != nullptr) c["unit_forget_bias"] = cfg.unit_forget_bias;
  for (const char* k :
       {"kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "activity_regularizer",
        "kernel_constraint", "recurrent_constraint", "bias_constraint"}) {
    c[k] = nullptr;
  }
  c["dropout"] = cfg.dropout;
  c["recurrent_dropout"] = cfg.recurrent_dropout;
  if (dynamic_cast<GRU*>(&r) != nullptr) c["reset_after"] = cfg.reset_after;
  // eager's generator is not Keras's: no seed means the same to both.
  if (!simple) c["seed"] = nullptr;
}

// The arguments the three share; `gated`: LSTM and GRU.
RecurrentConfig ReadRecurrent(ConfigReader& r, const std::string& name, bool gated) {
  RecurrentConfig cfg;
  cfg.name = name;
  cfg.return_sequences = r.Bool("return_sequences", false);
  cfg.go_backwards = r.Bool("go_backwards", false);
  r.Expect("return_state", {Json(false)});  // a list of outputs: use CallWithState
  r.Expect("stateful", {Json(false)});
  r.Expect("zero_output_for_mask", {Json(false)});
  r.Ignore("unroll");  // the same values either way
  cfg.activation = r.ActivationFn("activation");
  if (!cfg.activation) r.Unsupported("activation", "is linear; eager's RNNs take a function");
  if (gated) {
    cfg.recurrent_activation = r.ActivationFn("recurrent_activation");
    if (!cfg.recurrent_activation) {
      r.Unsupported("recurrent_activation", "is linear; eager's RNNs take a function");
    }
  }
  cfg.use_bias = r.Bool("use_bias", true);
  for (const char* k : {"kernel_initializer", "recurrent_initializer", "bias_initializer"}) {
    r.Ignore(k);  // the weights come from the file
  }
  cfg.dropout = r.Float("dropout", 0, std::nextafter(1.0, 0.0), 0.0);
  cfg.recurrent_dropout = r.Float("recurrent_dropout", 0, std::nextafter(1.0, 0.0), 0.0);
  if (r.Has("seed")) {
    cfg.seed = static_cast<uint64_t>(r.Int("seed", 0, std::numeric_limits<int64_t>::max(), 0));
  }
  return cfg;
}

std::unique_ptr<Layer> SimpleRNNFromConfig(ConfigReader& r, const std::string& name) {
  const int64_t units = r.Int("units", 1, kMaxConfigInt, std::nullopt);
  return std::make_unique<SimpleRNN>(units, ReadRecurrent(r, name, false));
}

std::unique_ptr<Layer> LSTMFromConfig(ConfigReader& r, const std::string& name) {
  const int64_t units = r.Int("units", 1, kMaxConfigInt, std::nullopt);
  RecurrentConfig cfg = ReadRecurrent(r, name, true);
  cfg.unit_forget_bias = r.Bool("unit_forget_bias", true);
  return std::make_unique<LSTM>(units, cfg);
}

std::unique_ptr<Layer> GRUFromConfig(ConfigReader& r, const std::string& name) {
  const int64_t units = r.Int("units", 1, kMaxConfigInt, std::nullopt);
  RecurrentConfig cfg = ReadRecurrent(r, name, true);
  cfg.reset_after = r.Bool("reset_after", true);
  return std::make_unique<GRU>(units, cfg);
}

// ---- MultiHeadAttention ----

std::vector<Variable*> AttentionVariables(Layer& layer) {
  auto& m = static_cast<MultiHeadAttention&>(layer);
  std::vector<Variable*> vars;
  for (MultiHeadAttention::Projection* p :
       {&m.query_dense(), &m.key_dense(), &m.value_dense(), &m.output_dense()}) {
    vars.push_back(&p->kernel());
    if (p->bias() != nullptr) vars.push_back(p->bias());
  }
  return vars;
}

std::vector<KerasSublayer> AttentionSublayers(const Layer& layer) {
  const int each = static_cast<const MultiHeadAttention&>(layer).config().use_bias ? 2 : 1;
  return {{"query_dense", "query", each}, {"key_dense", "key", each},
          {"value_dense", "value", each}, {"output_dense", "attention_output", each},
          {"_softmax", "softmax", 0},     {"_dropout_layer", "dropout", 0}};
}

void AttentionBuild(Layer& layer, const std::vector<Shape>& shapes, DType dtype) {
  auto& m = static_cast<MultiHeadAttention&>(layer);
  if (m.built()) return;
  const std::string what = StrCat("MultiHeadAttention '", m.name(), "'");
  const bool bias = m.config().use_bias;
  const size_t each = bias ? 2 : 1;
  ExpectCount(what, shapes, 4 * each);
  const int64_t n = m.num_heads(), h = m.key_dim(), v = m.value_dim();
  ExpectShape(what + " query_dense kernel", shapes[0], {-1, n, h});
  ExpectShape(what + " key_dense kernel", shapes[each], {-1, n, h});
  ExpectShape(what + " value_dense kernel", shapes[2 * each], {-1, n, v});
  const int64_t out = m.config().output_dim > 0 ? m.config().output_dim : shapes[0].dim(0);
  ExpectShape(what + " output_dense kernel", shapes[3 * each], {n, v, out});
  if (bias) {
    ExpectShape(what + " query_dense bias", shapes[1], {n, h});
    ExpectShape(what + " key_dense bias", shapes[3], {n, h});
    ExpectShape(what + " value_dense bias", shapes[5], {n, v});
    ExpectShape(what + " output_dense bias", shapes[7], {out});
  }
  m.Build(shapes[0].dim(0), shapes[2 * each].dim(0), shapes[each].dim(0), dtype);
}

void AttentionToConfig(Layer& layer, Json& c) {
  auto& m = static_cast<MultiHeadAttention&>(layer);
  c["num_heads"] = m.num_heads();
  c["key_dim"] = m.key_dim();
  c["value_dim"] = m.value_dim();
  c["dropout"] = 0.0;
  c["use_bias"] = m.config().use_bias;
  c["use_gate"] = false;
  c["output_shape"] = m.config().output_dim > 0 ? Json(m.config().output_dim) : Json(nullptr);
  c["attention_axes"] = Json::array({1});
  c["sliding_window"] = nullptr;
  c["kernel_initializer"] = GlorotUniformJson();
  c["bias_initializer"] = InitializerJson("Zeros");
  for (const char* k : {"kernel_regularizer", "bias_regularizer", "activity_regularizer",
                        "kernel_constraint", "bias_constraint", "seed"}) {
    c[k] = nullptr;
  }
}

std::unique_ptr<Layer> AttentionFromConfig(ConfigReader& r, const std::string& name) {
  const int64_t heads = r.Int("num_heads", 1, kMaxConfigInt, std::nullopt);
  const int64_t key_dim = r.Int("key_dim", 1, kMaxConfigInt, std::nullopt);
  layers::MultiHeadAttentionConfig cfg;
  cfg.name = name;
  cfg.value_dim = r.Int("value_dim", 1, kMaxConfigInt, key_dim);
  cfg.use_bias = r.Bool("use_bias", true);
  cfg.output_dim = r.Int("output_shape", 1, kMaxConfigInt, 0);
  r.Expect("dropout", {Json(0.0), Json(0)});  // eager's attention has no dropout
  r.Expect("use_gate", {Json(false)});
  r.Expect("attention_axes", {Json::array({1}), Json(1), Json(-2)});
  r.Expect("sliding_window", {});
  r.Ignore("kernel_initializer");
  r.Ignore("bias_initializer");
  if (r.Has("seed")) {
    cfg.seed = static_cast<uint64_t>(r.Int("seed", 0, std::numeric_limits<int64_t>::max(), 0));
  }
  return std::make_unique<MultiHeadAttention>(heads, key_dim, cfg);
}

}  // namespace

std::vector<KerasLayerKind> RecurrentKinds() {
  KerasLayerKind simple{"SimpleRNN",    "simple_rnn",      Is<SimpleRNN>,      RecurrentVariables,
                        RecurrentBuild, RecurrentToConfig, SimpleRNNFromConfig};
  simple.sublayers = [](const Layer& l) { return CellOf<SimpleRNN>(l, "simple_rnn_cell"); };
  KerasLayerKind lstm{
      "LSTM",        "lstm", Is<LSTM>, RecurrentVariables, RecurrentBuild, RecurrentToConfig,
      LSTMFromConfig};
  lstm.sublayers = [](const Layer& l) { return CellOf<LSTM>(l, "lstm_cell"); };
  KerasLayerKind gru{
      "GRU", "gru", Is<GRU>, RecurrentVariables, RecurrentBuild, RecurrentToConfig, GRUFromConfig};
  gru.sublayers = [](const Layer& l) { return CellOf<GRU>(l, "gru_cell"); };
  KerasLayerKind mha{"MultiHeadAttention", "multi_head_attention", Is<MultiHeadAttention>,
                     AttentionVariables,   AttentionBuild,         AttentionToConfig,
                     AttentionFromConfig};
  mha.sublayers = AttentionSublayers;
  return {simple, lstm, gru, mha};
}

}  // namespace eager::keras_internal
