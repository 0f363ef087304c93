#include "saving/saver/meta_graph_def.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <type_traits>

#include "runtime/errors.h"
#include "runtime/tensor_access.h"
#include "saving/bundle/directory_lock.h"
#include "saving/bundle/posix_file.h"
#include "saving/proto/meta_graph.pb.h"
#include "saving/saver/internal/function_library_reader.h"

namespace eager {
namespace {

namespace pb = ::eager::tfproto;

// ---- protobuf -> MetaGraph ----------------------------------------------

MetaShape FromProto(const pb::TensorShapeProto& p) {
  MetaShape shape;
  shape.unknown_rank = p.unknown_rank();
  for (const auto& d : p.dim()) shape.dims.push_back(d.size());
  return shape;
}

// The `n` elements of a typed repeated field: the values as stored, the last
// one repeated to fill, zeros when there are none (TF's rule).
template <typename T, typename Field>
std::vector<T> Filled(const Field& field, int64_t n, const std::string& where) {
  if (static_cast<int64_t>(field.size()) > n) {
    throw DataLossError(
        StrCat(where, ": a tensor of ", n, " elements holds ", field.size(), " values"));
  }
  std::vector<T> out(static_cast<size_t>(n), T{});
  for (int64_t i = 0; i < n && !field.empty(); ++i) {
    out[i] = static_cast<T>(field[static_cast<int>(std::min<int64_t>(i, field.size() - 1))]);
  }
  return out;
}

// A TensorProto may hold fewer values than its shape has elements (TF
// repeats the last: tf.zeros([1000, 1000]) is one float), so a 30-byte Const
// can ask for 8 GiB. What such constants fill beyond the bytes the file holds
// counts against a budget per file read (kFillBudget); past it the read is
// ResourceExhaustedError naming the node, its shape and the sizes.
constexpr int64_t kFillBudget = int64_t{1} << 30;
thread_local int64_t fill_budget_left = kFillBudget;

// Charges what is converted in its lifetime to `budget`, one file's.
class FillBudgetScope {
 public:
  explicit FillBudgetScope(int64_t& budget) : budget_(budget) { fill_budget_left = budget; }
  FillBudgetScope(const FillBudgetScope&) = delete;
  FillBudgetScope& operator=(const FillBudgetScope&) = delete;
  ~FillBudgetScope() { budget_ = fill_budget_left; }

