// Loads a SavedModel (TF 2's tf.saved_model.save, Keras 3's model.export(),
// a TF1 SavedModelBuilder's) with eager::LoadSavedModel, runs its main op
// (a TF1 legacy_init_op: tables_initializer) and then one of its signatures.
//
//   saved_model_tf2_driver EXPORT_DIR SIGNATURE FEEDS OUT [--gradients]
//
// --gradients adds eager::Gradients of sum(output^2) (the signature's one
// output) with respect to every variable of the loaded graph, written as
// "grad/<VarHandleOp node>" beside the variable's value "value/<node>".
//
// FEEDS is a bundle of the signature's inputs keyed by their names (as
// saved_model_cli shows them); OUT gets every output under its key and
// ".fused_nodes" (int64: Session::last_run_fused_nodes of the run), or one
// string tensor ".error" with eager's error message.

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

}  // namespace

int main(int argc, char** argv) {
  const bool gradients = argc == 6 && std::string(argv[5]) == "--gradients";
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
      for (const auto& [key, value] : model.Run(sess, argv[2], inputs)) out.Add(key, value);
      out.Add(".fused_nodes", eager::Tensor(static_cast<int64_t>(sess.last_run_fused_nodes())));
      if (gradients) WriteGradients(model, argv[2], inputs, sess, out);
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
