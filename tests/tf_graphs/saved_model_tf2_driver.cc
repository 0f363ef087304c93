// Loads a SavedModel (TF 2's tf.saved_model.save, Keras 3's model.export(),
// a TF1 SavedModelBuilder's) with eager::LoadSavedModel, runs its main op
// (a TF1 legacy_init_op: tables_initializer) and then one of its signatures.
//
//   saved_model_tf2_driver EXPORT_DIR SIGNATURE FEEDS OUT
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
#include <string>
#include <vector>

#include "eager.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: saved_model_tf2_driver EXPORT_DIR SIGNATURE FEEDS OUT\n";
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
