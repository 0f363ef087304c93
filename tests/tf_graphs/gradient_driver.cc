// gradient_driver: eager's side of the gradient comparisons with TF
// (gradients_test.py).
//
//   gradient_driver IN PLAN OUT
//
// Reads each case's inputs from the bundle IN ("NAME/x", ...) and runs every
// line of the text file PLAN:
//
//   bga    NAME                  s0, s1 -> BroadcastGradientArgs r0, r1
//   prod   NAME KEEP AXES...     x, u   -> Prod's gradient of x (upstream u)
//   select NAME                  c, t, e, u -> SelectV2's gradients of t, e
//
// each twice: eagerly ("NAME/eager/r0") and in a graph whose placeholders
// have every dimension unknown, fed the same values when a Session runs it
// ("NAME/graph/r0"). The gradient functions are the ops' own (OpDef::
// gradient), called as a GradientTape or Gradients() calls them. A mode that
// fails writes "NAME/MODE/.error" (eager's message) instead of its values.
// Exit code 0 when OUT was written.
#include <exception>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "eager.h"
#include "ops/binary_ops.h"
#include "ops/execute.h"
#include "ops/op_def.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"

namespace {

using eager::Tensor;
using Outputs = std::map<std::string, Tensor>;

// A placeholder of x's dtype and rank with every dimension unknown.
Tensor UnknownDims(const Tensor& x, std::string_view name) {
  return eager::Placeholder(
      x.dtype(), eager::Shape::Partial(std::vector<int64_t>(static_cast<size_t>(x.rank()), -1)),
      name);
}

// Runs `compute` on the values (eagerly), then on placeholders in a graph
// fed with them, writing "NAME/eager/KEY" and "NAME/graph/KEY".
void BothModes(const std::string& name, const std::vector<Tensor>& values,
               const std::function<Outputs(const std::vector<Tensor>&)>& compute,
               eager::BundleWriter& out) {
  const auto write = [&](const std::string& mode, const std::function<Outputs()>& run) {
    try {
      std::string prefix = name;
      prefix += "/";
      prefix += mode;
      prefix += "/";
      for (const auto& [key, value] : run()) out.Add(prefix + key, value);
    } catch (const eager::Error& e) {
      std::string key = name;
      key += "/";
      key += mode;
      key += "/.error";
      out.Add(key, Tensor(std::string(e.what())));
    }
  };
  write("eager", [&] { return compute(values); });
  write("graph", [&] {
    eager::Graph graph;
    eager::Graph::AsDefault in(graph);
    std::vector<Tensor> inputs;
    eager::Feeds feeds;
    for (size_t i = 0; i < values.size(); ++i) {
      inputs.push_back(UnknownDims(values[i], "in" + std::to_string(i)));
      feeds.emplace_back(inputs.back(), values[i]);
    }
    const Outputs symbolic = compute(inputs);
    eager::Session sess(graph);
    Outputs result;
    for (const auto& [key, t] : symbolic) result.emplace(key, sess.Run(t, feeds));
    return result;
  });
}

Outputs Bga(const std::vector<Tensor>& in) {
  auto [r0, r1] = eager::BroadcastGradientArgs(in[0], in[1]);
  return {{"r0", r0}, {"r1", r1}};
}

std::function<Outputs(const std::vector<Tensor>&)> ProdGradient(std::vector<int64_t> axes,
                                                                bool keep) {
  return [axes = std::move(axes), keep](const std::vector<Tensor>& in) {
    const eager::Attrs attrs{{"axis", axes}, {"keep_dims", keep}};
    const Tensor y = eager::Execute(eager::kProdOp, in[0], attrs);
    const eager::OpCall call{.op = &eager::kProdOp, .inputs = {in[0]}, .output = y, .attrs = attrs};
    return Outputs{{"dx", *eager::kProdOp.gradient(call, in[1])[0]}};
  };
}

Outputs SelectGradient(const std::vector<Tensor>& in) {
  const Tensor y = eager::SelectV2(in[0], in[1], in[2]);
  const eager::OpCall call{
      .op = &eager::kSelectV2Op, .inputs = {in[0], in[1], in[2]}, .output = y, .attrs = {}};
  const auto grads = eager::kSelectV2Op.gradient(call, in[3]);
  return {{"dt", *grads[1]}, {"de", *grads[2]}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: gradient_driver IN PLAN OUT\n";
    return 2;
  }
  try {
    const eager::BundleReader in(argv[1]);
    eager::BundleWriter out(argv[3]);
    std::ifstream plan(argv[2]);
    if (!plan) throw eager::NotFoundError(std::string("cannot open plan ") + argv[2]);
    for (std::string text; std::getline(plan, text);) {
      std::istringstream words(text);
      std::string kind, name;
      if (!(words >> kind >> name)) continue;
      const auto read = [&](const char* key) { return in.Read(name + "/" + key); };
      if (kind == "bga") {
        BothModes(name, {read("s0"), read("s1")}, Bga, out);
      } else if (kind == "prod") {
        int keep = 0;
        words >> keep;
        std::vector<int64_t> axes;
        for (int64_t a; words >> a;) axes.push_back(a);
        BothModes(name, {read("x"), read("u")}, ProdGradient(axes, keep != 0), out);
      } else if (kind == "select") {
        BothModes(name, {read("c"), read("t"), read("e"), read("u")}, SelectGradient, out);
      } else {
        throw eager::InvalidArgumentError("unknown plan line: " + text);
      }
    }
    out.Finish();
  } catch (const std::exception& e) {
    std::cerr << "gradient_driver: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
