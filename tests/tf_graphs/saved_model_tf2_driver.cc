// Loads a SavedModel (TF 2's tf.saved_model.save, Keras 3's model.export(),
// a TF1 SavedModelBuilder's) with eager::LoadSavedModel, runs its main op
// (a TF1 legacy_init_op: tables_initializer) and then one of its signatures.
//
//   saved_model_tf2_driver EXPORT_DIR SIGNATURE FEEDS OUT [--gradients]
//
// --gradients adds eager::Gradients of sum(output^2) (the signature's one
// output) with respect to every variable of the loaded graph, written as
// "grad/<VarHandleOp node>" beside the variable's value "value/<node>".
// --finetune=STEPS:LR then fine-tunes them: TF1 GradientDescent's Minimize
// of that loss, run STEPS times on the same feeds; the variables are
// written as "tuned/<node>" and saved with a Saver to the checkpoint
// OUT.ckpt (keys: the nodes' names).
//
// FEEDS is a bundle of the signature's inputs keyed by their names (as
// saved_model_cli shows them); OUT gets every output under its key and
// ".fused_nodes" (int64: Session::last_run_fused_nodes of the run), or one
// string tensor ".error" with eager's error message. SIGNATURE
// "function:PATH" calls the tf.function PATH (SavedModelBundle::Function)
// with FEEDS by argument name, "positional:PATH" with FEEDS positionally in
// key order instead.

#include <cstdint>
#include <exception>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "eager.h"

namespace {

void WriteGradients(const eager::SavedModelBundle& model, const std::string& key,
                    const std::map<std::string, eager::Tensor>& inputs, eager::Session& sess,
                    eager::BundleWriter& out) {
  eager::Graph& graph = model.graph();
  const eager::Graph::AsDefault in(graph);
  const eager::MetaSignature& signature = model.signature(key);
  if (signature.outputs.size() != 1) throw eager::InvalidArgumentError("one output wanted");
  const eager::Tensor y = graph.TensorByName(signature.outputs.begin()->second.name);
  const eager::Tensor loss = eager::ReduceSum(eager::Square(y));
  const std::vector<eager::Variable*> variables = graph.GlobalVariables();
  const std::vector<std::optional<eager::Tensor>> grads = eager::Gradients(loss, variables);
  eager::Feeds feeds;
  for (const auto& [name, info] : signature.inputs) {
    feeds.emplace_back(eager::Fetch(info.name), inputs.at(name));
  }
  for (size_t i = 0; i < variables.size(); ++i) {
    const std::string node(variables[i]->shared_name());
    out.Add("value/" + node, variables[i]->stored_value());
    if (grads[i]) out.Add("grad/" + node, sess.Run(*grads[i], feeds));
  }
}

void FineTune(const eager::SavedModelBundle& model, const std::string& key,
              const std::map<std::string, eager::Tensor>& inputs, eager::Session& sess, int steps,
              double learning_rate, const std::string& checkpoint, eager::BundleWriter& out) {
  eager::Graph& graph = model.graph();
  const eager::Graph::AsDefault in(graph);
  const eager::MetaSignature& signature = model.signature(key);
  const eager::Tensor y = graph.TensorByName(signature.outputs.begin()->second.name);
  const eager::Tensor loss = eager::ReduceSum(eager::Square(y));
  eager::SGDOptions options;
  options.learning_rate = learning_rate;
  options.tf1_compatible = true;
  options.name = "GradientDescent";
  eager::SGD sgd(options);
  const std::vector<eager::Variable*> variables = graph.GlobalVariables();
  const eager::Operation step = sgd.Minimize(loss, variables);
  eager::Feeds feeds;
  for (const auto& [name, info] : signature.inputs) {
    feeds.emplace_back(eager::Fetch(info.name), inputs.at(name));
  }
  for (int i = 0; i < steps; ++i) sess.Run(step, feeds);
  std::map<std::string, eager::Variable*> by_name;
  for (eager::Variable* v : variables) {
    out.Add("tuned/" + std::string(v->shared_name()), v->stored_value());
    by_name.emplace(std::string(v->shared_name()), v);
  }
  eager::Saver(by_name).Save(checkpoint);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 6 ? argv[5] : "";
  const bool finetune = mode.starts_with("--finetune=");
  const bool gradients = mode == "--gradients" || finetune;
  if (argc != 5 && !gradients) {
    std::cerr << "usage: saved_model_tf2_driver EXPORT_DIR SIGNATURE FEEDS OUT [--gradients]\n";
    return 2;
  }
  try {
    eager::BundleWriter out(argv[4]);
    try {
      eager::SavedModelBundle model = eager::LoadSavedModel(argv[1], {eager::kServingTag});
      eager::Session sess(model.graph());
      model.RunMainOp(sess);
      const eager::BundleReader feeds(argv[3]);
      std::map<std::string, eager::Tensor> inputs;
      for (const std::string& key : feeds.Keys()) inputs.emplace(key, feeds.Read(key));
      // "function:PATH" calls a non-signature tf.function by argument name,
      // "positional:PATH" with the feeds in key order ("0", "1", ...).
      const std::string what = argv[2];
      std::map<std::string, eager::Tensor> outputs;
      if (what.starts_with("function:")) {
        outputs = model.Function(what.substr(9))(sess, inputs);
      } else if (what.starts_with("positional:")) {
        std::vector<eager::Tensor> args;
        args.reserve(inputs.size());
        for (const auto& [key, value] : inputs) args.push_back(value);
        outputs = model.Function(what.substr(11))(sess, args);
      } else {
        outputs = model.Run(sess, what, inputs);
      }
      for (const auto& [key, value] : outputs) out.Add(key, value);
      out.Add(".fused_nodes", eager::Tensor(static_cast<int64_t>(sess.last_run_fused_nodes())));
      if (gradients) WriteGradients(model, argv[2], inputs, sess, out);
      if (finetune) {
        const std::string spec = mode.substr(std::string("--finetune=").size());
        const size_t colon = spec.find(':');
        FineTune(model, argv[2], inputs, sess, std::stoi(spec.substr(0, colon)),
                 std::stod(spec.substr(colon + 1)), std::string(argv[4]) + ".ckpt", out);
      }
    } catch (const eager::Error& e) {
      out.Add(".error", eager::Tensor(std::string(e.what())));
    }
    out.Finish();
  } catch (const std::exception& e) {
    std::cerr << "saved_model_tf2_driver: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