 private:
  int64_t& budget_;
};

// The bytes `n` elements of `p` take once filled: for strings their
// std::string records and their characters, the last value repeated (a
// [30000] constant of one 1 MB string is 30 GB, not 30000 * 32 bytes).
int64_t FilledBytes(const pb::TensorProto& p, DType dtype, int64_t n) {
  const auto records = static_cast<int64_t>(static_cast<uint64_t>(n) * DTypeSize(dtype));
  if (dtype != DType::kString) return records;
  int64_t chars = 0;
  for (const std::string& value : p.string_val()) chars += static_cast<int64_t>(value.size());
  const int64_t repeats = n - p.string_val_size();
  if (repeats > 0 && !p.string_val().empty()) {
    const auto last = static_cast<int64_t>(p.string_val(p.string_val_size() - 1).size());
    // n < 2^31 and a string is shorter than the file: no overflow.
    chars += repeats * last;
  }
  return records + chars;
}

void ChargeFill(const pb::TensorProto& p, const Shape& s, DType dtype, int64_t n,
                const std::string& where) {
  const int64_t filled = FilledBytes(p, dtype, n);
  const auto present = static_cast<int64_t>(p.ByteSizeLong());
  if (filled <= present) return;
  if (filled - present > fill_budget_left) {
    throw ResourceExhaustedError(StrCat(where, ": a constant of shape ", s, " and dtype ", dtype,
                                        " fills ", filled, " bytes from the ", present,
                                        " bytes present; the constants of one graph file may "
                                        "fill at most ",
                                        kFillBudget, " bytes beyond what the file holds"));
  }
  fill_budget_left -= filled - present;
}

MetaTensor FromProto(const pb::TensorProto& p, const std::string& where) {
  MetaTensor t;
  t.tf_dtype = p.dtype();
  const MetaShape shape = FromProto(p.tensor_shape());
  t.dims = shape.dims;
  const std::optional<DType> dtype = DTypeFromTfDataType(p.dtype());
  int64_t n = 1;
  for (int64_t d : shape.dims) {
    if (d < 0 || shape.unknown_rank) return t;
    if (d != 0 && n > std::numeric_limits<int32_t>::max() / d) {
      throw DataLossError(StrCat(where, ": tensor of shape ", Shape(shape.dims),
                                 " is too large for a graph constant"));
    }
    n *= d;
  }
  // A variant constant's values are serialized protos eager does not read.
  if (!dtype || *dtype == DType::kVariant ||
      shape.dims.size() > static_cast<size_t>(Shape::kMaxRank)) {
    return t;
  }
  const Shape s(shape.dims);
  if (!p.tensor_content().empty()) {
    if (*dtype == DType::kString) {
      throw DataLossError(StrCat(where, ": a string tensor with tensor_content"));
    }
    const size_t bytes = static_cast<size_t>(n) * DTypeSize(*dtype);
    if (p.tensor_content().size() != bytes) {
      throw DataLossError(StrCat(where, ": tensor_content has ", p.tensor_content().size(),
                                 " bytes, the ", *dtype, " shape ", s, " needs ", bytes));
    }
    Tensor out = internal::NewTensor(s, *dtype);
    VisitDType(*dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!std::is_same_v<T, std::string>) {
        std::memcpy(internal::MutableData<T>(out), p.tensor_content().data(), bytes);
      }
    });
    t.value = out;
    return t;
  }
  ChargeFill(p, s, *dtype, n, where);
  VisitDType(*dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float>) {
      t.value = Tensor::FromVector<float>(Filled<float>(p.float_val(), n, where), s);
    } else if constexpr (std::is_same_v<T, double>) {
      t.value = Tensor::FromVector<double>(Filled<double>(p.double_val(), n, where), s);
    } else if constexpr (std::is_same_v<T, int32_t>) {
      t.value = Tensor::FromVector<int32_t>(Filled<int32_t>(p.int_val(), n, where), s);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      t.value = Tensor::FromVector<int64_t>(Filled<int64_t>(p.int64_val(), n, where), s);
    } else if constexpr (std::is_same_v<T, bool>) {
      const std::vector<uint8_t> bits = Filled<uint8_t>(p.bool_val(), n, where);
      t.value = Tensor::FromVector<bool>(std::vector<bool>(bits.begin(), bits.end()), s);
    } else if constexpr (std::is_same_v<T, std::string>) {
      t.value = Tensor::FromVector<std::string>(Filled<std::string>(p.string_val(), n, where), s);
    } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      std::vector<T> values;  // half_val holds the 16 bits of each value
      for (const uint16_t bits : Filled<uint16_t>(p.half_val(), n, where)) {
        values.push_back(T::FromBits(bits));
      }
      t.value = Tensor::FromVector<T>(std::move(values), s);
    } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, int16_t> ||
                         std::is_same_v<T, uint8_t> || std::is_same_v<T, uint16_t>) {
      t.value = Tensor::FromVector<T>(Filled<T>(p.int_val(), n, where), s);
    } else if constexpr (std::is_same_v<T, uint32_t>) {
      t.value = Tensor::FromVector<T>(Filled<T>(p.uint32_val(), n, where), s);
    } else if constexpr (std::is_same_v<T, uint64_t>) {
      t.value = Tensor::FromVector<T>(Filled<T>(p.uint64_val(), n, where), s);
    } else {  // complex: (real, imag) pairs in scomplex_val / dcomplex_val
      using Part = typename T::value_type;
      const auto& parts = [&]() -> const auto& {
        if constexpr (std::is_same_v<Part, float>) {
          return p.scomplex_val();
        } else {
          return p.dcomplex_val();
        }
      }
      ();
      if (parts.size() % 2 != 0 || parts.size() / 2 > n) {
        throw DataLossError(StrCat(where, ": a complex tensor of ", n, " elements holds ",
                                   parts.size(), " parts (expected an even count up to ", 2 * n,
                                   ")"));
      }
      std::vector<T> values(static_cast<size_t>(n));
      for (int64_t i = 0; i < n && !parts.empty(); ++i) {
        const int k = static_cast<int>(std::min<int64_t>(i, parts.size() / 2 - 1));
        values[static_cast<size_t>(i)] = T(parts[2 * k], parts[2 * k + 1]);
      }
      t.value = Tensor::FromVector<T>(std::move(values), s);
    }
  });
  return t;
}

MetaAttrValue FromProto(const pb::AttrValue& a, const std::string& where) {
  switch (a.value_case()) {
    case pb::AttrValue::kS:
      return a.s();
    case pb::AttrValue::kI:
      return a.i();
    case pb::AttrValue::kF:
      return a.f();
    case pb::AttrValue::kB:
      return a.b();
    case pb::AttrValue::kType:
      return MetaType{a.type()};
    case pb::AttrValue::kShape:
      return FromProto(a.shape());
    case pb::AttrValue::kTensor:
      return FromProto(a.tensor(), where);
    case pb::AttrValue::kPlaceholder:
      return MetaPlaceholder{a.placeholder()};
    case pb::AttrValue::kFunc:
      return MetaFunc{a.func().name()};
    case pb::AttrValue::kList: {
      const auto& l = a.list();
      MetaAttrList list;
      list.s.assign(l.s().begin(), l.s().end());
      list.i.assign(l.i().begin(), l.i().end());
      list.f.assign(l.f().begin(), l.f().end());
      list.b.assign(l.b().begin(), l.b().end());
      list.type.assign(l.type().begin(), l.type().end());
      for (const auto& shape : l.shape()) list.shape.push_back(FromProto(shape));
      for (const auto& tensor : l.tensor()) list.tensor.push_back(FromProto(tensor, where));
      for (const auto& func : l.func()) list.func.push_back(func.name());
      return list;
    }
    case pb::AttrValue::VALUE_NOT_SET:
      break;
  }
  return std::monostate{};
}

