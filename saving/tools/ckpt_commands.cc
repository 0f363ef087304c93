#include "saving/tools/ckpt_commands.h"

#include <CLI/CLI.hpp>
#include <memory>

#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/tools/checkpoint_convert.h"
#include "saving/tools/checkpoint_tools.h"
#include "saving/tools/inspect_checkpoint.h"
#include "saving/tools/keras_convert.h"
#include "saving/tools/keras_file_bundle.h"
#include "saving/tools/meta_graph_listing.h"

namespace eager::ckpt_tool {

ExtraCommands::ExtraCommands(CLI::App& app) {
  state_ =
      app.add_subcommand("state",
                         "The `checkpoint` file of DIR: the latest checkpoint, every one it lists, "
                         "and whether each one's files exist");
  state_->add_option("DIR", path_a_, "Checkpoint directory")->required();
  state_->add_flag("--json", json_, "Print JSON");

  diff_ = app.add_subcommand("diff",
                             "Tensors added (+), removed (-) and changed (~, with the max absolute "
                             "difference) from A to B; exit code 3 when they differ");
  diff_->add_option("A", path_a_, "Checkpoint prefix or directory")->required();
  diff_->add_option("B", path_b_, "Checkpoint prefix or directory")->required();
  diff_->add_flag("--json", json_, "Print JSON");

  stats_ = app.add_subcommand(
      "stats", "Per tensor: min, max and mean of the finite values, NaN and Inf counts");
  stats_->add_option("PATH", path_a_, "Checkpoint prefix or directory")->required();
  stats_->add_flag("--json", json_, "Print JSON");

  graph_ = app.add_subcommand(
      "graph",
      "An object-based checkpoint's object graph: the tree of TF's pretty paths, "
      "each object's tensors, the optimizers' slot variables");
  graph_->add_option("PATH", path_a_, "Checkpoint prefix or directory")->required();
  graph_->add_flag("--json", json_, "Print JSON");

  meta_ = app.add_subcommand(
      "meta",
      "A MetaGraphDef (.meta file, a checkpoint prefix's PREFIX.meta, or a SavedModel's "
      "saved_model.pb): versions, op types, SaverDef, collections, variables, every node "
      "with its op type, inputs and attributes");
  meta_->add_option("FILE", path_a_, ".meta file, checkpoint prefix or saved_model.pb")->required();
  meta_->add_flag("--json", json_, "Print JSON");

  convert_ = app.add_subcommand(
      "convert",
      "Convert SRC between name-based and object-based: an object-based SRC is written "
      "name-based (each variable under its full_name); a name-based SRC object-based, given "
      "--template (an object-based checkpoint of the model that will restore: variables "
      "matched by name, name without _N suffixes, slot names, or the only equal dtype and "
      "shape) or --mapping. Prints the mapping used");
  convert_->add_option("SRC", path_a_, "Checkpoint prefix or directory")->required();
  convert_->add_option("DST", path_b_, "Prefix to write (not with --dry-run)");
  convert_->add_option("--template", template_, "Object-based checkpoint giving the structure");
  convert_->add_option("--mapping", mapping_,
                       "File of \"SOURCE TARGET\" lines: a target name, an object path "
                       "(model/dense/kernel, or VAR/.OPTIMIZER_SLOT/OPTIMIZER/SLOT), or, with "
                       "--template, a template variable's full_name");
  convert_->add_flag("--allow-partial", allow_partial_,
                     "Keep the template's value for variables nothing matches");
  convert_->add_flag("--dry-run", dry_run_, "Print the mapping, write nothing");
  convert_->add_option("--keras-model", keras_model_,
                       "A .keras file of the model: SRC, a TF checkpoint of it (tf.train."
                       "Checkpoint(model=, optimizer=)), is written as the .weights.h5 DST, or "
                       "SRC .weights.h5 as the TF checkpoint DST");
}

bool ExtraCommands::parsed() const {
  return state_->parsed() || diff_->parsed() || stats_->parsed() || graph_->parsed() ||
         meta_->parsed() || convert_->parsed();
}

int ExtraCommands::RunConvert(std::ostream& out, std::ostream& err) const {
  if (!dry_run_ && path_b_.empty()) {
    err << "eager-ckpt: convert needs DST (or --dry-run)\n";
    return kExitUsage;
  }
  if (!keras_model_.empty()) {
    if (dry_run_ || path_b_.empty()) {
      err << "eager-ckpt: convert --keras-model needs DST and no --dry-run\n";
      return kExitUsage;
    }
    const bool from_h5 = path_a_.ends_with(".weights.h5");
    if (from_h5 == path_b_.ends_with(".weights.h5")) {
      err << "eager-ckpt: convert --keras-model: exactly one of SRC and DST is a .weights.h5 "
             "file\n";
      return kExitUsage;
    }
    if (from_h5) {
      KerasWeightsToCheckpoint(path_a_, keras_model_, path_b_, out);
    } else {
      CheckpointToKerasWeights(ResolveCheckpointPath(path_a_), keras_model_, path_b_, out);
    }
    return 0;
  }
  ConvertOptions options;
  if (!template_.empty()) options.template_prefix = ResolveCheckpointPath(template_);
  if (!mapping_.empty()) options.mapping = ReadConversionMapping(mapping_);
  options.allow_partial = allow_partial_;
  std::unique_ptr<KerasFileBundle> keras;
  const std::string source = ResolveReadablePath(path_a_, keras);
  if (keras && options.mapping.empty() && !options.template_prefix) {
    // A Keras file to a name-based TF checkpoint: its tensors under their
    // dataset paths, as listed.
    const BundleReader reader(source);
    out << path_a_ << " -> name-based, keyed by dataset path: " << reader.Keys().size()
        << " tensors\n";
    if (!dry_run_) {
      BundleWriter writer(path_b_);
      for (const std::string& key : reader.Keys()) writer.Add(key, reader.Read(key));
      writer.Finish();
      out << "wrote " << path_b_ << "\n";
    }
    return 0;
  }
  const ConversionPlan plan = PlanConversion(source, options);
  PrintConversionPlan(plan, out);
  if (!dry_run_) {
    WriteConversion(plan, path_b_);
    out << "wrote " << path_b_ << "\n";
  }
  return 0;
}

int ExtraCommands::Run(std::ostream& out, std::ostream& err) const {
  try {
    if (state_->parsed()) {
      PrintCheckpointState(DescribeCheckpointState(path_a_), json_, out);
      return 0;
    }
    if (diff_->parsed()) {
      std::unique_ptr<KerasFileBundle> keras_a;
      std::unique_ptr<KerasFileBundle> keras_b;
      const BundleReader a(ResolveReadablePath(path_a_, keras_a));
      const BundleReader b(ResolveReadablePath(path_b_, keras_b));
      const std::vector<TensorDifference> diff = DiffCheckpoints(a, b);
      PrintCheckpointDiff(a, b, diff, json_, out);
      return HasDifferences(diff) ? kExitDiffers : 0;
    }
    if (convert_->parsed()) return RunConvert(out, err);
    if (meta_->parsed()) {
      PrintMetaGraphListing(ReadMetaGraphListing(path_a_), json_, out);
      return 0;
    }
    std::unique_ptr<KerasFileBundle> keras;
    const BundleReader reader(ResolveReadablePath(path_a_, keras));
    if (graph_->parsed()) {
      PrintObjectGraph(reader, DescribeObjectGraph(reader), json_, out);
      return 0;
    }
    PrintTensorStatistics(reader, ComputeTensorStatistics(reader), json_, out);
    return 0;
  } catch (const Error& e) {
    err << "eager-ckpt: " << ErrorCodeName(e.code()) << " error: " << e.what() << "\n";
    return kExitError;
  }
}

}  // namespace eager::ckpt_tool
