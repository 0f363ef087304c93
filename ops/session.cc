#include "ops/session.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "ops/batch_norm_ops.h"
#include "ops/execute.h"
#include "ops/functional_ops.h"
#include "ops/fused_conv.h"
#include "ops/internal/device_placement.h"
#include "ops/internal/graph_builder.h"
#include "ops/internal/graph_fusion.h"
#include "ops/internal/loop_frames.h"
#include "ops/internal/memory_limit.h"
#include "ops/internal/node_check.h"
#include "ops/internal/run_plan.h"
#include "ops/op_def.h"
#include "runtime/flush_denormal.h"
#include "runtime/tensor_access.h"
#include "runtime/variable.h"

namespace eager {
namespace internal {

// What a Session keeps across runs: its plans, and per node only what some
// node needs (most need nothing beyond their record in the Graph).
struct SessionState {
  RunPlanCache plans;
  // The graph's TF1 while loops, which plans run as steps (ops/while_loop_ops.h).
  LoopFramesCache loop_frames;
  // Kernel attributes of nodes that omit some of TF's defaults.
  std::unordered_map<int, Attrs> kernel_attrs;
  // A stateful kernel's, across runs (NodeContext::state), of the nodes whose kernel left one.
  std::unordered_map<int, std::unique_ptr<NodeState>> node_states;
  // Resources its nodes share by name (NodeContext::shared_resources).
  SharedResources shared_resources;
  // Graph nodes the last Run ran inside fused steps.
  int64_t last_fused_nodes = 0;
};

}  // namespace internal

namespace {

using internal::Endpoint;
using internal::PlanInput;
using internal::PlanStep;
using internal::RunPlan;

// The Session::Run in progress on this thread, if any: a function call's
// body (ops/functional_ops.h) runs in a Session of its own inside its
// caller's Run, and takes the caller's fuse_ops and adds its fused nodes to
// the caller's count.
struct ActiveRun {
  bool fuse_ops;
  int64_t* fused_nodes;
};
thread_local const ActiveRun* active_run = nullptr;

// Sets active_run for a Run's duration; on leaving, adds this run's fused
// nodes to the enclosing run's.
class ScopedActiveRun {
 public:
  ScopedActiveRun(bool fuse_ops, int64_t* fused_nodes)
      : outer_(active_run), run_{fuse_ops, fused_nodes} {
    active_run = &run_;
  }
  ~ScopedActiveRun() {
    active_run = outer_;
    if (outer_ != nullptr) *outer_->fused_nodes += *run_.fused_nodes;
  }
  ScopedActiveRun(const ScopedActiveRun&) = delete;
  ScopedActiveRun& operator=(const ScopedActiveRun&) = delete;

  static bool OuterFuses() { return active_run == nullptr || active_run->fuse_ops; }