MetaArgDef FromProto(const pb::OpDef::ArgDef& a) {
  return {a.name(), a.type(), a.type_attr(), a.number_attr(), a.type_list_attr(), a.is_ref()};
}

MetaOpDef FromProto(const pb::OpDef& op) {
  MetaOpDef out;
  out.name = op.name();
  for (const auto& a : op.input_arg()) out.inputs.push_back(FromProto(a));
  for (const auto& a : op.output_arg()) out.outputs.push_back(FromProto(a));
  for (const auto& a : op.attr()) {
    MetaAttrDef def{a.name(), a.type(), std::nullopt, a.has_minimum(), a.minimum(), std::nullopt};
    const std::string where = StrCat("op ", op.name(), " attr ", a.name());
    if (a.has_default_value()) def.default_value = FromProto(a.default_value(), where);
    if (a.has_allowed_values()) def.allowed_values = FromProto(a.allowed_values(), where);
    out.attrs.push_back(std::move(def));
  }
  out.is_stateful = op.is_stateful();
  out.is_commutative = op.is_commutative();
  out.is_aggregate = op.is_aggregate();
  out.allows_uninitialized_input = op.allows_uninitialized_input();
  return out;
}

MetaTensorInfo FromProto(const pb::TensorInfo& p) {
  MetaTensorInfo info;
  info.name = p.name();  // empty for the sparse and composite encodings
  info.tf_dtype = p.dtype();
  if (p.has_tensor_shape()) info.shape = FromProto(p.tensor_shape());
  return info;
}

MetaSignature SignatureFromBytes(const std::string& bytes, const std::string& where) {
  pb::SignatureDef p;
  if (!p.ParseFromString(bytes)) throw DataLossError(StrCat(where, ": not a SignatureDef"));
  MetaSignature signature;
  for (const auto& [key, info] : p.inputs()) signature.inputs.emplace(key, FromProto(info));
  for (const auto& [key, info] : p.outputs()) signature.outputs.emplace(key, FromProto(info));
  signature.method_name = p.method_name();
  return signature;
}

MetaGraphNode FromProto(const pb::NodeDef& n, const std::string& path) {
  MetaGraphNode node{n.name(), n.op(), {n.input().begin(), n.input().end()}, n.device(), {}};
  std::vector<MetaAttrs::value_type> attrs;
  attrs.reserve(static_cast<size_t>(n.attr().size()));
  for (const auto& [name, value] : n.attr()) {
    attrs.emplace_back(name, FromProto(value, StrCat(path, ": node ", n.name(), " attr ", name)));
  }
  node.attrs.Assign(std::move(attrs));
  return node;
}

MetaGraph FromProto(const pb::MetaGraphDef& p, const std::string& path) {
  MetaGraph meta;
  const auto& info = p.meta_info_def();
  meta.meta_graph_version = info.meta_graph_version();
  meta.tensorflow_version = info.tensorflow_version();
  meta.tensorflow_git_version = info.tensorflow_git_version();
  meta.tags.assign(info.tags().begin(), info.tags().end());
  meta.stripped_default_attrs = info.stripped_default_attrs();
  for (const auto& op : info.stripped_op_list().op())
    meta.stripped_op_list.push_back(FromProto(op));

  const auto& graph = p.graph_def();
  meta.producer = graph.versions().producer();
  meta.min_consumer = graph.versions().min_consumer();
  for (const auto& n : graph.node()) meta.nodes.push_back(FromProto(n, path));
  if (p.has_saver_def()) {
    const auto& s = p.saver_def();
    meta.saver_def = MetaSaverDef{s.filename_tensor_name(),
                                  s.save_tensor_name(),
                                  s.restore_op_name(),
                                  s.max_to_keep(),
                                  s.sharded(),
                                  s.keep_checkpoint_every_n_hours(),
                                  static_cast<int>(s.version())};
  }
  for (const auto& [name, c] : p.collection_def()) {
    MetaCollection out;
    switch (c.kind_case()) {
      case pb::CollectionDef::kNodeList:
        out.kind = MetaCollection::Kind::kNodeList;
        out.node_list.assign(c.node_list().value().begin(), c.node_list().value().end());
        break;
      case pb::CollectionDef::kBytesList:
        out.kind = MetaCollection::Kind::kBytesList;
        out.bytes_list.assign(c.bytes_list().value().begin(), c.bytes_list().value().end());
        break;
      case pb::CollectionDef::kInt64List:
        out.kind = MetaCollection::Kind::kInt64List;
        out.int64_list.assign(c.int64_list().value().begin(), c.int64_list().value().end());
        break;
      case pb::CollectionDef::kFloatList:
        out.kind = MetaCollection::Kind::kFloatList;
        out.float_list.assign(c.float_list().value().begin(), c.float_list().value().end());
        break;
      case pb::CollectionDef::KIND_NOT_SET:
        break;
    }
    meta.collections.emplace(name, std::move(out));
  }
  for (const auto& [key, bytes] : p.signature_def()) {
    meta.signatures.emplace(key,
                            SignatureFromBytes(bytes, StrCat(path, ": signature '", key, "'")));
  }
  for (const std::string& bytes : p.asset_file_def()) {
    pb::AssetFileDef asset;
    if (!asset.ParseFromString(bytes)) {
      throw DataLossError(StrCat(path, ": an asset_file_def entry is not an AssetFileDef"));
    }
    meta.asset_files.push_back({FromProto(asset.tensor_info()), asset.filename()});
  }
  meta.has_object_graph = !p.object_graph_def().empty();
  meta.object_graph = p.object_graph_def();
  return meta;
}

