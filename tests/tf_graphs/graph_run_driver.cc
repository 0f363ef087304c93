// graph_run_driver: eager's side of the graph differential test (TF -> eager).
//
//   graph_run_driver META CKPT FEEDS PLAN OUT
//   graph_run_driver --ops
//
// Imports the TF1 MetaGraphDef META (tf.compat.v1.train.import_meta_graph),
// restores CKPT with the Saver its SaverDef describes, then runs every line of
// the text file PLAN in one Session:
//
//   run   NAME  <fetches...> | <fed tensor names...>
//   train NAME  STEPS TARGET_OP <fetches...> | <fed tensor names...>
//   save  NAME  PREFIX
//   grads NAME  TARGET <variable nodes...> | <fed tensor names...>
//   minimize NAME OPTIMIZER STEPS LOSS <fetches...> | <fed tensor names...>
//
// "run" fetches the tensors once; "train" first runs the operation TARGET_OP
// STEPS times with the same feeds, then fetches; "save" saves the variables
// with the imported Saver to the checkpoint PREFIX (TF restores it); "grads"
// adds eager::Gradients of TARGET (a tensor name) with respect to the named
// variables to the graph and fetches them as "NAME/<variable node>";
// "minimize" adds OPTIMIZER's TF1 Minimize(LOSS) over the graph's trainable
// variables ("gd:LR", "momentum:LR:MOMENTUM" or "adam:LR", tf1_compatible),
// initializes the variables it made, runs it STEPS times, then fetches. Fed values are read from
// the bundle FEEDS under the tensor's name ("x:0", "MatMul:0"). Each fetched tensor is written to
// the bundle OUT as "NAME/<tensor name>". A line whose run fails writes "NAME/.error" (a string
// scalar with eager's message) instead, so that one unimplemented op does not hide the other
// results. CKPT "-" skips the restore, FEEDS "-" feeds nothing (an import check). Exit code 0 when
// OUT was written, 1 on an error outside the plan's runs.
//
// --ops prints the op types a Session runs, one per line: the op table
// (ops/op_def.h) and the node kinds the Session handles itself
// (ops/session.cc; until the one op table holds them too).
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "eager.h"
#include "ops/op_def.h"