 private:
  const ActiveRun* outer_;
  ActiveRun run_;
};

// eager's kernels compute TF's default layout, NHWC; a node imported with
// another "data_format" must not run as if it were NHWC.
void CheckLayoutIsNhwc(const Node& node) {
  const AttrValue* format = node.FindAttr("data_format");
  if (format == nullptr) return;
  const auto* value = std::get_if<std::string>(format);
  if (value == nullptr || *value != "NHWC") {
    throw UnimplementedError(StrCat("Session::Run: node '", node.name, "' (", node.op,
                                    ") has data_format '", value ? *value : "?",
                                    "'; eager computes only NHWC"));
  }
}

// TF's node context suffix.
std::string NodeContext(const Node& node) { return StrCat("\n\t [[{{node ", node.name, "}}]]"); }

Endpoint Resolve(const Graph& graph, const Fetch& f) {
  if (f.tensor()) {
    const Tensor& t = *f.tensor();
    const Operation op = graph.OperationOf(t);  // throws for eager or another graph's tensors
    return {op.index(), t.symbolic()->index};
  }
  if (f.operation()) {
    const Operation& op = *f.operation();
    EAGER_CHECK(!op.is_none(), "Session::Run: cannot fetch a none Operation");
    EAGER_CHECK(op.graph() == &graph, "Session::Run: operation '", op.name(),
                "' belongs to another graph");
    return {op.index(), -1};
  }
  const std::string& name = *f.name();
  if (name.find(':') != std::string::npos) {
    // Found without Graph::Output, whose symbolic tensors a run does not
    // need (an imported graph would grow them up to this node); TensorByName
    // throws its errors for a name that names no tensor.
    const NodeInput parsed = ParseNodeInput(name);
    const int node = graph.FindNodeIndex(parsed.node);
    if (node < 0 || parsed.control || parsed.index < 0 ||
        static_cast<size_t>(parsed.index) >= graph.node(node).output_specs.size()) {
      const Tensor t = graph.TensorByName(name);
      return {t.symbolic()->node, t.symbolic()->index};
    }
    return {node, parsed.index};
  }
  return {graph.OperationByName(name).index(), -1};
}

// The tensor `key` names, checked to take `value`.
Endpoint FeedEndpoint(const Graph& graph, const Fetch& key, const Tensor& value) {
  const Endpoint e = Resolve(graph, key);
  const Node& node = graph.node(e.first);
  if (e.second < 0) {
    throw InvalidArgumentError(StrCat("Session::Run: cannot feed the operation '", node.name,
                                      "'; feed one of its tensors, e.g. '", node.name, ":0'"));
  }
  // The name only for the messages: a feed that passes costs no string.
  const auto name = [&] { return StrCat(node.name, ":", e.second); };
  if (value.is_symbolic()) {
    throw InvalidArgumentError(StrCat("Session::Run: the value fed for '", name(),
                                      "' is the graph tensor '", value.name(), "'; feed a value"));
  }
  const DType dtype = node.output_specs[static_cast<size_t>(e.second)].dtype;
  const Shape& shape = node.output_specs[static_cast<size_t>(e.second)].shape;
  if (value.dtype() != dtype || !value.shape().IsCompatibleWith(shape)) {
    throw InvalidArgumentError(StrCat("Cannot feed value of dtype ", value.dtype(), " and shape ",
                                      value.shape(), " for Tensor '", name(), "', which has dtype ",
                                      dtype, " and shape ", shape));
  }
  return e;
}

// One Session::Run call of a plan: its steps' outputs, and what is known
// about them, in arrays over the plan's steps. Dropped when the run ends.
class RunState {
 public:
  RunState(Graph& graph, internal::SessionState& session, RunPlan& plan, std::vector<Tensor> feeds)
      : graph_(graph), session_(session), plan_(plan), feeds_(std::move(feeds)) {}

  // Runs the plan's steps and returns the values of its fetches.
  std::vector<std::optional<Tensor>> Run() {
    const size_t num_steps = plan_.steps.size();
    outputs_.resize(num_steps);
    refs_.assign(num_steps, nullptr);
    if (plan_.has_control_flow) dead_.assign(num_steps, 0);
    CountUses();
    for (size_t s = 0; s < num_steps; ++s) {
      RunStep(s);
      Release(s);
    }
    std::vector<std::optional<Tensor>> out;
    out.reserve(plan_.results.size());
    for (const PlanInput& r : plan_.results) {
      if (r.port < 0) {
        out.emplace_back(std::nullopt);
        continue;
      }
      if (r.fed()) {
        out.emplace_back(feeds_[r.feed()]);
        continue;
      }
      const Node& node = graph_.node(plan_.steps[r.step()].node);
      if (IsDead(r)) {
        throw InvalidArgumentError(
            StrCat("Session::Run: the fetched tensor '", node.name, ":", r.port,
                   "' has no value: it is dead, on the untaken branch of a Switch (tf.cond)"));
      }
      out.emplace_back(Value(r, node));
    }
    return out;
  }

 private:
  // Intermediate lifetimes: how many data inputs of the plan's steps read
  // each step's outputs. A step's outputs are dropped once their last
  // reader has run (Release), so a long chain holds O(width) tensors, not
  // one per node; fetched steps keep theirs to the end (variables live in
  // their Variable objects, fed values in feeds_, neither is dropped).
  void CountUses() {
    uses_.assign(plan_.steps.size(), 0);
    for (const PlanInput& in : plan_.inputs) {
      if (!in.control() && !in.fed()) ++uses_[in.step()];
    }
    for (const PlanInput& r : plan_.results) {
      if (!r.fed()) uses_[r.step()] = kPinned;
    }
  }

  // After step s ran (or was found dead): one read fewer of each of its
  // inputs; outputs nobody reads any more (s's own included, when nothing in
  // this run reads them) are freed.
  void Release(size_t s) {
    for (const PlanInput& in : plan_.InputsOf(s)) {
      if (!in.control() && !in.fed()) Drop(in.step());
    }
    if (uses_[s] == 0) std::vector<Tensor>().swap(outputs_[s]);
  }
  void Drop(size_t m) {
    int32_t& uses = uses_[m];
    if (uses == kPinned || uses == 0) return;
    if (--uses == 0) std::vector<Tensor>().swap(outputs_[m]);
  }