// ---- MetaGraph -> protobuf ----------------------------------------------

void ToProto(const MetaShape& shape, pb::TensorShapeProto* p) {
  p->set_unknown_rank(shape.unknown_rank);
  for (int64_t d : shape.dims) p->add_dim()->set_size(d);
}

void ToProto(const MetaTensor& t, pb::TensorProto* p, const std::string& where) {
  if (!t.value) {
    throw InvalidArgumentError(StrCat(where, ": a tensor attribute of ", TfDataTypeName(t.tf_dtype),
                                      " without a value cannot be written"));
  }
  const Tensor& v = *t.value;
  p->set_dtype(static_cast<pb::DataType>(TfDataType(v.dtype())));
  ToProto(MetaShape{v.shape().ToVector(), false}, p->mutable_tensor_shape());
  // As TF's make_tensor_proto: strings and tensors of one repeated value in
  // the typed field (one value), everything else as raw bytes.
  VisitDType(v.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto data = v.data<T>();
    const bool uniform =
        std::all_of(data.begin(), data.end(), [&](const T& x) { return x == data[0]; });
    if constexpr (std::is_same_v<T, std::string>) {
      for (const std::string& s : data) p->add_string_val(s);
    } else if (!uniform || data.empty()) {
      const auto bytes = v.bytes();
      p->set_tensor_content(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    } else if constexpr (std::is_same_v<T, float>) {
      p->add_float_val(data[0]);
    } else if constexpr (std::is_same_v<T, double>) {
      p->add_double_val(data[0]);
    } else if constexpr (std::is_same_v<T, int32_t>) {
      p->add_int_val(data[0]);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      p->add_int64_val(data[0]);
    } else if constexpr (std::is_same_v<T, bool>) {
      p->add_bool_val(data[0]);
    } else {  // the storage dtypes: raw bytes always
      const auto bytes = v.bytes();
      p->set_tensor_content(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    }
  });
}

void ToProto(const MetaAttrValue& value, pb::AttrValue* a, const std::string& where) {
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>) {
          a->set_s(v);
        } else if constexpr (std::is_same_v<V, int64_t>) {
          a->set_i(v);
        } else if constexpr (std::is_same_v<V, float>) {
          a->set_f(v);
        } else if constexpr (std::is_same_v<V, bool>) {
          a->set_b(v);
        } else if constexpr (std::is_same_v<V, MetaType>) {
          a->set_type(static_cast<pb::DataType>(v.tf_dtype));
        } else if constexpr (std::is_same_v<V, MetaShape>) {
          ToProto(v, a->mutable_shape());
        } else if constexpr (std::is_same_v<V, MetaTensor>) {
          ToProto(v, a->mutable_tensor(), where);
        } else if constexpr (std::is_same_v<V, MetaPlaceholder>) {
          a->set_placeholder(v.name);
        } else if constexpr (std::is_same_v<V, MetaFunc>) {
          a->mutable_func()->set_name(v.name);
        } else if constexpr (std::is_same_v<V, MetaListBox>) {
          auto* l = a->mutable_list();
          for (const auto& s : v->s) l->add_s(s);
          for (int64_t i : v->i) l->add_i(i);
          for (float f : v->f) l->add_f(f);
          for (bool b : v->b) l->add_b(b);
          for (int t : v->type) l->add_type(static_cast<pb::DataType>(t));
          for (const auto& s : v->shape) ToProto(s, l->add_shape());
          for (const auto& t : v->tensor) ToProto(t, l->add_tensor(), where);
          for (const auto& f : v->func) l->add_func()->set_name(f);
        }
      },
      value);
}

void ToProto(const MetaArgDef& a, pb::OpDef::ArgDef* p) {
  p->set_name(a.name);
  p->set_type(static_cast<pb::DataType>(a.type));
  p->set_type_attr(a.type_attr);
  p->set_number_attr(a.number_attr);
  p->set_type_list_attr(a.type_list_attr);
  p->set_is_ref(a.is_ref);
}