namespace {

// The node kinds ops/session.cc runs without an OpDef.
constexpr const char* kSessionNodes[] = {
    "NoOp",      "VariableV2", "Const",     "Placeholder", "PlaceholderWithDefault",
    "Assign",    "AssignAdd",  "AssignSub", "ApplyAdam",   "Switch",
    "RefSwitch", "Merge",      "Add"};

struct PlanLine {
  std::string kind;  // "run" or "train"
  std::string name;
  int steps = 0;
  std::string target;
  std::string optimizer;  // "minimize": "adam:0.01"
  std::vector<std::string> fetches;
  std::vector<std::string> feeds;
};

std::vector<PlanLine> ReadPlan(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw eager::NotFoundError("cannot open plan " + path);
  std::vector<PlanLine> plan;
  std::string text;
  while (std::getline(in, text)) {
    std::istringstream words(text);
    PlanLine line;
    if (!(words >> line.kind >> line.name)) continue;
    if (line.kind == "train") words >> line.steps >> line.target;
    if (line.kind == "minimize") words >> line.optimizer >> line.steps >> line.target;
    if (line.kind == "save" || line.kind == "grads") words >> line.target;
    bool feeds = false;
    for (std::string word; words >> word;) {
      if (word == "|") {
        feeds = true;
      } else {
        (feeds ? line.feeds : line.fetches).push_back(word);
      }
    }
    plan.push_back(std::move(line));
  }
  return plan;
}

// The optimizer a "minimize" line names, and its Minimize(loss) in the
// default graph.
eager::Operation AddMinimize(const std::string& spec, const eager::Tensor& loss,
                             std::vector<std::unique_ptr<eager::Optimizer>>& optimizers) {
  std::vector<std::string> parts;
  std::istringstream in(spec);
  for (std::string part; std::getline(in, part, ':');) parts.push_back(part);
  const auto number = [&](size_t i) {
    if (i >= parts.size()) throw eager::InvalidArgumentError("optimizer '" + spec + "' too short");
    return std::stod(parts[i]);
  };
  if (parts[0] == "adam") {
    eager::AdamOptions options;
    options.learning_rate = number(1);
    options.tf1_compatible = true;
    auto adam = std::make_unique<eager::Adam>(options);
    const eager::Operation step = adam->Minimize(loss);
    optimizers.push_back(std::move(adam));
    return step;
  }
  if (parts[0] == "gd" || parts[0] == "momentum") {
    const bool momentum = parts[0] == "momentum";
    eager::SGDOptions options;
    options.learning_rate = number(1);
    options.momentum = momentum ? number(2) : 0.0;
    options.tf1_compatible = true;
    options.name = momentum ? "Momentum" : "GradientDescent";
    auto sgd = std::make_unique<eager::SGD>(options);
    const eager::Operation step = sgd->Minimize(loss);
    optimizers.push_back(std::move(sgd));
    return step;
  }
  throw eager::InvalidArgumentError("unknown optimizer '" + spec + "'");
}

void RunLine(eager::Session& sess, eager::Graph& graph, eager::Saver* saver,
             const eager::BundleReader* feed_values, const PlanLine& line, eager::BundleWriter& out,
             std::vector<std::unique_ptr<eager::Optimizer>>& optimizers) {
  if (line.kind == "save") {
    if (saver == nullptr) throw eager::NotFoundError("the meta graph made no Saver");
    saver->Save(line.target);
    return;
  }
  eager::Feeds feeds;
  for (const std::string& name : line.feeds) {
    if (feed_values == nullptr)
      throw eager::InvalidArgumentError("no FEEDS bundle to feed " + name);
    feeds.emplace_back(eager::Fetch(name), feed_values->Read(name));
  }
  if (line.kind == "grads") {
    std::vector<eager::Variable*> variables;
    for (const std::string& name : line.fetches) {
      eager::Variable* v = graph.VariableForNode(name);
      if (v == nullptr) throw eager::NotFoundError("no variable of node " + name);
      variables.push_back(v);
    }
    const std::vector<std::optional<eager::Tensor>> grads =
        eager::Gradients(graph.TensorByName(line.target), variables);
    std::vector<eager::Fetch> fetches;
    for (const auto& g : grads) {
      if (!g) throw eager::InvalidArgumentError("a variable gets no gradient");
      fetches.emplace_back(*g);
    }
    const std::vector<std::optional<eager::Tensor>> values = sess.Run(fetches, feeds);
    for (size_t i = 0; i < values.size(); ++i) {
      out.Add(line.name + "/" + line.fetches[i], *values[i]);
    }
    return;
  }
  if (line.kind == "minimize") {
    const eager::Operation step =
        AddMinimize(line.optimizer, graph.TensorByName(line.target), optimizers);
    std::vector<eager::Variable*> made;
    for (eager::Variable* v : graph.GlobalVariables()) {
      if (!v->is_initialized()) made.push_back(v);
    }
    sess.Run(eager::VariablesInitializer(made, "init_" + line.name));
    for (int i = 0; i < line.steps; ++i) sess.Run(step, feeds);
  }
  if (line.kind == "train") {
    const eager::Operation target = graph.OperationByName(line.target);
    for (int step = 0; step < line.steps; ++step) sess.Run(target, feeds);
  }
  std::vector<eager::Fetch> fetches(line.fetches.begin(), line.fetches.end());
  const std::vector<std::optional<eager::Tensor>> values = sess.Run(fetches, feeds);
  for (size_t i = 0; i < values.size(); ++i) {
    out.Add(line.name + "/" + line.fetches[i], *values[i]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--ops") {
    for (const eager::OpDef* op : eager::AllOps()) std::cout << op->type << "\n";
    for (const char* type : kSessionNodes) std::cout << type << "\n";
    return 0;
  }
  if (argc != 6) {
    std::cerr << "usage: graph_run_driver META CKPT FEEDS PLAN OUT\n";
    return 2;
  }
  try {
    eager::Graph graph;
    eager::Graph::AsDefault in(graph);
    std::unique_ptr<eager::Saver> saver = eager::ImportMetaGraph(argv[1]);
    eager::Session sess(graph);
    if (saver != nullptr && std::string(argv[2]) != "-") saver->Restore(sess, argv[2]);
    std::optional<eager::BundleReader> feed_values;
    if (std::string(argv[3]) != "-") feed_values.emplace(argv[3]);
    eager::BundleWriter out(argv[5]);
    std::vector<std::unique_ptr<eager::Optimizer>> optimizers;  // own their slots
    for (const PlanLine& line : ReadPlan(argv[4])) {
      try {
        RunLine(sess, graph, saver.get(), feed_values ? &*feed_values : nullptr, line, out,
                optimizers);
      } catch (const eager::Error& e) {
        out.Add(line.name + "/.error", eager::Tensor(std::string(e.what())));
      }
    }
    out.Finish();
  } catch (const std::exception& e) {
    std::cerr << "graph_run_driver: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