  // The attributes step s's kernel gets: the node's own, or (when the node
  // omits some of TF's defaults) the Session's copy with them. The checks
  // TF makes before a kernel first runs are made here once per plan; when
  // they throw (an op type eager lacks, a layout it does not compute), they
  // throw each time such a node must run.
  const Attrs& KernelAttrs(size_t s, const Node& node, const OpDef& def) {
    PlanStep& step = plan_.steps[s];
    if ((step.flags & PlanStep::kChecked) == 0) {
      if (def.compute != nullptr) CheckLayoutIsNhwc(node);
      Attrs attrs = internal::NodeKernelAttrs(node, def);
      internal::CheckNode(node, def, attrs);
      if (attrs.size() != node.attrs.size()) {
        session_.kernel_attrs.try_emplace(step.node, std::move(attrs));
        step.flags |= PlanStep::kOwnAttrs;
      }
      step.flags |= PlanStep::kChecked;
    }
    if ((step.flags & PlanStep::kOwnAttrs) != 0) return session_.kernel_attrs.at(step.node);
    return node.attrs;
  }

  // The resource that ref input `input` of a node reaches (VariableV2's
  // output, passed on by a RefSwitch; a handle).
  Resource& RefResource(const Node& node, const PlanInput& in, size_t input) {
    Resource* r = in.fed() ? nullptr : refs_[in.step()];
    if (r == nullptr) {
      const Node& producer =
          graph_.node(in.fed() ? plan_.feeds[in.feed()].first : plan_.steps[in.step()].node);
      throw InvalidArgumentError(StrCat("node '", node.name, "' (", node.op, "): input ", input,
                                        " must be a variable reference or resource handle; '",
                                        producer.name, "' (", producer.op, ") gives none"));
    }
    return *r;
  }

  // The value `in` names, as input to (or fetch of) `consumer`. A variable
  // reference (VariableV2's output) reads the variable now.
  Tensor Value(const PlanInput& in, const Node& consumer) {
    if (in.fed()) return feeds_[in.feed()];
    const size_t m = in.step();
    const std::vector<Tensor>& outs = outputs_[m];
    if (Resource* r = refs_[m]; r != nullptr && outs.empty()) {
      auto* v = dynamic_cast<Variable*>(r);
      if (v == nullptr) {
        // TF would pass the handle tensor on; eager's handles exist only as
        // the objects ref edges carry.
        throw InvalidArgumentError(
            StrCat("node '", consumer.name, "' (", consumer.op, ") takes a value from '",
                   graph_.node(plan_.steps[m].node).name, "', the handle of ", r->resource_kind(),
                   " '", r->resource_name(), "', which has no value",
                   " (only ops taking a resource input can use it)"));
      }
      if (!v->is_initialized()) {
        throw FailedPreconditionError(StrCat("Attempting to use uninitialized value ",
                                             graph_.node(plan_.steps[m].node).name,
                                             NodeContext(consumer)));
      }
      return v->stored_value();
    }
    if (in.port < 0 || static_cast<size_t>(in.port) >= outs.size()) {
      const Node& node = graph_.node(plan_.steps[m].node);
      throw InvalidArgumentError(StrCat("node '", consumer.name, "' uses output ", in.port,
                                        " of node '", node.name, "' (", node.op, "), which has ",
                                        outs.size(), " outputs when run"));
    }
    return outs[static_cast<size_t>(in.port)];
  }

  // Whether the value `in` names is dead in this run (TF's executor: see
  // ops/control_flow_ops.h; a control input is dead with output 0). Fed
  // tensors and variables never are.
  bool IsDead(const PlanInput& in) const {
    if (in.fed() || dead_.empty()) return false;
    const uint64_t mask = dead_[in.step()];
    const int index = in.control() ? 0 : in.port;
    return index >= 64 ? mask != 0 : ((mask >> index) & 1u) != 0;
  }

  // A node other than Merge with a dead input, data or control, is dead.
  bool HasDeadInput(size_t s) const {
    for (const PlanInput& in : plan_.InputsOf(s)) {
      if (IsDead(in)) return true;
    }
    return false;
  }