void ToProto(const MetaOpDef& op, pb::OpDef* p) {
  p->set_name(op.name);
  for (const auto& a : op.inputs) ToProto(a, p->add_input_arg());
  for (const auto& a : op.outputs) ToProto(a, p->add_output_arg());
  for (const auto& a : op.attrs) {
    auto* attr = p->add_attr();
    attr->set_name(a.name);
    attr->set_type(a.type);
    const std::string where = StrCat("op ", op.name, " attr ", a.name);
    if (a.default_value) ToProto(*a.default_value, attr->mutable_default_value(), where);
    attr->set_has_minimum(a.has_minimum);
    attr->set_minimum(a.minimum);
    if (a.allowed_values) ToProto(*a.allowed_values, attr->mutable_allowed_values(), where);
  }
  p->set_is_stateful(op.is_stateful);
  p->set_is_commutative(op.is_commutative);
  p->set_is_aggregate(op.is_aggregate);
  p->set_allows_uninitialized_input(op.allows_uninitialized_input);
}

void ToProto(const MetaTensorInfo& info, pb::TensorInfo* p) {
  p->set_name(info.name);
  p->set_dtype(static_cast<pb::DataType>(info.tf_dtype));
  ToProto(info.shape, p->mutable_tensor_shape());
}

pb::MetaGraphDef ToProto(const MetaGraph& meta, const std::string& path) {
  pb::MetaGraphDef p;
  auto* info = p.mutable_meta_info_def();
  info->set_meta_graph_version(meta.meta_graph_version);
  info->set_tensorflow_version(meta.tensorflow_version);
  info->set_tensorflow_git_version(meta.tensorflow_git_version);
  for (const auto& tag : meta.tags) info->add_tags(tag);
  info->set_stripped_default_attrs(meta.stripped_default_attrs);
  for (const auto& op : meta.stripped_op_list)
    ToProto(op, info->mutable_stripped_op_list()->add_op());
  auto* graph = p.mutable_graph_def();
  graph->mutable_versions()->set_producer(meta.producer);
  graph->mutable_versions()->set_min_consumer(meta.min_consumer);
  for (const MetaGraphNode& node : meta.nodes) {
    auto* n = graph->add_node();
    n->set_name(node.name);
    n->set_op(node.op);
    for (const auto& input : node.inputs) n->add_input(input);
    n->set_device(node.device);
    for (const auto& [name, value] : node.attrs) {
      ToProto(value, &(*n->mutable_attr())[name],
              StrCat(path, ": node ", node.name, " attr ", name));
    }
  }
  if (meta.saver_def) {
    const MetaSaverDef& s = *meta.saver_def;
    auto* d = p.mutable_saver_def();
    d->set_filename_tensor_name(s.filename_tensor_name);
    d->set_save_tensor_name(s.save_tensor_name);
    d->set_restore_op_name(s.restore_op_name);
    d->set_max_to_keep(s.max_to_keep);
    d->set_sharded(s.sharded);
    d->set_keep_checkpoint_every_n_hours(s.keep_checkpoint_every_n_hours);
    d->set_version(static_cast<pb::SaverDef::CheckpointFormatVersion>(s.version));
  }
  for (const auto& [name, c] : meta.collections) {
    pb::CollectionDef& out = (*p.mutable_collection_def())[name];
    switch (c.kind) {
      case MetaCollection::Kind::kNodeList:
        for (const auto& v : c.node_list) out.mutable_node_list()->add_value(v);
        break;
      case MetaCollection::Kind::kBytesList:
        for (const auto& v : c.bytes_list) out.mutable_bytes_list()->add_value(v);
        break;
      case MetaCollection::Kind::kInt64List:
        for (int64_t v : c.int64_list) out.mutable_int64_list()->add_value(v);
        break;
      case MetaCollection::Kind::kFloatList:
        for (float v : c.float_list) out.mutable_float_list()->add_value(v);
        break;
      case MetaCollection::Kind::kNone:
        break;
    }
  }
  for (const auto& [key, signature] : meta.signatures) {
    pb::SignatureDef def;
    for (const auto& [name, info] : signature.inputs) ToProto(info, &(*def.mutable_inputs())[name]);
    for (const auto& [name, info] : signature.outputs) {
      ToProto(info, &(*def.mutable_outputs())[name]);
    }
    def.set_method_name(signature.method_name);
    (*p.mutable_signature_def())[key] = def.SerializeAsString();
  }
  for (const MetaAssetFile& asset : meta.asset_files) {
    pb::AssetFileDef def;
    ToProto(asset.tensor_info, def.mutable_tensor_info());
    def.set_filename(asset.filename);
    p.add_asset_file_def(def.SerializeAsString());
  }
  return p;
}

