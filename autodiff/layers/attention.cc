#include "autodiff/layers/attention.h"

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/matmul.h"
#include "ops/nn_ops.h"
#include "ops/random_generator.h"
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

int64_t Elements(const Shape& s) {
  int64_t n = 1;
  for (int i = 0; i < s.rank(); ++i) n *= s.dim(i);
  return n;
}

}  // namespace

Variable& MultiHeadAttention::Projection::kernel() const {
  if (kernel_ == nullptr) {
    throw FailedPreconditionError(StrCat("MultiHeadAttention projection '", name(),
                                         "': kernel does not exist before the layer is built"));
  }
  return *kernel_;
}

void MultiHeadAttention::Projection::Create(const Shape& kernel_shape, const Shape& bias_shape,
                                            bool use_bias, uint64_t seed, DType dtype) {
  // Keras's fans: the dimensions before the last two are the receptive field.
  const int r = kernel_shape.rank();
  const double receptive = static_cast<double>(Elements(kernel_shape)) /
                           (kernel_shape.dim(r - 2) * kernel_shape.dim(r - 1));
  const double fan_in = receptive * kernel_shape.dim(r - 2);
  const double fan_out = receptive * kernel_shape.dim(r - 1);
  const double limit = std::sqrt(6.0 / (fan_in + fan_out));
  NameScope scope(NameScope::Current() + name() + "/");
  kernel_ = &AddVariable(KernelEdge(), RandomUniform(kernel_shape, seed, -limit, limit, dtype),
                         /*trainable=*/true, "kernel");
  if (use_bias) bias_ = &AddVariable("bias", Tensor::Zeros(bias_shape, dtype));
}

std::vector<Trackable::Child> MultiHeadAttention::Projection::Children() {
  std::vector<Child> children = Module::Children();
  for (Child& c : children) {
    if (c.object == kernel_) c.name = KernelEdge();
  }
  return children;
}

MultiHeadAttention::MultiHeadAttention(int64_t num_heads, int64_t key_dim,
                                       MultiHeadAttentionConfig config)
    : Layer(config.name.empty() ? UniqueObjectName("multi_head_attention") : config.name),
      who_(StrCat("MultiHeadAttention '", name(), "'")),
      num_heads_(num_heads),
      key_dim_(key_dim),
      value_dim_(config.value_dim > 0 ? config.value_dim : key_dim),
      config_(std::move(config)),
      seed_(config_.seed ? *config_.seed : SeedFromName(name())) {
  EAGER_CHECK(num_heads > 0 && key_dim > 0, who_, ": num_heads and key_dim must be positive, got ",
              num_heads, " and ", key_dim);
  EAGER_CHECK(config_.value_dim >= 0 && config_.output_dim >= 0, who_,
              ": value_dim and output_dim must be >= 0 (0: the default), got ", config_.value_dim,
              " and ", config_.output_dim);
  Track("_query_dense", query_);
  Track("_key_dense", key_);
  Track("_value_dense", value_);
  Track("_output_dense", output_);
}

MultiHeadAttention::~MultiHeadAttention() = default;

void MultiHeadAttention::Build(int64_t query_dim, int64_t value_dim, int64_t key_dim, DType dtype) {
  if (built()) {
    throw FailedPreconditionError(StrCat(who_, ": Build called on a layer already built"));
  }
  EAGER_CHECK(query_dim > 0 && value_dim > 0 && key_dim > 0, who_,
              ": input dimensions must be positive, got query ", query_dim, ", value ", value_dim,
              ", key ", key_dim);
  EAGER_CHECK(IsFloating(dtype), who_, ": variables must be float32 or float64, got ", dtype);
  const int64_t out = config_.output_dim > 0 ? config_.output_dim : query_dim;
  const bool bias = config_.use_bias;
  NameScope scope(NameScope::Current() + name() + "/");
  const int64_t n = num_heads_, h = key_dim_, hv = value_dim_;
  query_.Create(Shape{query_dim, n, h}, Shape{n, h}, bias, seed_, dtype);
  key_.Create(Shape{key_dim, n, h}, Shape{n, h}, bias, seed_ + 1, dtype);
  value_.Create(Shape{value_dim, n, hv}, Shape{n, hv}, bias, seed_ + 2, dtype);
  output_.Create(Shape{n, hv, out}, Shape{out}, bias, seed_ + 3, dtype);
  built_ = true;
}