  // Merge: its first live input and that input's position among the data
  // inputs (TF's value_index, output 1); dead when none is live.
  void RunMerge(size_t s, const Node& node) {
    int value_index = 0;
    for (const PlanInput& in : plan_.InputsOf(s)) {
      if (in.control()) continue;
      if (!IsDead(in)) {
        outputs_[s] = {Value(in, node), Tensor(static_cast<int32_t>(value_index))};
        return;
      }
      ++value_index;
    }
    dead_[s] = ~uint64_t{0};
  }

  // Switch: `data` on the branch `pred` selects; the other output is dead.
  // A switched variable reference stays a reference (RefSwitch).
  void RunSwitch(size_t s, const Node& node) {
    std::vector<Tensor> inputs;
    for (const PlanInput& in : plan_.InputsOf(s)) {
      if (!in.control()) inputs.push_back(Value(in, node));
    }
    if (inputs.size() != 2) {
      throw InvalidArgumentError(StrCat("node '", node.name, "' (", node.op,
                                        ") needs 2 inputs (data, pred), has ", inputs.size()));
    }
    const Tensor& pred = inputs[1];
    if (pred.dtype() != DType::kBool || pred.num_elements() != 1) {
      throw InvalidArgumentError(StrCat("The second input must be a scalar, but it has shape ",
                                        pred.shape(), " and dtype ", pred.dtype()));
    }
    const bool taken = pred.data<bool>()[0];
    outputs_[s] = {inputs[0], inputs[0]};
    const PlanInput& data = plan_.InputsOf(s)[0];
    if (!data.fed()) refs_[s] = refs_[data.step()];
    dead_[s] = taken ? 1u : 2u;  // output_false is 0, output_true 1
    any_dead_ = true;
  }

  // A fused step (ops/internal/graph_fusion.h): the fused kernel when the
  // bias is one (a vector of the output's channels, of the input's float
  // dtype), else the chain's kernels one after the other, as unfused.
  // Errors name the node of the chain whose kernel threw.
  void RunFused(size_t s) {
    const internal::FusedStep& f = plan_.FusedAt(s);
    if (f.batch_norm >= 0 || f.scale_mul >= 0) return RunFolded(s, f);
    const Node& producer = graph_.node(f.producer);
    const Node& bias_add = graph_.node(f.bias_add);
    std::vector<Tensor> in;
    in.reserve(3);
    for (const PlanInput& i : plan_.InputsOf(s)) {
      if (!i.control()) in.push_back(Value(i, producer));
    }
    const Tensor& x = in[0];
    const Tensor& w = in[1];
    const Tensor& bias = in[2];
    if ((plan_.steps[s].flags & PlanStep::kTypesChecked) == 0) {
      const DType t = x.dtype();
      internal::CheckInputTypes(producer, f.producer_attrs, std::vector<DType>{t, w.dtype()});
      internal::CheckInputTypes(
          bias_add, f.bias_attrs,
          f.bias_first ? std::vector<DType>{bias.dtype(), t} : std::vector<DType>{t, bias.dtype()});
      if (f.activation >= 0) {
        internal::CheckInputTypes(graph_.node(f.activation), f.activation_attrs,
                                  std::vector<DType>{t});
      }
      plan_.steps[s].flags |= PlanStep::kTypesChecked;
    }
    const auto in_context = [&](const Node& node, const auto& run) -> Tensor {
      try {
        return run();
      } catch (const Error& e) {
        ThrowError(e.code(), e.what() + NodeContext(node));
      }
    };
    const bool conv = f.fused_op == &kFusedConv2DOp;
    const int channel_axis = conv ? 3 : (f.producer_attrs.GetBool("transpose_b") ? 0 : 1);
    const bool is_bias = (x.dtype() == DType::kFloat32 || x.dtype() == DType::kFloat64) &&
                         bias.dtype() == x.dtype() && bias.rank() == 1 &&
                         w.rank() == (conv ? 4 : 2) &&
                         bias.shape().dim(0) == w.shape().dim(channel_axis);
    Tensor y;
    if (is_bias) {
      session_.last_fused_nodes += f.activation >= 0 ? 3 : 2;
      y = in_context(producer, [&] { return RunKernel(*f.fused_op, in, f.fused_attrs); });
    } else {
      y = in_context(producer, [&] {
        return RunKernel(*f.producer_op, std::span<const Tensor>(in).first(2), f.producer_attrs);
      });
      const std::vector<Tensor> operands =
          f.bias_first ? std::vector<Tensor>{bias, y} : std::vector<Tensor>{y, bias};
      y = in_context(bias_add, [&] { return RunKernel(*f.bias_op, operands, f.bias_attrs); });
    }
    if (f.activation >= 0 && !(is_bias && f.relu_inside)) {
      y = in_context(graph_.node(f.activation), [&] {
        return RunKernel(*f.activation_op, std::span<const Tensor>(&y, 1), f.activation_attrs);
      });
    }
    outputs_[s] = {std::move(y)};
  }

