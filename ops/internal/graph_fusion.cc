#include "ops/internal/graph_fusion.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "ops/fused_conv.h"
#include "ops/fused_matmul.h"
#include "ops/internal/graph_builder.h"
#include "ops/internal/node_check.h"

namespace eager::internal {
namespace {

bool IsProducer(std::string_view op) { return op == "Conv2D" || op == "MatMul"; }
bool IsBiasAdd(std::string_view op) { return op == "BiasAdd" || op == "Add" || op == "AddV2"; }
// Activations TF's remapper fuses after a bias; Relu goes inside the kernel.
bool IsActivation(std::string_view op) {
  return op == "Relu" || op == "Relu6" || op == "Elu" || op == "LeakyRelu";
}

// What the plan says about who reads each step's outputs.
struct Readers {
  std::vector<int32_t> data_reads;  // data inputs of later steps reading it
  std::vector<int32_t> reader;      // the last step reading it (meaningful when data_reads == 1)
  std::vector<uint8_t> pinned;      // fetched, or the source of a control input
  std::vector<uint8_t> past_port0;  // an output other than its first is read or fetched
};

Readers FindReaders(const RunPlan& plan) {
  const size_t n = plan.steps.size();
  Readers r{std::vector<int32_t>(n, 0), std::vector<int32_t>(n, -1), std::vector<uint8_t>(n, 0),
            std::vector<uint8_t>(n, 0)};
  for (size_t s = 0; s < n; ++s) {
    for (const PlanInput& in : plan.InputsOf(s)) {
      if (in.fed()) continue;
      if (in.control()) {
        r.pinned[in.step()] = 1;
        continue;
      }
      ++r.data_reads[in.step()];
      r.reader[in.step()] = static_cast<int32_t>(s);
      if (in.port != 0) r.past_port0[in.step()] = 1;
    }
  }
  for (const PlanInput& res : plan.results) {
    if (res.fed()) continue;
    r.pinned[res.step()] = 1;
    if (res.port != 0) r.past_port0[res.step()] = 1;
  }
  return r;
}

// Step s's output is read by exactly one step, as data, and by nothing else.
bool ReadOnlyOnce(const Readers& r, size_t s) { return r.data_reads[s] == 1 && !r.pinned[s]; }

std::vector<PlanInput> DataInputs(const RunPlan& plan, size_t s) {
  std::vector<PlanInput> data;
  for (const PlanInput& in : plan.InputsOf(s)) {
    if (!in.control()) data.push_back(in);
  }
  return data;
}

// The kernel attributes of step s's node when it passes the checks its own
// step would make before running (TF's signature, an NHWC layout, all
// inputs tensors); nullopt otherwise, so that the node is not fused and
// fails, unfused, as it would.
// `node_kernel`: the op may be a node kernel (OpDef::run) rather than a
// tensor kernel.
std::optional<Attrs> CheckedAttrs(const Graph& graph, const RunPlan& plan, size_t s,
                                  bool node_kernel = false) {
  const OpDef* def = plan.OpOf(s);
  if (def == nullptr || !def->input_attrs.empty()) return std::nullopt;
  if (def->compute == nullptr && !(node_kernel && def->run != nullptr)) return std::nullopt;
  const Node& node = graph.node(plan.steps[s].node);
  if (const AttrValue* format = node.FindAttr("data_format"); format != nullptr) {
    const auto* value = std::get_if<std::string>(format);
    if (value == nullptr || *value != "NHWC") return std::nullopt;
  }
  try {
    Attrs attrs = NodeKernelAttrs(node, *def);
    CheckNode(node, *def, attrs);
    return attrs;
  } catch (const Error&) {
    return std::nullopt;
  }
}

// Makes step a, if it is an activation reading f's last node (step `last`)
// as its only reader, the chain's last node.
void MatchActivation(const Graph& graph, const RunPlan& plan, const Readers& r, size_t last,
                     FusedStep& f) {
  if (!ReadOnlyOnce(r, last)) return;
  const auto a = static_cast<size_t>(r.reader[last]);
  const std::vector<PlanInput> act_in = DataInputs(plan, a);
  if (!IsActivation(graph.node(plan.steps[a].node).op) || act_in.size() != 1 ||
      act_in[0].port != 0) {
    return;
  }
  if (std::optional<Attrs> act_attrs = CheckedAttrs(graph, plan, a)) {
    f.activation = plan.steps[a].node;
    f.activation_op = plan.OpOf(a);
    f.activation_attrs = std::move(*act_attrs);
    f.relu_inside = graph.node(f.activation).op == "Relu";
    f.step = static_cast<int32_t>(a);
  }
}

// The chain ending at step `last` whose bias add is step b, if it fuses.
std::optional<FusedStep> MatchAt(const Graph& graph, const RunPlan& plan, const Readers& r,
                                 size_t b) {
  if (!IsBiasAdd(graph.node(plan.steps[b].node).op)) return std::nullopt;
  const std::vector<PlanInput> operands = DataInputs(plan, b);
  if (operands.size() != 2) return std::nullopt;
  FusedStep f;
  size_t p = 0;
  bool found = false;
  for (size_t i = 0; i < 2 && !found; ++i) {
    // BiasAdd's bias is its second input; Add's may be either.
    if (i == 1 && graph.node(plan.steps[b].node).op == "BiasAdd") break;
    const PlanInput& in = operands[i];
    if (in.fed() || in.port != 0) continue;
    if (!IsProducer(graph.node(plan.steps[in.step()].node).op)) continue;
    if (!ReadOnlyOnce(r, in.step())) continue;
    p = in.step();
    f.bias_first = i == 1;
    found = true;
  }
  if (!found || DataInputs(plan, p).size() != 2) return std::nullopt;
  std::optional<Attrs> producer_attrs = CheckedAttrs(graph, plan, p);
  std::optional<Attrs> bias_attrs = CheckedAttrs(graph, plan, b);
  if (!producer_attrs || !bias_attrs) return std::nullopt;
  f.producer = plan.steps[p].node;
  f.bias_add = plan.steps[b].node;
  f.producer_op = plan.OpOf(p);
  f.bias_op = plan.OpOf(b);
  f.producer_attrs = std::move(*producer_attrs);
  f.bias_attrs = std::move(*bias_attrs);
  f.step = static_cast<int32_t>(b);
  MatchActivation(graph, plan, r, b, f);
  const bool conv = graph.node(f.producer).op == "Conv2D";
  f.fused_op = conv ? &kFusedConv2DOp : &kFusedMatMulOp;
  f.fused_attrs = f.producer_attrs;
  f.fused_attrs.Set("relu", f.relu_inside);
  return f;
}

// The chain Conv2D [-> BiasAdd] -> FusedBatchNormV3 [-> activation] whose
// batch normalization is step bn, if it fuses: inference (is_training
// false), NHWC, float32 (T and U), only its y read (by one step, or
// fetched), the convolution and the bias sum read by the next node alone.
std::optional<FusedStep> MatchBatchNormAt(const Graph& graph, const RunPlan& plan, const Readers& r,
                                          size_t bn) {
  if (graph.node(plan.steps[bn].node).op != "FusedBatchNormV3" || r.past_port0[bn]) {
    return std::nullopt;
  }
  const std::vector<PlanInput> bn_in = DataInputs(plan, bn);
  if (bn_in.size() != 5 || bn_in[0].fed() || bn_in[0].port != 0) return std::nullopt;
  std::optional<Attrs> bn_attrs = CheckedAttrs(graph, plan, bn, /*node_kernel=*/true);
  if (!bn_attrs || !bn_attrs->Has("is_training") || bn_attrs->GetBool("is_training") ||
      !bn_attrs->Has("epsilon") || !bn_attrs->Has("T") || !bn_attrs->Has("U") ||
      bn_attrs->GetType("T") != DType::kFloat32 || bn_attrs->GetType("U") != DType::kFloat32) {
    return std::nullopt;
  }
  FusedStep f;
  size_t p = bn_in[0].step();
  if (!ReadOnlyOnce(r, p)) return std::nullopt;
  const std::string& p_op = graph.node(plan.steps[p].node).op;
  f.bias_add = -1;
  if (p_op == "BiasAdd") {  // Add/AddV2 need not be a bias: left to MatchAt
    const size_t b = p;
    const std::vector<PlanInput> operands = DataInputs(plan, b);
    if (operands.size() != 2 || operands[0].fed() || operands[0].port != 0) return std::nullopt;
    p = operands[0].step();
    if (graph.node(plan.steps[p].node).op != "Conv2D" || !ReadOnlyOnce(r, p)) return std::nullopt;
    std::optional<Attrs> bias_attrs = CheckedAttrs(graph, plan, b);
    if (!bias_attrs) return std::nullopt;
    f.bias_add = plan.steps[b].node;
    f.bias_op = plan.OpOf(b);
    f.bias_attrs = std::move(*bias_attrs);
  } else if (p_op != "Conv2D") {
    return std::nullopt;
  }
  if (DataInputs(plan, p).size() != 2) return std::nullopt;
  std::optional<Attrs> producer_attrs = CheckedAttrs(graph, plan, p);
  if (!producer_attrs) return std::nullopt;
  f.producer = plan.steps[p].node;
  f.producer_op = plan.OpOf(p);
  f.producer_attrs = std::move(*producer_attrs);
  f.batch_norm = plan.steps[bn].node;
  f.batch_norm_attrs = std::move(*bn_attrs);
  f.step = static_cast<int32_t>(bn);
  MatchActivation(graph, plan, r, bn, f);
  f.fused_op = &kFusedConv2DOp;
  f.fused_attrs = f.producer_attrs;
  f.fused_attrs.Set("relu", f.relu_inside);
  return f;
}

// The chain Conv2D [-> BiasAdd] -> Mul(., s) -> Add/AddV2(., o)
// [-> activation] whose add is step `add`, if it fuses (either operand order
// of the Mul and the Add; each intermediate read by the next node alone).
// Whether s and o are vectors of the filter's output channels is known
// only at run time: the step runs the nodes one by one when they are not.
std::optional<FusedStep> MatchAffineAt(const Graph& graph, const RunPlan& plan, const Readers& r,
                                       size_t add) {
  const std::string& add_type = graph.node(plan.steps[add].node).op;
  if (add_type != "Add" && add_type != "AddV2") return std::nullopt;
  const std::vector<PlanInput> add_in = DataInputs(plan, add);
  if (add_in.size() != 2) return std::nullopt;
  // Step `from` feeds `in` through its first output, read there alone.
  const auto only_reader = [&](const PlanInput& in) {
    return !in.fed() && in.port == 0 && ReadOnlyOnce(r, in.step());
  };
  FusedStep f;
  std::optional<size_t> mul;
  for (size_t i = 0; i < 2 && !mul; ++i) {
    if (only_reader(add_in[i]) && graph.node(plan.steps[add_in[i].step()].node).op == "Mul") {
      mul = add_in[i].step();
      f.offset_first = i == 1;
    }
  }
  if (!mul) return std::nullopt;
  const std::vector<PlanInput> mul_in = DataInputs(plan, *mul);
  if (mul_in.size() != 2) return std::nullopt;
  std::optional<size_t> p, b;
  for (size_t i = 0; i < 2 && !p; ++i) {
    if (!only_reader(mul_in[i])) continue;
    const size_t from = mul_in[i].step();
    const std::string& op = graph.node(plan.steps[from].node).op;
    if (op == "Conv2D") {
      p = from;
    } else if (op == "BiasAdd") {
      const std::vector<PlanInput> operands = DataInputs(plan, from);
      if (operands.size() != 2 || !only_reader(operands[0]) ||
          graph.node(plan.steps[operands[0].step()].node).op != "Conv2D") {
        continue;
      }
      b = from;
      p = operands[0].step();
    } else {
      continue;
    }
    f.scale_first = i == 1;
  }
  if (!p || DataInputs(plan, *p).size() != 2) return std::nullopt;
  std::optional<Attrs> producer_attrs = CheckedAttrs(graph, plan, *p);
  std::optional<Attrs> mul_attrs = CheckedAttrs(graph, plan, *mul);
  std::optional<Attrs> add_attrs = CheckedAttrs(graph, plan, add);
  if (!producer_attrs || !mul_attrs || !add_attrs) return std::nullopt;
  f.bias_add = -1;
  if (b) {
    std::optional<Attrs> bias_attrs = CheckedAttrs(graph, plan, *b);
    if (!bias_attrs) return std::nullopt;
    f.bias_add = plan.steps[*b].node;
    f.bias_op = plan.OpOf(*b);
    f.bias_attrs = std::move(*bias_attrs);
  }
  f.producer = plan.steps[*p].node;
  f.producer_op = plan.OpOf(*p);
  f.producer_attrs = std::move(*producer_attrs);
  f.scale_mul = plan.steps[*mul].node;
  f.mul_op = plan.OpOf(*mul);
  f.mul_attrs = std::move(*mul_attrs);
  f.offset_add = plan.steps[add].node;
  f.add_op = plan.OpOf(add);
  f.add_attrs = std::move(*add_attrs);
  f.step = static_cast<int32_t>(add);
  MatchActivation(graph, plan, r, add, f);
  f.fused_op = &kFusedConv2DOp;
  f.fused_attrs = f.producer_attrs;
  f.fused_attrs.Set("relu", f.relu_inside);
  return f;
}

}  // namespace

void FuseRunPlan(const Graph& graph, RunPlan& plan) {
  plan.fusion_done = true;
  if (plan.has_control_flow) return;
  const Readers readers = FindReaders(plan);
  const size_t n = plan.steps.size();
  // Per step: absorbed into a later fused step, or the index of its
  // FusedStep among `found`, or -1.
  std::vector<uint8_t> absorbed(n, 0);
  std::vector<int32_t> fused_at(n, -1);
  std::vector<FusedStep> found;
  // Old steps of each chain: producer, bias add, batch norm or scale Mul,
  // offset Add, activation (n: none).
  std::vector<std::array<size_t, 5>> chain;
  const auto take = [&](FusedStep f, std::array<size_t, 5> c) {
    for (const size_t s : c) {
      if (s != n && (absorbed[s] || fused_at[s] >= 0)) return;
    }
    const auto last = static_cast<size_t>(f.step);
    for (const size_t s : c) {
      if (s != n && s != last) absorbed[s] = 1;
    }
    fused_at[last] = static_cast<int32_t>(found.size());
    chain.push_back(c);
    found.push_back(std::move(f));
  };
  // Batch normalizations first: their Conv2D + BiasAdd would match below.
  for (size_t add = 0; add < n; ++add) {
    std::optional<FusedStep> f = MatchAffineAt(graph, plan, readers, add);
    if (!f) continue;
    const size_t mul = DataInputs(plan, add)[f->offset_first ? 1 : 0].step();
    const size_t x = DataInputs(plan, mul)[f->scale_first ? 1 : 0].step();
    const size_t b = f->bias_add >= 0 ? x : n;
    const size_t p = f->bias_add >= 0 ? DataInputs(plan, b)[0].step() : x;
    const auto last = static_cast<size_t>(f->step);
    take(std::move(*f), {p, b, mul, add, last != add ? last : n});
  }
  for (size_t bn = 0; bn < n; ++bn) {
    std::optional<FusedStep> f = MatchBatchNormAt(graph, plan, readers, bn);
    if (!f) continue;
    const size_t x = DataInputs(plan, bn)[0].step();
    const size_t b = f->bias_add >= 0 ? x : n;
    const size_t p = f->bias_add >= 0 ? DataInputs(plan, b)[0].step() : x;
    const auto last = static_cast<size_t>(f->step);
    take(std::move(*f), {p, b, bn, n, last != bn ? last : n});
  }
  for (size_t b = 0; b < n; ++b) {
    if (absorbed[b] || fused_at[b] >= 0) continue;
    std::optional<FusedStep> f = MatchAt(graph, plan, readers, b);
    if (!f) continue;
    const size_t p = DataInputs(plan, b)[f->bias_first ? 1 : 0].step();
    const auto last = static_cast<size_t>(f->step);
    take(std::move(*f), {p, b, n, n, last != b ? last : n});
  }
  if (found.empty()) return;

  // The plan again without the absorbed steps; a fused step's inputs are
  // the producer's two, the bias (if any), the batch norm's scale, offset,
  // mean and variance (if any), then the chain's control inputs.
  std::vector<int32_t> renumbered(n, -1);
  std::vector<PlanStep> steps;
  std::vector<PlanInput> inputs;
  std::vector<FusedStep> fused;
  fused.reserve(found.size());
  const auto remap = [&](PlanInput in) {
    if (!in.fed()) in.from = renumbered[in.step()];
    return in;
  };
  for (size_t s = 0; s < n; ++s) {
    if (absorbed[s]) continue;
    PlanStep step = plan.steps[s];
    if (const int32_t k = fused_at[s]; k >= 0) {
      const auto& [p, b, bn, add, a] = chain[static_cast<size_t>(k)];
      FusedStep& f = found[static_cast<size_t>(k)];
      for (const PlanInput& in : DataInputs(plan, p)) inputs.push_back(remap(in));
      if (b != n) inputs.push_back(remap(DataInputs(plan, b)[f.bias_first ? 0 : 1]));
      if (add != n) {  // bn is the Mul: its vector, then the Add's
        inputs.push_back(remap(DataInputs(plan, bn)[f.scale_first ? 0 : 1]));
        inputs.push_back(remap(DataInputs(plan, add)[f.offset_first ? 0 : 1]));
      } else if (bn != n) {
        const std::vector<PlanInput> bn_in = DataInputs(plan, bn);
        for (size_t i = 1; i < bn_in.size(); ++i) inputs.push_back(remap(bn_in[i]));
      }
      for (const size_t c : {p, b, bn, add, a}) {
        if (c == n) continue;
        for (const PlanInput& in : plan.InputsOf(c)) {
          if (in.control()) inputs.push_back(remap(in));
        }
      }
      step.flags = PlanStep::kFused;
      f.step = static_cast<int32_t>(steps.size());
      fused.push_back(std::move(f));  // in step order, as RunPlan::FusedAt searches
    } else {
      for (const PlanInput& in : plan.InputsOf(s)) inputs.push_back(remap(in));
    }
    step.inputs_end = static_cast<uint32_t>(inputs.size());
    renumbered[s] = static_cast<int32_t>(steps.size());
    steps.push_back(step);
  }
  for (PlanInput& res : plan.results) res = remap(res);
  plan.steps = std::move(steps);
  plan.inputs = std::move(inputs);
  plan.fused = std::move(fused);
}

}  // namespace eager::internal
