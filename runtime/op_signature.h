#pragma once

// OpSignature: TensorFlow's signature of an op type (its REGISTER_OP), once
// for every layer: what a NodeDef of that type takes and makes, and the
// defaults of the attributes a NodeDef may omit.
//
//   const OpSignature* sig = FindOpSignature("MatMul");
//   sig->inputs[0].name;                 // "a"
//   Attrs attrs = node.attrs;
//   SetAttrDefaults(*sig, attrs);        // transpose_a, transpose_b: false
//
// Readers: ops/ fills a graph node's defaults from it before a kernel runs
// (a NodeDef written with stripped_default_attrs omits them); runtime's
// Graph derives an imported node's outputs from it; saving/ writes it as the
// MetaInfoDef's stripped_op_list and reads it when a file lists none. Every
// OpDef of ops/ that can be in a graph has one (tests/ops/op_signature_test.cc).
//
// The table (runtime/op_signature.cc) is written in REGISTER_OP's own
// notation ("x: T", "T: {float, double}", "validate_shape: bool = true"), as
// TF 1.14 registers the ops (AddV2: TF 2.x, which added it), and checked
// against real .meta files by tests/saving/saver/tf_op_defs_test.cc.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/attrs.h"
#include "runtime/dtype.h"

namespace eager {

// An input or output argument: "x: T", "var: Ref(T)", "values: N * T",
// "pred: bool", "tensors: dtypes".
struct OpArgSignature {
  std::string name = {};
  int tf_type = 0;                  // a fixed type (TF's DataType number), or 0
  std::string type_attr = {};       // "T": the type is that attribute's
  std::string number_attr = {};     // "N": a list of that many
  std::string type_list_attr = {};  // "dtypes": one per entry of that list(type) attribute
  bool is_ref = false;              // a variable reference
};

// An attribute: "T: {float, double}", "keep_dims: bool = false".
struct OpAttrSignature {
  std::string name = {};
  std::string type = {};  // "type", "bool", "int", "string", "shape", "tensor", "list(int)", ...
  std::optional<AttrValue> default_value = {};
  bool has_minimum = false;
  int64_t minimum = 0;
  std::vector<int> allowed_types = {};            // TF DataType numbers, in TF's order
  std::vector<std::string> allowed_strings = {};  // "'NHWC', 'NCHW'"
};

struct OpSignature {
  std::string name = {};  // TF's op type
  std::vector<OpArgSignature> inputs = {};
  std::vector<OpArgSignature> outputs = {};
  std::vector<OpAttrSignature> attrs = {};
  bool is_stateful = false;
  bool is_commutative = false;
  bool is_aggregate = false;
  bool allows_uninitialized_input = false;

  // The attribute `name`, or nullptr.
  const OpAttrSignature* FindAttr(std::string_view name) const;
};

// The signature of op type `type`, or nullptr when the table lacks it.
const OpSignature* FindOpSignature(std::string_view type);
// Every op type the table has, sorted.
std::vector<std::string_view> OpSignatureTypes();

// Sets each attribute of `op` that has a default and is missing in `attrs`.
void SetAttrDefaults(const OpSignature& op, Attrs& attrs);

// The dtypes of the outputs of a node of type `op` with attributes `attrs`
// (type attributes, "N", list(type) attributes), or nullopt when an
// attribute they need is missing or a type is one eager lacks.
std::optional<std::vector<DType>> OutputDTypes(const OpSignature& op, const Attrs& attrs);

}  // namespace eager