  // A Conv2D [+ BiasAdd] followed by a per-channel scale and offset, either
  // an inference FusedBatchNormV3 (s = gamma / sqrt(var + epsilon), offset
  // beta - mean * s) or a Mul by s then an Add of o (Keras 3's inference
  // BatchNormalization), [+ activation]: s folded into the filter (w * s)
  // and (bias - mean) * s + beta, or bias * s + o, into _FusedConv2D's bias.
  // Folding costs one multiply per filter element, the filter's size over
  // the output positions (batch * out_h * out_w) of the convolution's own
  // work, where scaling the output costs a pass over the whole output. The
  // vectors are computed in double, as FusedBatchNormV3's kernel computes
  // them. When the tensors are not what the fusion needs (float32, vectors
  // of the filter's output channels), the nodes run one after the other,
  // as unfused.
  void RunFolded(size_t s, const internal::FusedStep& f) {
    const Node& producer = graph_.node(f.producer);
    const bool bn = f.batch_norm >= 0;
    const Node& scale_node = graph_.node(bn ? f.batch_norm : f.scale_mul);
    std::vector<Tensor> in;
    in.reserve(7);
    for (const PlanInput& i : plan_.InputsOf(s)) {
      if (!i.control()) in.push_back(Value(i, producer));
    }
    const bool has_bias = f.bias_add >= 0;
    const Tensor& x = in[0];
    const Tensor& w = in[1];
    // The BN's scale, offset, mean and variance, or the Mul's and the Add's vectors.
    const std::span<const Tensor> vecs =
        std::span<const Tensor>(in).subspan(has_bias ? 3 : 2, bn ? 4 : 2);
    const auto ordered = [](bool vector_first, DType vector, DType t) {
      return vector_first ? std::vector<DType>{vector, t} : std::vector<DType>{t, vector};
    };
    if ((plan_.steps[s].flags & PlanStep::kTypesChecked) == 0) {
      const DType t = x.dtype();
      internal::CheckInputTypes(producer, f.producer_attrs, std::vector<DType>{t, w.dtype()});
      if (has_bias) {
        internal::CheckInputTypes(graph_.node(f.bias_add), f.bias_attrs,
                                  std::vector<DType>{t, in[2].dtype()});
      }
      if (bn) {
        std::vector<DType> bn_types = {t};
        for (const Tensor& v : vecs) bn_types.push_back(v.dtype());
        internal::CheckInputTypes(scale_node, f.batch_norm_attrs, bn_types);
      } else {
        internal::CheckInputTypes(scale_node, f.mul_attrs,
                                  ordered(f.scale_first, vecs[0].dtype(), t));
        internal::CheckInputTypes(graph_.node(f.offset_add), f.add_attrs,
                                  ordered(f.offset_first, vecs[1].dtype(), t));
      }
      if (f.activation >= 0) {
        internal::CheckInputTypes(graph_.node(f.activation), f.activation_attrs,
                                  std::vector<DType>{t});
      }
      plan_.steps[s].flags |= PlanStep::kTypesChecked;
    }
    const auto in_context = [&](const Node& node, const auto& run) -> Tensor {
      try {
        return run();
      } catch (const Error& e) {
        ThrowError(e.code(), e.what() + NodeContext(node));
      }
    };
    const int64_t channels = w.rank() == 4 ? w.shape().dim(3) : -1;
    const auto is_vector = [&](const Tensor& v) {
      return v.dtype() == DType::kFloat32 && v.rank() == 1 && v.shape().dim(0) == channels;
    };
    bool fits = x.dtype() == DType::kFloat32 && w.dtype() == DType::kFloat32 && channels >= 0 &&
                (!has_bias || is_vector(in[2]));
    for (const Tensor& v : vecs) fits = fits && is_vector(v);
    Tensor y;
    if (fits) {
      const auto c = static_cast<size_t>(channels);
      std::vector<double> scale(c);
      std::vector<float> bias(c);
      const auto at = [&](const Tensor& t, size_t i) {
        return static_cast<double>(t.data<float>()[i]);
      };
      for (size_t i = 0; i < c; ++i) {
        const double b = has_bias ? at(in[2], i) : 0.0;
        if (bn) {  // vecs: gamma, beta, mean, variance
          const double epsilon = f.batch_norm_attrs.GetFloat("epsilon");
          scale[i] = at(vecs[0], i) / std::sqrt(at(vecs[3], i) + epsilon);
          bias[i] = static_cast<float>((b - at(vecs[2], i)) * scale[i] + at(vecs[1], i));
        } else {  // vecs: s, o
          scale[i] = at(vecs[0], i);
          bias[i] = static_cast<float>(b * scale[i] + at(vecs[1], i));
        }
      }
      Tensor folded = internal::NewTensor(w.shape(), DType::kFloat32);
      float* fw = internal::MutableData<float>(folded);
      const float* ws = w.data<float>().data();
      for (size_t row = 0; row < static_cast<size_t>(w.num_elements()) / c; ++row) {
        for (size_t k = 0; k < c; ++k) {
          fw[row * c + k] = static_cast<float>(ws[row * c + k] * scale[k]);
        }
      }
      const std::vector<Tensor> conv_in = {
          x, folded, Tensor::FromVector<float>(std::move(bias), Shape{channels})};
      session_.last_fused_nodes += (bn ? 2 : 3) + (has_bias ? 1 : 0) + (f.activation >= 0 ? 1 : 0);
      y = in_context(producer, [&] { return RunKernel(*f.fused_op, conv_in, f.fused_attrs); });
    } else {
      y = in_context(producer, [&] {
        return RunKernel(*f.producer_op, std::span<const Tensor>(in).first(2), f.producer_attrs);
      });
      if (has_bias) {
        const std::vector<Tensor> operands = {y, in[2]};
        y = in_context(graph_.node(f.bias_add),
                       [&] { return RunKernel(*f.bias_op, operands, f.bias_attrs); });
      }
      if (bn) {
        const std::vector<Tensor> bn_args = {y, vecs[0], vecs[1], vecs[2], vecs[3]};
        std::unique_ptr<NodeState> no_state;
        y = in_context(scale_node, [&] {
          return kFusedBatchNormV3Op
              .run({graph_, scale_node, f.batch_norm_attrs, {}, bn_args, &no_state, {}})
              .values[0];
        });
      } else {
        const auto pair = [&](bool vector_first, const Tensor& v) {
          return vector_first ? std::vector<Tensor>{v, y} : std::vector<Tensor>{y, v};
        };
        std::vector<Tensor> operands = pair(f.scale_first, vecs[0]);
        y = in_context(scale_node, [&] { return RunKernel(*f.mul_op, operands, f.mul_attrs); });
        operands = pair(f.offset_first, vecs[1]);
        y = in_context(graph_.node(f.offset_add),
                       [&] { return RunKernel(*f.add_op, operands, f.add_attrs); });
      }
    }
    if (f.activation >= 0 && !(fits && f.relu_inside)) {
      y = in_context(graph_.node(f.activation), [&] {
        return RunKernel(*f.activation_op, std::span<const Tensor>(&y, 1), f.activation_attrs);
      });
    }
    outputs_[s] = {std::move(y)};
  }