// ---- Reading large files in linear memory -----------------------------------
//
// A graph's nodes are parsed one NodeDef at a time and converted at once, so
// that the protobuf tree of the whole graph (some 600 bytes per node: a 100
// MB saved_model.pb of 2M nodes took 1.2 GB as protobuf objects, next to
// their conversion) never exists, nor the file's bytes: the file is read
// through a window as it is parsed. Every other field of a message is
// gathered as its wire bytes and parsed as usual, into a message without the
// nodes.

using ::google::protobuf::io::CodedInputStream;
using WireFormat = ::google::protobuf::internal::WireFormatLite;

// Bytes [offset, offset + length) of a file, as protobuf pulls them.
class FileRange final : public ::google::protobuf::io::CopyingInputStream {
 public:
  FileRange(const internal::RandomAccessFile& file, uint64_t offset, uint64_t length)
      : file_(file), at_(offset), end_(offset + length) {}
  int Read(void* buffer, int size) override {
    const uint64_t n = std::min<uint64_t>(static_cast<uint64_t>(size), end_ - at_);
    if (n == 0) return 0;  // the end
    const size_t got = file_.ReadAt(at_, n, buffer);
    at_ += got;
    return static_cast<int>(got);
  }
  int Skip(int count) override {  // without reading
    const uint64_t n = std::min<uint64_t>(static_cast<uint64_t>(count), end_ - at_);
    at_ += n;
    return static_cast<int>(n);
  }

 private:
  const internal::RandomAccessFile& file_;
  uint64_t at_;
  uint64_t end_;
};

// The `length` bytes at `offset` in a file as a protobuf stream, `in`,
// limited to them and read through a window of kWindow bytes.
struct FileMessage {
  static constexpr int kWindow = 1 << 16;
  FileMessage(const internal::RandomAccessFile& file, uint64_t offset, uint64_t length)
      : range(file, offset, length), adaptor(&range, kWindow), in(&adaptor) {
    in.SetTotalBytesLimit(std::numeric_limits<int>::max());
    in.PushLimit(static_cast<int>(length));
  }
  FileRange range;
  ::google::protobuf::io::CopyingInputStreamAdaptor adaptor;
  CodedInputStream in;
};

// The fields of the message `in` holds up to its limit: each
// length-delimited field numbered `wanted` to `on_wanted(at, length)` with
// `in` limited to the field's bytes (`at` their offset in the file, where
// `in`'s position 0 is at `origin`), every other field's wire bytes to
// `*rest` (skipped when null). False when the bytes are not a message.
template <typename F>
bool SplitFields(CodedInputStream& in, uint64_t origin, int wanted, std::string* rest,
                 F&& on_wanted) {
  std::optional<::google::protobuf::io::StringOutputStream> rest_stream;
  std::optional<::google::protobuf::io::CodedOutputStream> rest_out;
  if (rest != nullptr) rest_out.emplace(&rest_stream.emplace(rest));
  while (true) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return in.BytesUntilLimit() == 0;
    if (WireFormat::GetTagFieldNumber(tag) == wanted &&
        WireFormat::GetTagWireType(tag) == WireFormat::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length)) return false;
      if (length > static_cast<uint32_t>(std::max(in.BytesUntilLimit(), 0))) return false;
      const uint64_t at = origin + static_cast<uint64_t>(in.CurrentPosition());
      const CodedInputStream::Limit limit = in.PushLimit(static_cast<int>(length));
      if (!on_wanted(at, length) || !in.Skip(in.BytesUntilLimit())) return false;
      in.PopLimit(limit);
      continue;
    }
    if (rest == nullptr ? !WireFormat::SkipField(&in, tag)
                        : !WireFormat::SkipField(&in, tag, &*rest_out)) {
      return false;
    }
  }
}

std::unique_ptr<internal::RandomAccessFile> OpenProtoFile(const std::string& path,
                                                          const char* what) {
  if (!internal::FileExists(path)) throw NotFoundError(StrCat(what, " file not found: ", path));
  auto file = internal::RandomAccessFile::Open(path);
  // Protobuf refuses messages of 2 GiB or more: reading more is pointless.
  constexpr uint64_t kMaxProtoFileSize = (uint64_t{2} << 30) - 1;
  if (file->size() > kMaxProtoFileSize) {
    throw ResourceExhaustedError(StrCat("File ", path, " has ", file->size(),
                                        " bytes, more than the ", kMaxProtoFileSize,
                                        " this reader accepts for it"));
  }
  return file;
}

[[noreturn]] void ThrowNotA(const std::string& path, const char* what, uint64_t size) {
  throw DataLossError(
      StrCat(path, ": not a binary ", what, " (", size, " bytes that do not parse as one)"));
}

const char* KindName(MetaGraphFile::Kind kind) {
  switch (kind) {
    case MetaGraphFile::Kind::kMetaGraphDef:
      return "MetaGraphDef";
    case MetaGraphFile::Kind::kSavedModel:
      return "SavedModel";
    case MetaGraphFile::Kind::kGraphDef:
      break;
  }
  return "GraphDef";
}

