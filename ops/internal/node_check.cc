#include "ops/internal/node_check.h"

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "runtime/op_signature.h"

namespace eager::internal {
namespace {

std::string Where(const Node& node) { return StrCat("node '", node.name, "' (", node.op, ")"); }

bool IsTrue(const AttrValue& v) { return std::get_if<bool>(&v) != nullptr && std::get<bool>(v); }
bool IsBool(const AttrValue& v) { return std::holds_alternative<bool>(v); }
bool IsEmptyList(const AttrValue& v) {
  const auto* ints = std::get_if<std::vector<int64_t>>(&v);
  return ints != nullptr && ints->empty();
}

// An attribute of a newer TF than the signature table's (TF 1.14), and the
// values at which eager computes what TF computes.
struct KnownExtraAttr {
  std::string_view op;
  std::string_view attr;
  bool (*computed)(const AttrValue&);
  std::string_view computed_values;  // for the message
};
constexpr KnownExtraAttr kKnownExtraAttrs[] = {
    // TF 2.x: false makes Equal of incompatible shapes a false scalar.
    {"Equal", "incompatible_shape_error", IsTrue, "true"},
    // TF 2.12+: hints for the gradient's MatMuls, same product.
    {"MatMul", "grad_a", IsBool, "any bool"},
    {"MatMul", "grad_b", IsBool, "any bool"},
    // TF 2.x: the paddings of padding 'EXPLICIT', which eager lacks.
    {"MaxPool", "explicit_paddings", IsEmptyList, "[]"},
    {"MaxPoolGrad", "explicit_paddings", IsEmptyList, "[]"},
    {"DepthwiseConv2dNative", "explicit_paddings", IsEmptyList, "[]"},
    {"DepthwiseConv2dNativeBackpropInput", "explicit_paddings", IsEmptyList, "[]"},
    {"DepthwiseConv2dNativeBackpropFilter", "explicit_paddings", IsEmptyList, "[]"},
};

void CheckExtraAttr(const Node& node, const std::string& name, const AttrValue& value) {
  for (const KnownExtraAttr& known : kKnownExtraAttrs) {
    if (known.op != node.op || known.attr != name) continue;
    if (known.computed(value)) return;
    throw UnimplementedError(StrCat(Where(node), " has attribute '", name,
                                    "' at a value eager does not implement (only ",
                                    known.computed_values, ")"));
  }
  throw UnimplementedError(StrCat(Where(node), " has attribute '", name,
                                  "', which TF's signature of ", node.op,
                                  " as eager knows it does not define; eager does not "
                                  "implement it"));
}

template <typename T>
bool Holds(const AttrValue& v) {
  return AttrAs<T>(&v) != nullptr;
}

// Whether `value` is of the kind the signature's `type` names.
bool OfKind(std::string_view type, const AttrValue& value) {
  // The importer makes an empty list of any kind an empty list(int).
  const auto* ints = std::get_if<std::vector<int64_t>>(&value);
  if (type.starts_with("list(") && ints != nullptr && ints->empty()) return true;
  if (type == "type") return Holds<DType>(value);
  if (type == "int") return Holds<int64_t>(value);
  if (type == "bool") return Holds<bool>(value);
  if (type == "float") return Holds<double>(value);
  if (type == "string") return Holds<std::string>(value);
  if (type == "shape") return Holds<Shape>(value);
  if (type == "tensor") return Holds<Tensor>(value);
  if (type == "list(int)") return Holds<std::vector<int64_t>>(value);
  if (type == "list(type)") return Holds<std::vector<DType>>(value);
  if (type == "list(string)") return Holds<std::vector<std::string>>(value);
  if (type == "list(shape)") return Holds<std::vector<Shape>>(value);
  return true;  // a kind eager's importer has no value type for: not judged here
}

void CheckAttr(const Node& node, const OpAttrSignature& sig, const AttrValue& value) {
  if (!OfKind(sig.type, value)) {
    throw InvalidArgumentError(
        StrCat(Where(node), ": attribute '", sig.name, "' must be of kind ", sig.type));
  }
  if (const DType* dtype = std::get_if<DType>(&value); dtype && !sig.allowed_types.empty()) {
    const int number = TfDataType(*dtype);
    if (std::find(sig.allowed_types.begin(), sig.allowed_types.end(), number) ==
        sig.allowed_types.end()) {
      std::string allowed;
      for (int t : sig.allowed_types)
        allowed += StrCat(allowed.empty() ? "" : ", ", TfDataTypeName(t));
      throw InvalidArgumentError(StrCat(Where(node), ": value for attr '", sig.name, "' of ",
                                        *dtype,
                                        " is not in the list of allowed values: ", allowed));
    }
  }
  if (const auto* s = std::get_if<std::string>(&value); s && !sig.allowed_strings.empty()) {
    if (std::find(sig.allowed_strings.begin(), sig.allowed_strings.end(), *s) ==
        sig.allowed_strings.end()) {
      throw InvalidArgumentError(StrCat(Where(node), ": value for attr '", sig.name, "' of \"", *s,
                                        "\" is not in the list of allowed values"));
    }
  }
  if (sig.has_minimum) {
    int64_t n = sig.minimum;
    if (const int64_t* i = std::get_if<int64_t>(&value)) n = *i;
    if (const auto* l = std::get_if<std::vector<int64_t>>(&value))
      n = static_cast<int64_t>(l->size());
    if (const auto* l = std::get_if<std::vector<DType>>(&value))
      n = static_cast<int64_t>(l->size());
    if (n < sig.minimum) {
      throw InvalidArgumentError(StrCat(Where(node), ": value for attr '", sig.name, "' of ", n,
                                        " must be at least minimum ", sig.minimum));
    }
  }
}

// How many data inputs the signature takes with these attributes.
int64_t ExpectedInputs(const OpSignature& sig, const Attrs& attrs) {
  int64_t n = 0;
  for (const OpArgSignature& arg : sig.inputs) {
    if (!arg.number_attr.empty()) {
      const AttrValue* v = attrs.Find(arg.number_attr);
      n += v != nullptr && Holds<int64_t>(*v) ? std::get<int64_t>(*v) : 0;
    } else if (!arg.type_list_attr.empty()) {
      const AttrValue* v = attrs.Find(arg.type_list_attr);
      n += v != nullptr && Holds<std::vector<DType>>(*v)
               ? static_cast<int64_t>(std::get<std::vector<DType>>(*v).size())
               : 0;
    } else {
      ++n;
    }
  }
  return n;
}

}  // namespace

void CheckNode(const Node& node, const OpDef& op, const Attrs& attrs) {
  const OpSignature* sig = FindOpSignature(node.op);
  if (sig == nullptr) sig = FindOpSignature(op.type);
  if (sig == nullptr) return;
  for (const auto& [name, value] : attrs.items()) {
    if (name.starts_with('_')) continue;
    const OpAttrSignature* a = sig->FindAttr(name);
    if (a == nullptr) {
      CheckExtraAttr(node, name, value);
      continue;
    }
    CheckAttr(node, *a, value);
  }
  // A function call's type lists (Tin, Tout) and an _Arg's T may hold
  // DT_RESOURCE, which eager has no DType for (a handle travels as its
  // Variable): the importer drops them, and the call's kernel checks its
  // inputs against the function's own signature instead.
  const bool handles = op.handle_inputs || op.type == "_Arg";
  for (const OpAttrSignature& a : sig->attrs) {
    if (handles && (a.type == "type" || a.type == "list(type)" || a.type == "list(shape)")) {
      continue;  // output_shapes may hold unknown ranks, which the importer drops too
    }
    if (!attrs.Has(a.name)) {
      throw InvalidArgumentError(StrCat(Where(node), " is missing attribute '", a.name, "' (",
                                        a.type,
                                        "), or has a value of it that eager cannot represent"));
    }
  }
  const int64_t data_inputs =
      std::count_if(node.inputs.begin(), node.inputs.end(),
                    [](const std::string& in) { return !in.starts_with('^'); });
  const int64_t expected = ExpectedInputs(*sig, attrs);
  if (data_inputs != expected && !handles) {
    std::string counts;
    for (const OpArgSignature& arg : sig->inputs) {
      if (!arg.number_attr.empty()) {
        counts += StrCat(" (", arg.number_attr, " = ", attrs.GetInt(arg.number_attr), ")");
      }
    }
    throw InvalidArgumentError(StrCat(Where(node), " has ", data_inputs,
                                      " data inputs; its signature takes ", expected, counts));
  }
  if (node.op == "Const") {
    const Tensor& value = attrs.Get<Tensor>("value");
    if (value.dtype() != attrs.GetType("dtype")) {
      throw InvalidArgumentError(StrCat(Where(node), ": attribute 'dtype' is ",
                                        attrs.GetType("dtype"), " but its 'value' is a ",
                                        value.dtype(), " tensor"));
    }
  }
  if (const AttrValue* padding = attrs.Find("padding");
      padding != nullptr && std::get<std::string>(*padding) == "EXPLICIT") {
    throw UnimplementedError(StrCat(Where(node),
                                    ": attribute 'padding' = 'EXPLICIT' (with "
                                    "'explicit_paddings') is not implemented; eager computes "
                                    "'SAME' and 'VALID'"));
  }
  if (const AttrValue* paddings = attrs.Find("explicit_paddings");
      paddings != nullptr && !IsEmptyList(*paddings)) {
    throw UnimplementedError(StrCat(Where(node),
                                    ": attribute 'explicit_paddings' is not empty; "
                                    "eager computes only padding 'SAME' and 'VALID'"));
  }
  if (node.op == "ApplyAdam" && attrs.GetBool("use_nesterov")) {
    throw UnimplementedError(StrCat(Where(node),
                                    ": attribute 'use_nesterov' = true is not "
                                    "implemented; eager's ApplyAdam computes plain Adam"));
  }
  if (node.op == "Cast" && attrs.GetBool("Truncate")) {
    const DType dst = attrs.GetType("DstT");
    if (dst == DType::kHalf || dst == DType::kBFloat16) {
      throw UnimplementedError(StrCat(Where(node), ": attribute 'Truncate' = true (truncating to ",
                                      dst, ") is not implemented; eager rounds to nearest"));
    }
  }
}

void CheckInputTypes(const Node& node, const Attrs& attrs, std::span<const DType> inputs) {
  const OpSignature* sig = FindOpSignature(node.op);
  if (sig == nullptr) return;
  size_t at = 0;
  const auto check = [&](const OpArgSignature& arg, std::optional<DType> expected,
                         const std::string& from) {
    if (at >= inputs.size()) return;
    const size_t i = at++;
    if (!expected || inputs[i] == *expected) return;
    throw InvalidArgumentError(StrCat(Where(node), ": input ", i, " ('", arg.name, "', '",
                                      node.inputs[i], "') is ", inputs[i], " but ", from,
                                      " expects ", *expected));
  };
  for (const OpArgSignature& arg : sig->inputs) {
    if (!arg.type_list_attr.empty()) {
      const AttrValue* v = attrs.Find(arg.type_list_attr);
      if (v == nullptr || !Holds<std::vector<DType>>(*v)) return;
      for (DType t : std::get<std::vector<DType>>(*v)) {
        check(arg, t, StrCat("attribute '", arg.type_list_attr, "'"));
      }
      continue;
    }
    std::optional<DType> expected;
    std::string from;
    if (!arg.type_attr.empty()) {
      const AttrValue* v = attrs.Find(arg.type_attr);
      if (v != nullptr && Holds<DType>(*v)) expected = std::get<DType>(*v);
      from = StrCat("attribute '", arg.type_attr, "'");
    } else if (arg.tf_type != 0) {
      expected = DTypeFromTfDataType(arg.tf_type);
      from = StrCat("op ", node.op);
    }
    int64_t count = 1;
    if (!arg.number_attr.empty()) {
      const AttrValue* v = attrs.Find(arg.number_attr);
      if (v == nullptr || !Holds<int64_t>(*v)) return;
      count = std::get<int64_t>(*v);
    }
    for (int64_t k = 0; k < count; ++k) check(arg, expected, from);
  }
}

}  // namespace eager::internal