  void RunStep(size_t s) {
    const Node& node = graph_.node(plan_.steps[s].node);
    try {
      if ((plan_.steps[s].flags & PlanStep::kFused) != 0) return RunFused(s);
      // Merge runs with dead inputs; any other node with one is dead
      // without running, even of a type eager lacks.
      const OpDef* def = plan_.OpOf(s);
      if (def != nullptr && def->flow == OpDef::Flow::kMerge) return RunMerge(s, node);
      if (any_dead_ && HasDeadInput(s)) {
        dead_[s] = ~uint64_t{0};
        return;
      }
      if (def == nullptr) {
        throw UnimplementedError(StrCat("Session::Run: node '", node.name, "' has op type '",
                                        node.op, "', which eager does not implement"));
      }
      const Attrs& attrs = KernelAttrs(s, node, *def);
      if (def->flow == OpDef::Flow::kSwitch) return RunSwitch(s, node);
      Compute(s, node, *def, attrs);
    } catch (const Error& e) {
      const std::string message = e.what();
      if (message.find("[[{{node ") != std::string::npos) throw;  // context already there
      ThrowError(e.code(), message + NodeContext(node));
    }
  }

  void Compute(size_t s, const Node& node, const OpDef& def, const Attrs& node_attrs) {
    const std::span<const PlanInput> resolved = plan_.InputsOf(s);
    // The run's one input vector, emptied when the step ends (so that it
    // holds no tensor longer than the step): one allocation per run, not per node.
    struct Emptied {
      std::vector<Tensor>& v;
      std::vector<uint8_t>& mask;
      ~Emptied() {
        v.clear();
        mask.clear();
      }
    } emptied{scratch_inputs_, handle_mask_};
    std::vector<Tensor>& inputs = scratch_inputs_;
    inputs.reserve(resolved.size());
    std::vector<Resource*> refs;
    // A handle is output 0 of its producer (a TensorArray's output 1 is its flow, a value).
    const auto is_ref = [&](size_t i) {
      return def.IsRefInput(i) || (def.handle_inputs && !resolved[i].fed() &&
                                   resolved[i].port == 0 && refs_[resolved[i].step()] != nullptr);
    };
    for (size_t i = 0; i < resolved.size(); ++i) {
      const PlanInput& in = resolved[i];
      if (in.control()) continue;
      const bool ref = is_ref(i);
      if (def.handle_inputs) handle_mask_.push_back(ref ? 1 : 0);
      if (ref) {
        refs.push_back(&RefResource(node, in, i));
      } else if (!in.fed() && uses_[in.step()] == 1 && refs_[in.step()] == nullptr &&
                 static_cast<size_t>(in.port) < outputs_[in.step()].size()) {
        // Its last reader: the value moves in, so that a kernel holding the
        // only reference may reuse it (a TensorList set item by item in a loop).
        inputs.push_back(std::move(outputs_[in.step()][static_cast<size_t>(in.port)]));
      } else {
        inputs.push_back(Value(in, node));
      }
    }
    // A lookup table has no one dtype: its consumers (ops/lookup_ops.h)
    // check their keys and values against the table's themselves.
    // A step standing for other nodes (a while loop, ops/while_loop_ops.h)
    // is not checked against its node's signature.
    const bool stands_in = def.type.starts_with('_') && node.op != def.type;
    if ((plan_.steps[s].flags & PlanStep::kTypesChecked) == 0 && !stands_in &&
        std::all_of(refs.begin(), refs.end(),
                    [](Resource* r) { return dynamic_cast<Variable*>(r) != nullptr; })) {
      // TF refuses a node whose type attributes disagree with its inputs
      // (AddV2 with T = int32 on floats); eager's kernels follow the inputs.
      std::vector<DType> dtypes;
      size_t next_ref = 0, next_value = 0;
      for (size_t i = 0; i < resolved.size(); ++i) {
        if (resolved[i].control()) continue;
        dtypes.push_back(is_ref(i) ? static_cast<Variable*>(refs[next_ref++])->dtype()
                                   : inputs[next_value++].dtype());
      }
      internal::CheckInputTypes(node, node_attrs, dtypes);
      plan_.steps[s].flags |= PlanStep::kTypesChecked;
    }
    if (def.run != nullptr) {
      NodeOutputs out = RunNodeKernel(plan_.steps[s].node, node, def, node_attrs, refs, inputs);
      outputs_[s] = std::move(out.values);
      refs_[s] = out.ref;
      return;
    }
    const size_t num_attr_inputs = def.input_attrs.size();
    if (inputs.size() < num_attr_inputs) {
      throw InvalidArgumentError(StrCat("node '", node.name, "' (", node.op, ") has ",
                                        inputs.size(), " inputs; expected at least ",
                                        num_attr_inputs));
    }
    const size_t num_tensors = inputs.size() - num_attr_inputs;
    const std::span<const Tensor> all(inputs);
    std::vector<Tensor>& out = outputs_[s];
    out.clear();
    if (num_attr_inputs == 0) {
      out.push_back(RunKernel(def, all, node_attrs));
      return;
    }
    Attrs attrs = node_attrs;
    internal::SetInputAttrs(node, def, all.subspan(num_tensors), attrs);
    out.push_back(RunKernel(def, all.first(num_tensors), attrs));
  }

