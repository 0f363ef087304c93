#include "saving/saver/internal/tf_op_defs.h"

#include <map>
#include <set>
#include <string>

#include "runtime/op_signature.h"

namespace eager::internal {
namespace {

MetaArgDef ToMeta(const OpArgSignature& arg) {
  return {.name = arg.name,
          .type = arg.tf_type,
          .type_attr = arg.type_attr,
          .number_attr = arg.number_attr,
          .type_list_attr = arg.type_list_attr,
          .is_ref = arg.is_ref};
}

// The signature table's defaults: bool, int, float (LeakyRelu's alpha),
// type, string, shape (unknown), list(int), list(string), list(shape).
MetaAttrValue ToMeta(const AttrValue& value) {
  return VisitAttr(
      [](const auto& v) -> MetaAttrValue {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, bool> || std::is_same_v<V, int64_t> ||
                      std::is_same_v<V, std::string>) {
          return v;
        } else if constexpr (std::is_same_v<V, double>) {
          return static_cast<float>(v);  // TF's float attr; 0.2f parsed exactly as a double
        } else if constexpr (std::is_same_v<V, DType>) {
          return MetaType{TfDataType(v)};
        } else if constexpr (std::is_same_v<V, Shape>) {
          return v.unknown_rank() ? MetaShape{{}, true} : MetaShape{v.ToVector(), false};
        } else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
          MetaAttrList list;
          list.i = v;
          return list;
        } else if constexpr (std::is_same_v<V, std::vector<std::string>>) {
          MetaAttrList list;  // VarHandleOp's allowed_devices = []
          list.s = v;
          return list;
        } else if constexpr (std::is_same_v<V, std::vector<Shape>>) {
          MetaAttrList list;  // If's and While's output_shapes = []
          for (const Shape& shape : v) {
            list.shape.push_back(shape.unknown_rank() ? MetaShape{{}, true}
                                                      : MetaShape{shape.ToVector(), false});
          }
          return list;
        } else {
          throw InternalError("an op signature default of a kind TF's OpDefs do not use");
        }
      },
      value);
}

MetaOpDef ToMeta(const OpSignature& op) {
  MetaOpDef out{.name = op.name,
                .is_stateful = op.is_stateful,
                .is_commutative = op.is_commutative,
                .is_aggregate = op.is_aggregate,
                .allows_uninitialized_input = op.allows_uninitialized_input};
  for (const OpArgSignature& a : op.inputs) out.inputs.push_back(ToMeta(a));
  for (const OpArgSignature& a : op.outputs) out.outputs.push_back(ToMeta(a));
  for (const OpAttrSignature& a : op.attrs) {
    MetaAttrDef attr{.name = a.name, .has_minimum = a.has_minimum, .minimum = a.minimum};
    attr.type = a.type;
    if (a.default_value) attr.default_value = ToMeta(*a.default_value);
    if (!a.allowed_types.empty() || !a.allowed_strings.empty()) {
      MetaAttrList allowed;
      allowed.type = a.allowed_types;
      allowed.s = a.allowed_strings;
      attr.allowed_values = allowed;
    }
    out.attrs.push_back(std::move(attr));
  }
  return out;
}

// runtime/op_signature.h's table as MetaOpDefs, converted once.
const std::map<std::string, MetaOpDef, std::less<>>& Table() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, MetaOpDef, std::less<>>;
    for (std::string_view type : OpSignatureTypes()) {
      t->emplace(std::string(type), ToMeta(*FindOpSignature(type)));
    }
    return t;
  }();
  return *table;
}

}  // namespace

const MetaOpDef* FindTfOpDef(std::string_view type) {
  auto it = Table().find(type);
  return it == Table().end() ? nullptr : &it->second;
}

OpSignature SignatureOf(const MetaOpDef& op) {
  OpSignature out{.name = op.name,
                  .is_stateful = op.is_stateful,
                  .is_commutative = op.is_commutative,
                  .is_aggregate = op.is_aggregate,
                  .allows_uninitialized_input = op.allows_uninitialized_input};
  const auto arg = [](const MetaArgDef& a) {
    return OpArgSignature{.name = a.name,
                          .tf_type = a.type,
                          .type_attr = a.type_attr,
                          .number_attr = a.number_attr,
                          .type_list_attr = a.type_list_attr,
                          .is_ref = a.is_ref};
  };
  for (const MetaArgDef& a : op.inputs) out.inputs.push_back(arg(a));
  for (const MetaArgDef& a : op.outputs) out.outputs.push_back(arg(a));
  for (const MetaAttrDef& a : op.attrs) {
    out.attrs.push_back(OpAttrSignature{.name = a.name, .type = a.type});
  }
  return out;
}

std::vector<MetaOpDef> StrippedOpList(const MetaGraphNodes& nodes) {
  std::set<std::string> types;
  for (const MetaGraphNode& n : nodes) types.insert(n.op);
  std::vector<MetaOpDef> out;
  for (const std::string& type : types) {
    if (const MetaOpDef* def = FindTfOpDef(type)) {
      out.push_back(*def);
    } else {
      out.push_back(MetaOpDef{.name = type});
    }
  }
  return out;
}

}  // namespace eager::internal
