#include "ops/logging_ops.h"

#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include "runtime/c_escape.h"
#include "runtime/errors.h"
#include "runtime/graph.h"
#include "runtime/half.h"

namespace eager {
namespace {

// TF's FloatToBuffer / DoubleToBuffer: the shortest of %.{DIG}g and
// %.{DIG+3}g that reads back as the same value.
template <typename T>
std::string PrintFloat(T v) {
  constexpr int kDigits = std::is_same_v<T, float> ? FLT_DIG : DBL_DIG;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*g", kDigits, static_cast<double>(v));
  const T back = std::is_same_v<T, float> ? static_cast<T>(std::strtof(buf, nullptr))
                                          : static_cast<T>(std::strtod(buf, nullptr));
  if (back != v && v == v) {
    std::snprintf(buf, sizeof(buf), "%.*g", kDigits + 3, static_cast<double>(v));
  }
  return buf;
}

template <typename T>
std::string PrintOne(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return CEscape(v);
  } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return PrintFloat(v);
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return PrintFloat(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";  // TF's StrCat of a bool: as an int
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else {  // complex: TF prints "(re,im)"
    return StrCat("(", PrintFloat(v.real()), ",", PrintFloat(v.imag()), ")");
  }
}

NodeOutputs RunAssert(const NodeContext& c) {
  if (c.inputs.empty() || !c.refs.empty()) {
    throw InvalidArgumentError(StrCat("node '", c.node.name, "' (Assert) takes a condition and ",
                                      "data values, has ", c.inputs.size(), " values and ",
                                      c.refs.size(), " references"));
  }
  const Tensor& cond = c.inputs[0];
  // TF's IsLegacyScalar: a scalar or a vector of one.
  const bool scalar = cond.rank() == 0 || (cond.rank() == 1 && cond.shape().dim(0) == 1);
  if (cond.dtype() != DType::kBool || !scalar) {
    throw InvalidArgumentError(StrCat("node '", c.node.name, "' (Assert): In[0] should be a ",
                                      "scalar bool, got ", cond.dtype(), " of shape ",
                                      cond.shape()));
  }
  if (cond.data<bool>()[0]) return {};
  const int64_t summarize = c.attrs.Has("summarize") ? c.attrs.GetInt("summarize") : 3;
  std::string msg = "assertion failed: ";
  for (size_t i = 1; i < c.inputs.size(); ++i) {
    msg += StrCat("[", SummarizeValue(c.inputs[i], summarize), "]");
    if (i + 1 < c.inputs.size()) msg += " ";
  }
  throw InvalidArgumentError(StrCat(msg, "\n\t [[{{node ", c.node.name, "}}]]"));
}

// TF's PrintOneDim (legacy form): dimension `dim` of the elements from
// *next on, one "[...]" per entry of an outer dimension, "..." where the
// limit cuts a last dimension short.
template <typename T>
void PrintDim(int dim, const Shape& shape, int64_t limit, std::span<const T> values, int64_t* next,
              std::string* out) {
  if (*next >= limit) return;
  const int64_t count = shape.dim(dim);
  if (dim == shape.rank() - 1) {
    for (int64_t i = 0; i < count; ++i) {
      if (*next >= limit) {
        if (dim != 0) *out += "...";  // at the top, SummarizeValue adds it
        return;
      }
      if (i > 0) *out += " ";
      *out += PrintOne(values[static_cast<size_t>((*next)++)]);
    }
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    const bool opened = *next < limit;
    if (opened) *out += "[";
    PrintDim(dim + 1, shape, limit, values, next, out);
    if (opened || *next < limit) *out += "]";
  }
}

}  // namespace

std::string SummarizeValue(const Tensor& t, int64_t max_entries) {
  const int64_t n = t.num_elements();
  const int64_t limit = max_entries < 0 ? n : std::min(max_entries, n);
  return VisitDType(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::span<const T> values = t.data<T>();
    if (t.rank() == 0) return PrintOne(values[0]);
    std::string out;
    int64_t next = 0;
    PrintDim<T>(0, t.shape(), limit, values, &next, &out);
    if (n > limit) out += "...";
    return out;
  });
}

const OpDef kAssertOp = {
    .type = "Assert", .num_inputs = OpDef::kVariadic, .run = RunAssert, .num_outputs = 0};

}  // namespace eager
