#include "ops/variable_scope.h"

#include <cmath>
#include <cstdint>
#include <memory>

#include "ops/random_generator.h"
#include "runtime/errors.h"
#include "runtime/graph.h"

namespace eager {
namespace {

thread_local std::string current_name;
thread_local VariableReuse current_reuse = VariableReuse::kInherit;

// Python's tuple spelling TF's messages use: "(3,)", "(2, 3)", "()".
std::string PythonShape(const Shape& shape) {
  if (shape.unknown_rank()) return "<unknown>";
  std::string out = "(";
  for (int i = 0; i < shape.rank(); ++i) {
    if (i > 0) out += ", ";
    out += shape.dim(i) < 0 ? std::string("None") : std::to_string(shape.dim(i));
  }
  return out + (shape.rank() == 1 ? ",)" : ")");
}

// FNV-1a of the full name: a seed the same on every run and platform.
uint64_t SeedOf(std::string_view name) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// TF's glorot_uniform_initializer (init_ops' _compute_fans).
Tensor GlorotUniform(const Shape& shape, DType dtype, std::string_view full_name) {
  double fan_in = 1, fan_out = 1;
  if (shape.rank() == 1) {
    fan_in = fan_out = static_cast<double>(shape.dim(0));
  } else if (shape.rank() >= 2) {
    double receptive = 1;
    for (int i = 0; i < shape.rank() - 2; ++i) receptive *= static_cast<double>(shape.dim(i));
    fan_in = static_cast<double>(shape.dim(shape.rank() - 2)) * receptive;
    fan_out = static_cast<double>(shape.dim(shape.rank() - 1)) * receptive;
  }
  const double limit = std::sqrt(6.0 / std::max(1.0, fan_in + fan_out));
  return RandomUniform(shape, SeedOf(full_name), -limit, limit, dtype);
}

}  // namespace

VariableScope::VariableScope(std::string_view name, VariableReuse reuse)
    : previous_name_(current_name), previous_reuse_(current_reuse), name_scope_([&] {
        EAGER_CHECK(!name.empty() && name.front() != '/' && name.back() != '/',
                    "VariableScope: the name must be non-empty, without a leading or trailing "
                    "'/', got '",
                    name, "'");
        return name;
      }()) {
  current_name =
      previous_name_.empty() ? std::string(name) : previous_name_ + "/" + std::string(name);
  if (reuse != VariableReuse::kInherit) current_reuse = reuse;
}

VariableScope::~VariableScope() {
  current_name = previous_name_;
  current_reuse = previous_reuse_;
}

const std::string& VariableScope::CurrentName() { return current_name; }

std::string VariableScope::CurrentPrefix() {
  return current_name.empty() ? std::string() : current_name + "/";
}

VariableReuse VariableScope::CurrentReuse() { return current_reuse; }

Variable& GetVariable(std::string_view name, std::optional<Shape> shape,
                      const GetVariableOptions& options) {
  Graph* graph = Graph::Current();
  if (graph == nullptr) {
    throw FailedPreconditionError(StrCat("GetVariable('", name,
                                         "'): TF1's variable store lives in a graph; call it "
                                         "inside Graph::AsDefault"));
  }
  EAGER_CHECK(!name.empty(), "GetVariable: the name must not be empty");
  const std::string full_name = VariableScope::CurrentPrefix() + std::string(name);
  const VariableReuse reuse = VariableScope::CurrentReuse();
  if (options.initial_value) {
    EAGER_CHECK(options.initial_value->dtype() == options.dtype, "GetVariable('", full_name,
                "'): the initial value is ", options.initial_value->dtype(), ", the dtype ",
                options.dtype);
    EAGER_CHECK(!shape || shape->IsCompatibleWith(options.initial_value->shape()), "GetVariable('",
                full_name, "'): the initial value has shape ", options.initial_value->shape(),
                ", the shape given is ", *shape);
  }
  if (Variable* stored = graph->StoredVariable(full_name)) {
    if (reuse == VariableReuse::kInherit) {
      throw InvalidArgumentError(StrCat("Variable ", full_name,
                                        " already exists, disallowed. Did you mean to set "
                                        "reuse=True or reuse=tf.AUTO_REUSE in VarScope?"));
    }
    if (shape && !shape->IsCompatibleWith(stored->shape())) {
      throw InvalidArgumentError(StrCat("Trying to share variable ", full_name,
                                        ", but specified shape ", PythonShape(*shape),
                                        " and found shape ", PythonShape(stored->shape()), "."));
    }
    if (options.dtype != stored->dtype()) {
      throw InvalidArgumentError(StrCat("Trying to share variable ", full_name,
                                        ", but specified dtype ", options.dtype,
                                        " and found dtype ", stored->dtype(), "."));
    }
    return *stored;
  }
  if (reuse == VariableReuse::kReuse) {
    throw InvalidArgumentError(StrCat("Variable ", full_name,
                                      " does not exist, or was not created with "
                                      "tf.get_variable(). Did you mean to set "
                                      "reuse=tf.AUTO_REUSE in VarScope?"));
  }
  const Shape& value_shape =
      options.initial_value ? options.initial_value->shape() : shape.value_or(Shape::UnknownRank());
  if (!options.initial_value && (!shape || !shape->IsFullyDefined())) {
    throw InvalidArgumentError(
        shape ? StrCat("Shape of a new variable (", full_name,
                       ") must be fully defined, but instead was ", PythonShape(*shape), ".")
              : StrCat("Variable ", full_name,
                       " did not get an initializer, so its `shape` argument must be specified."));
  }
  Tensor initial = options.initial_value ? *options.initial_value
                   : IsFloating(options.dtype)
                       ? GlorotUniform(value_shape, options.dtype, full_name)
                       : Tensor::Zeros(value_shape, options.dtype);
  // The exact scope, not the uniquified name scope this VariableScope opened.
  const size_t slash = full_name.rfind('/');
  std::optional<NameScope> exact;
  exact.emplace(slash == std::string::npos ? std::string("/") : full_name.substr(0, slash + 1));
  const std::string base = slash == std::string::npos ? full_name : full_name.substr(slash + 1);
  auto variable = std::make_unique<Variable>(initial, base, options.trainable);
  exact.reset();
  EAGER_CHECK(variable->shared_name() == full_name, "GetVariable('", full_name,
              "'): the node name is taken by another op (the variable would be '",
              variable->shared_name(), "')");
  return graph->StoreVariable(std::move(variable));
}

}  // namespace eager