// The op of one NodeDef's bytes (its last `op` field, as protobuf merges);
// nullopt when the bytes are not a message.
std::optional<std::string> NodeOp(const std::string& bytes) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                      static_cast<int>(bytes.size()));
  in.PushLimit(static_cast<int>(bytes.size()));
  std::string op;
  const bool ok = SplitFields(in, 0, /*NodeDef.op*/ 2, nullptr, [&](uint64_t, uint32_t length) {
    return in.ReadString(&op, static_cast<int>(length));
  });
  if (!ok) return std::nullopt;
  return op;
}

}  // namespace

namespace internal {
// For the function library reader (internal/function_library_reader.h).
MetaGraphNode MetaGraphNodeFromProto(const tfproto::NodeDef& node, const std::string& path) {
  return FromProto(node, path);
}
}  // namespace internal

// A file's graphs are framed in one pass that counts the nodes and parses
// everything else; the nodes' bytes are read again, one NodeDef at a time,
// by ForEachNode and OpTypes.
MetaGraphFile::MetaGraphFile(std::string path, Kind kind)
    : path_(std::move(path)), kind_(kind), fill_budget_left_(kFillBudget) {
  file_ = OpenProtoFile(path_, KindName(kind_));
  FileMessage message(*file_, 0, file_->size());
  CodedInputStream& in = message.in;
  const FillBudgetScope budget(fill_budget_left_);
  // The GraphDef at `at` (`length` bytes, `in` limited to it) into `graph`:
  // where it is, its node count; the rest into `others` (versions).
  auto frame_graph_def = [&](uint64_t at, uint32_t length, Frame& graph, pb::GraphDef& others) {
    std::string rest;
    size_t count = 0;
    if (!SplitFields(in, 0, /*GraphDef.node*/ 1, &rest, [&](uint64_t, uint32_t) {
          ++count;
          return true;
        })) {
      return false;
    }
    if (!others.ParseFromString(rest)) return false;
    graph.graph_defs.emplace_back(at, length);
    graph.num_nodes += count;
    return true;
  };
  // The MetaGraphDef `in` is limited to into `graph`, as FromProto reads it.
  auto frame_meta_graph_def = [&](Frame& graph) {
    std::string rest;
    int producer = 0, min_consumer = 0, graph_defs = 0;
    const bool ok =
        SplitFields(in, 0, /*MetaGraphDef.graph_def*/ 2, &rest, [&](uint64_t at, uint32_t length) {
          // A repeated singular message merges: its nodes add up, versions last.
          pb::GraphDef others;
          if (!frame_graph_def(at, length, graph, others)) return false;
          producer = others.versions().producer();
          min_consumer = others.versions().min_consumer();
          ++graph_defs;
          return true;
        });
    pb::MetaGraphDef others;
    if (!ok || !others.ParseFromString(rest)) return false;
    graph.header = FromProto(others, path_);
    if (graph_defs > 0) {
      graph.header.producer = producer;
      graph.header.min_consumer = min_consumer;
    }
    return true;
  };
  bool ok = false;
  switch (kind_) {
    case Kind::kMetaGraphDef:
      ok = frame_meta_graph_def(graphs_.emplace_back());
      break;
    case Kind::kGraphDef: {
      Frame& graph = graphs_.emplace_back();
      graph.header = FromProto(pb::MetaGraphDef(), path_);
      pb::GraphDef others;
      ok = frame_graph_def(0, static_cast<uint32_t>(file_->size()), graph, others);
      graph.header.producer = others.versions().producer();
      graph.header.min_consumer = others.versions().min_consumer();
      break;
    }
    case Kind::kSavedModel: {
      std::string rest;
      ok = SplitFields(in, 0, /*SavedModel.meta_graphs*/ 2, &rest, [&](uint64_t, uint32_t) {
        return frame_meta_graph_def(graphs_.emplace_back());
      });
      pb::SavedModel others;  // saved_model_schema_version: checked as protobuf would
      ok = ok && others.ParseFromString(rest);
      break;
    }
  }
  if (!ok) ThrowNotA(path_, KindName(kind_), file_->size());
}

MetaGraphFile::MetaGraphFile(MetaGraphFile&&) noexcept = default;
MetaGraphFile& MetaGraphFile::operator=(MetaGraphFile&&) noexcept = default;
MetaGraphFile::~MetaGraphFile() = default;

void MetaGraphFile::ForEachNodeBytes(
    size_t index, const std::function<bool(const std::string& bytes)>& on_node) const {
  std::string bytes;
  for (const auto& [offset, length] : graphs_.at(index).graph_defs) {
    FileMessage message(*file_, offset, length);
    const bool ok = SplitFields(
        message.in, offset, /*GraphDef.node*/ 1, nullptr, [&](uint64_t, uint32_t node_length) {
          return message.in.ReadString(&bytes, static_cast<int>(node_length)) && on_node(bytes);
        });
    // The file changed since it was framed, or a node is not a NodeDef.
    if (!ok) ThrowNotA(path_, KindName(kind_), file_->size());
  }
}