Tensor MultiHeadAttention::Project(const Projection& p, const Tensor& x) const {
  const Shape& k = p.kernel().shape();
  const int64_t steps = x.shape().dim(1);  // the batch may be unknown (-1) in a graph
  Tensor y = MatMul(Reshape(x, {-1, k.dim(0)}),
                    Reshape(p.kernel().value(), {k.dim(0), k.dim(1) * k.dim(2)}));
  if (p.bias() != nullptr) y = BiasAdd(y, Reshape(p.bias()->value(), {k.dim(1) * k.dim(2)}));
  return Reshape(y, {-1, steps, k.dim(1), k.dim(2)});
}

Tensor MultiHeadAttention::Call(const Tensor& x) { return Attend(x, x); }

std::vector<Tensor> MultiHeadAttention::CallMany(const std::vector<Tensor>& inputs, bool training) {
  (void)training;  // no attention dropout: the same in both modes
  if (inputs.size() == 1) return {Call(inputs[0])};
  EAGER_CHECK(inputs.size() == 2 || inputs.size() == 3, who_,
              ": expected the inputs (query, value) or (query, value, key), got ", inputs.size(),
              " tensors");
  return {Attend(inputs[0], inputs[1],
                 inputs.size() == 3 ? std::optional<Tensor>(inputs[2]) : std::nullopt)};
}

std::vector<Tensor> MultiHeadAttention::CallManyMasked(
    const std::vector<Tensor>& inputs, const std::vector<std::optional<Tensor>>& masks,
    bool training) {
  if (inputs.size() == 1) return {CallMasked(inputs[0], masks.at(0), training)};
  EAGER_CHECK(inputs.size() == 2 || inputs.size() == 3, who_,
              ": expected the inputs (query, value) or (query, value, key), got ", inputs.size(),
              " tensors");
  const auto mask_of = [&](size_t i) { return i < masks.size() ? masks[i] : std::nullopt; };
  // Keras's _compute_attention_mask ANDs the key's mask with the value's
  // over the same keys.
  std::optional<Tensor> value_mask = mask_of(1);
  if (const std::optional<Tensor> key_mask = mask_of(2)) {
    const auto as_bool = [](const Tensor& m) {
      return m.dtype() == DType::kBool ? m : NotEqual(m, ZerosLike(m));
    };
    value_mask = value_mask ? LogicalAnd(as_bool(*value_mask), as_bool(*key_mask)) : *key_mask;
  }
  return {Attend(inputs[0], inputs[1],
                 inputs.size() == 3 ? std::optional<Tensor>(inputs[2]) : std::nullopt,
                 {.query_mask = mask_of(0), .value_mask = value_mask})};
}

Tensor MultiHeadAttention::CallMasked(const Tensor& x, const std::optional<Tensor>& mask,
                                      bool training) {
  (void)training;  // no attention dropout: the same in both modes
  return Attend(x, x, std::nullopt, {.query_mask = mask, .value_mask = mask});
}

Tensor MultiHeadAttention::Attend(const Tensor& query, const Tensor& value,
                                  const std::optional<Tensor>& key, const AttentionMasks& masks) {
  return AttendWithScores(query, value, key, masks).output;
}

std::optional<Tensor> MultiHeadAttention::CombinedMask(const AttentionMasks& masks,
                                                       const Shape& query,
                                                       const Shape& value) const {
  const int64_t batch = query.dim(0), t = query.dim(1), s = value.dim(1);
  // A mask's shape must be `want` (an unknown batch on either side fits).
  auto checked = [&](const Tensor& m, const char* what, const Shape& want) {
    bool fits = m.shape().rank() == want.rank();
    for (int i = 0; fits && i < want.rank(); ++i) {
      const int64_t got = m.shape().dim(i), expected = want.dim(i);
      fits = got == expected || (i == 0 && (got < 0 || expected < 0));
    }
    EAGER_CHECK(fits, who_, ": expected ", what, " of shape ", want, " for query ", query,
                " and value ", value, ", got ", m.shape());
    return m.dtype() == DType::kBool ? m : NotEqual(m, ZerosLike(m));
  };
  std::optional<Tensor> mask;
  auto add = [&](const Tensor& m) { mask = mask ? LogicalAnd(*mask, m) : m; };
  if (masks.query_mask) {
    add(ExpandDims(checked(*masks.query_mask, "query_mask", Shape{batch, t}), 2));  // [B, T, 1]
  }
  if (masks.value_mask) {
    add(ExpandDims(checked(*masks.value_mask, "value_mask", Shape{batch, s}), 1));  // [B, 1, S]
  }
  if (masks.use_causal_mask) {
    // Keras's: row index >= column index, [1, T, S].
    std::vector<int32_t> rows(t), cols(s);
    for (int64_t i = 0; i < t; ++i) rows[i] = static_cast<int32_t>(i);
    for (int64_t j = 0; j < s; ++j) cols[j] = static_cast<int32_t>(j);
    add(GreaterEqual(Tensor::FromVector<int32_t>(std::move(rows), Shape{1, t, 1}),
                     Tensor::FromVector<int32_t>(std::move(cols), Shape{1, 1, s})));
  }
  if (masks.attention_mask) {
    add(checked(*masks.attention_mask, "attention_mask", Shape{batch, t, s}));
  }
  // The broadcasts of [B, T, 1] and [1, 1, S] alone may not reach [B, T, S]:
  // SelectV2 broadcasts the rest against the scores.
  return mask;
}