  // A graph-only kernel, with the node's state slot: the Session's, when an
  // earlier run left one, else a new one the Session keeps if the kernel
  // fills it (also when it then throws).
  NodeOutputs RunNodeKernel(int n, const Node& node, const OpDef& def, const Attrs& attrs,
                            std::span<Resource* const> refs, std::span<const Tensor> inputs) {
    auto& states = session_.node_states;
    if (!states.empty()) {
      if (auto it = states.find(n); it != states.end()) {
        return def.run({graph_, node, attrs, refs, inputs, &it->second, handle_mask_,
                        &session_.shared_resources});
      }
    }
    std::unique_ptr<NodeState> state;
    const auto keep = [&] {
      if (state != nullptr) states.emplace(n, std::move(state));
    };
    try {
      NodeOutputs out = def.run(
          {graph_, node, attrs, refs, inputs, &state, handle_mask_, &session_.shared_resources});
      keep();
      return out;
    } catch (...) {
      keep();
      throw;
    }
  }

  Graph& graph_;
  internal::SessionState& session_;
  RunPlan& plan_;
  std::vector<Tensor> feeds_;  // the values of plan_.feeds
  std::vector<std::vector<Tensor>> outputs_;
  std::vector<Tensor> scratch_inputs_;  // Compute's, empty between steps
  std::vector<uint8_t> handle_mask_;    // Compute's NodeContext::input_is_handle, likewise
  std::vector<Resource*> refs_;         // per step: the resource its output 0 refers to, if any
  std::vector<uint64_t> dead_;  // per step: bit i set when output i is dead (with Switch/Merge)
  // Per step: reads of its outputs still to come in this run (CountUses).
  static constexpr int32_t kPinned = -1;  // fetched: kept to the end
  std::vector<int32_t> uses_;
  bool any_dead_ = false;  // whether a Switch ran (else nothing is dead)
};

}  // namespace

Session::Session(Graph& graph, SessionOptions options)
    : graph_(graph), options_(options), state_(std::make_unique<internal::SessionState>()) {}
Session::~Session() = default;

int64_t Session::last_run_fused_nodes() const { return state_->last_fused_nodes; }

std::vector<std::optional<Tensor>> Session::Run(const std::vector<Fetch>& fetches,
                                                const Feeds& feeds) {
  // Every node runs in TF's kernel mode (denormals flushed, round to
  // nearest), set once here rather than per node.
  const internal::ScopedFlushDenormal flush;
  const internal::ScopedMemoryLimit limit(options_.memory_limit_bytes);
  const internal::ScopedLoopLimit loops(options_.max_loop_iterations);
  const internal::ScopedLoopDeadline deadline(options_.operation_timeout_in_ms);
  // Feeds in the order given, each checked; a tensor fed twice gets the last value.
  std::vector<std::pair<Endpoint, Tensor>> fed;
  fed.reserve(feeds.size());
  for (const auto& [key, value] : feeds) fed.emplace_back(FeedEndpoint(graph_, key, value), value);
  std::stable_sort(fed.begin(), fed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Endpoint> fed_endpoints;
  std::vector<Tensor> fed_values;
  for (auto& [endpoint, value] : fed) {
    if (!fed_endpoints.empty() && fed_endpoints.back() == endpoint) {
      fed_values.back() = std::move(value);
      continue;
    }
    fed_endpoints.push_back(endpoint);
    fed_values.push_back(std::move(value));
  }
  std::vector<Endpoint> endpoints;
  endpoints.reserve(fetches.size());
  for (const Fetch& f : fetches) endpoints.push_back(Resolve(graph_, f));
  RunPlan& plan = state_->plans.Get(graph_, endpoints, fed_endpoints, &state_->loop_frames);
  if (!plan.devices_checked) {
    for (const PlanStep& step : plan.steps) {
      internal::CheckDevice(graph_.node(step.node), options_.allow_soft_placement);
    }
    plan.devices_checked = true;
  }
  const bool fuse = options_.fuse_ops && ScopedActiveRun::OuterFuses();
  if (!plan.fusion_done && fuse) internal::FuseRunPlan(graph_, plan);
  state_->last_fused_nodes = 0;
  const ScopedActiveRun active(fuse, &state_->last_fused_nodes);
  return RunState(graph_, *state_, plan, std::move(fed_values)).Run();
}

Tensor Session::Run(const Tensor& fetch, const Feeds& feeds) {
  return *Run(std::vector<Fetch>{fetch}, feeds)[0];
}

Tensor Session::Run(const char* tensor_name, const Feeds& feeds) {
  std::string name(tensor_name);
  if (name.find(':') == std::string::npos) {
    throw InvalidArgumentError(StrCat("Session::Run(\"", name,
                                      "\"): a tensor name needs its output index (\"", name,
                                      ":0\"); run an operation with Run(Operation)"));
  }
  return *Run(std::vector<Fetch>{std::move(name)}, feeds)[0];
}

void Session::Run(const Operation& target, const Feeds& feeds) {
  if (target.is_none()) return;
  Run(std::vector<Fetch>{target}, feeds);
}

}  // namespace eager