std::vector<std::string> MetaGraphFile::OpTypes(size_t index) const {
  std::set<std::string> types;
  ForEachNodeBytes(index, [&](const std::string& bytes) {
    std::optional<std::string> op = NodeOp(bytes);
    if (op) types.insert(std::move(*op));
    return op.has_value();
  });
  return {types.begin(), types.end()};
}

void MetaGraphFile::ForEachNode(size_t index,
                                const std::function<void(MetaGraphNode&&)>& sink) const {
  const FillBudgetScope budget(fill_budget_left_);
  pb::NodeDef node;
  ForEachNodeBytes(index, [&](const std::string& bytes) {
    node.Clear();
    if (!node.ParseFromString(bytes)) return false;
    sink(FromProto(node, path_));
    return true;
  });
}

namespace {

// A whole graph of `file`: its header with every node.
MetaGraph WholeGraph(MetaGraphFile& file, size_t index) {
  MetaGraph meta = std::move(file.graph(index));
  file.ForEachNode(index, [&](MetaGraphNode&& node) { meta.nodes.push_back(std::move(node)); });
  return meta;
}

}  // namespace

MetaGraph ReadMetaGraph(const std::string& path) {
  MetaGraphFile file(path, MetaGraphFile::Kind::kMetaGraphDef);
  return WholeGraph(file, 0);
}

MetaGraph ReadGraphDef(const std::string& path) {
  MetaGraphFile file(path, MetaGraphFile::Kind::kGraphDef);
  return WholeGraph(file, 0);
}

std::vector<MetaGraph> ReadSavedModelMetaGraphs(const std::string& path) {
  MetaGraphFile file(path, MetaGraphFile::Kind::kSavedModel);
  std::vector<MetaGraph> out;
  for (size_t i = 0; i < file.num_graphs(); ++i) out.push_back(WholeGraph(file, i));
  return out;
}

namespace {

// Writes `bytes` to `path` atomically: a temp file, fsync, rename.
void WriteFileAtomically(const std::string& path, const std::string& bytes) {
  const std::string dir = internal::DirName(path);
  internal::CreateDirectories(dir);
  const internal::DirectoryLock lock(dir);
  const std::string temp = StrCat(path, ".tmp", internal::RandomUint64());
  try {
    auto file = internal::WritableFile::Create(temp, 1 << 16);
    file->Append(bytes.data(), bytes.size());
    file->Sync();
    file->Close();
    internal::RenameFile(temp, path);
    internal::SyncDirectory(dir);
  } catch (...) {
    internal::RemoveFileNoThrow(temp);
    throw;
  }
}

}  // namespace

void WriteMetaGraph(const std::string& path, const MetaGraph& meta) {
  std::string bytes;
  if (!ToProto(meta, path).SerializeToString(&bytes)) {
    throw InternalError(StrCat(path, ": the MetaGraphDef could not be serialized"));
  }
  WriteFileAtomically(path, bytes);
}

void WriteSavedModel(const std::string& path, const std::vector<MetaGraph>& graphs) {
  pb::SavedModel model;
  model.set_saved_model_schema_version(1);
  for (const MetaGraph& meta : graphs) *model.add_meta_graphs() = ToProto(meta, path);
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    throw InternalError(StrCat(path, ": the SavedModel could not be serialized"));
  }
  WriteFileAtomically(path, bytes);
}

std::vector<MetaVariableDef> VariableDefsOf(const MetaGraph& meta, const std::string& name) {
  auto it = meta.collections.find(name);
  if (it == meta.collections.end()) return {};
  EAGER_CHECK(it->second.kind == MetaCollection::Kind::kBytesList, "collection '", name,
              "' is not a bytes list, so it holds no VariableDefs");
  std::vector<MetaVariableDef> out;
  for (const std::string& bytes : it->second.bytes_list) {
    pb::VariableDef d;
    if (!d.ParseFromString(bytes)) {
      throw DataLossError(StrCat("collection '", name, "': an entry is not a VariableDef"));
    }
    out.push_back({d.variable_name(), d.initializer_name(), d.snapshot_name(),
                   d.initial_value_name(), d.is_resource(), d.trainable()});
  }
  return out;
}

MetaCollection VariableDefCollection(const std::vector<MetaVariableDef>& defs) {
  MetaCollection c;
  c.kind = MetaCollection::Kind::kBytesList;
  for (const MetaVariableDef& v : defs) {
    pb::VariableDef d;
    d.set_variable_name(v.variable_name);
    d.set_initializer_name(v.initializer_name);
    d.set_snapshot_name(v.snapshot_name);
    d.set_initial_value_name(v.initial_value_name);
    d.set_is_resource(v.is_resource);
    d.set_trainable(v.trainable);
    c.bytes_list.push_back(d.SerializeAsString());
  }
  return c;
}

}  // namespace eager