AttentionOutput MultiHeadAttention::AttendWithScores(const Tensor& query, const Tensor& value,
                                                     const std::optional<Tensor>& key_input,
                                                     const AttentionMasks& masks) {
  const Tensor& key = key_input ? *key_input : value;
  for (const auto& [what, t] :
       {std::pair<const char*, const Tensor*>{"query", &query}, {"value", &value}, {"key", &key}}) {
    EAGER_CHECK(t->shape().rank() == 3 && IsFloating(t->dtype()), who_, ": expected the ", what,
                " as a float [batch, length, dim], got ", t->shape(), " of ", t->dtype());
  }
  EAGER_CHECK(query.shape().dim(0) == value.shape().dim(0) &&
                  key.shape().dim(0) == value.shape().dim(0) &&
                  key.shape().dim(1) == value.shape().dim(1),
              who_, ": query, value and key must share the batch, and key and value the length; ",
              "got query ", query.shape(), ", value ", value.shape(), ", key ", key.shape());
  EAGER_CHECK(query.dtype() == value.dtype() && key.dtype() == value.dtype(), who_,
              ": query, value and key must share a dtype, got ", query.dtype(), ", ", value.dtype(),
              ", ", key.dtype());
  if (!built())
    Build(query.shape().dim(2), value.shape().dim(2), key.shape().dim(2), query.dtype());
  const Variable& qk = query_.kernel();
  EAGER_CHECK(query.shape().dim(2) == qk.shape().dim(0) &&
                  value.shape().dim(2) == value_.kernel().shape().dim(0) &&
                  key.shape().dim(2) == key_.kernel().shape().dim(0) && query.dtype() == qk.dtype(),
              who_, ": built for query, value and key dims ", qk.shape().dim(0), ", ",
              value_.kernel().shape().dim(0), ", ", key_.kernel().shape().dim(0), " of ",
              qk.dtype(), "; got ", query.shape(), ", ", value.shape(), ", ", key.shape(), " of ",
              query.dtype());
  std::optional<NameScope> scope;
  if (Graph::Current() != nullptr) scope.emplace(NameScope::Current() + name() + "/");
  const int64_t steps = query.shape().dim(1);
  // Keras scales the projected query, in its dtype.
  const Tensor scale =
      Cast(Tensor::Scalar<double>(1.0 / std::sqrt(static_cast<double>(key_dim_))), query.dtype());
  const Tensor q = Transpose(Mul(Project(query_, query), scale), {0, 2, 1, 3});  // [B, N, T, H]
  const Tensor k = Transpose(Project(key_, key), {0, 2, 1, 3});                  // [B, N, S, H]
  const Tensor v = Transpose(Project(value_, value), {0, 2, 1, 3});              // [B, N, S, Hv]
  Tensor logits = BatchMatMulV2(q, k, false, /*adj_y=*/true);                    // [B, N, T, S]
  if (const std::optional<Tensor> mask = CombinedMask(masks, query.shape(), value.shape())) {
    // Keras's masked softmax: where(mask, logits, -1e9), the mask [B, 1, T, S]
    // broadcast over the heads.
    logits =
        SelectV2(ExpandDims(*mask, 1), logits, Cast(Tensor::Scalar<double>(-1e9), logits.dtype()));
  }
  Tensor scores = Softmax(logits);
  // [B, N, T, Hv] -> [B, T, N * Hv] -> through the output kernel [N * Hv, E].
  const Tensor attended =
      Reshape(Transpose(BatchMatMulV2(scores, v), {0, 2, 1, 3}), {-1, num_heads_ * value_dim_});
  const Shape& ok = output_.kernel().shape();
  Tensor y =
      MatMul(attended, Reshape(output_.kernel().value(), {ok.dim(0) * ok.dim(1), ok.dim(2)}));
  if (output_.bias() != nullptr) y = BiasAdd(y, output_.bias()->value());
  return {Reshape(y, {-1, steps, ok.dim(2)}), std::move(scores)};
}

}  // namespace eager::layers
