#pragma once

// Converting checkpoints between the two ways TensorFlow keys variables:
// name-based (tf.compat.v1.train.Saver: "dense/kernel") and object-based
// (tf.train.Checkpoint: "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE" plus
// the object graph). What eager-ckpt's `convert` command does.
//
//   object -> name: each variable is written under its full_name, the name
//     the saving program's variable had (the object graph records it), or
//     under the name a mapping gives it.
//   name -> object, with a mapping: each source key goes to the object path
//     the mapping names ("model/dense/kernel", or a slot
//     "model/dense/kernel/.OPTIMIZER_SLOT/optimizer/m"); the object graph is
//     built from those paths.
//   name -> object, with a template: an object-based checkpoint of the model
//     that will restore (Checkpoint::Write of freshly built objects, say)
//     gives the structure; each of its variables takes its value from the
//     source key matched to it, by the first rule that finds one:
//       1. the mapping, 2. equal name, 3. equal name once each scope part's
//       "_N" suffix is dropped ("dense_1/kernel" ~ "dense/kernel"), 4. an
//       optimizer slot of a matched variable under TF1's or Keras's slot
//       names ("X/Adam", "X/Adam_1", "Adam/X/m"), 5. the only unmatched
//       source key of equal dtype and shape.
//     Every match must agree in dtype and shape. A template variable that
//     nothing matches keeps the template's value only when partial results
//     are allowed (the Checkpoint's save_counter always does).
//
// Plan first (a dry run prints the plan), then write. Both sides are
// TensorBundles; the result passes tfckpt.py verify and restores with Saver
// or Checkpoint.

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace eager {

struct ConvertOptions {
  // Name -> object only: the object-based checkpoint whose structure the
  // result takes.
  std::optional<std::string> template_prefix{};
  // Source key (or, object -> name, a source full_name) -> target: a name
  // (object -> name), an object path (name -> object without a template) or
  // a template variable's full_name or key (with a template).
  std::map<std::string, std::string> mapping{};
  // With a template: keep the template's value for variables that nothing
  // matches instead of failing.
  bool allow_partial = false;
};

struct ConversionStep {
  std::string target_key;  // the key written
  std::string source_key;  // where its value comes from; empty when kept from the template
  std::string rule;        // "full_name", "mapping", "same name", "name without _N",
                           // "slot name", "only dtype and shape", "kept from template"
};

struct ConversionPlan {
  std::string source_prefix;
  std::optional<std::string> template_prefix{};
  bool to_object_based = false;
  std::vector<ConversionStep> steps;        // in target key order
  std::vector<std::string> unused_sources;  // source keys nothing takes
  std::string object_graph;                 // object-based: the serialized TrackableObjectGraph
};

// Reads the source (and template) and decides every target key. Throws
// InvalidArgumentError naming the keys for: a name -> object conversion
// without a mapping or template, two targets with one name, a dtype or shape
// that differs between a source and its target, a variable without a
// full_name and no mapping, a mapping entry whose source key does not exist,
// and (unless allowed) template variables that nothing matches. Reading
// errors as BundleReader's.
ConversionPlan PlanConversion(const std::string& source_prefix, const ConvertOptions& options);

// Writes the plan's checkpoint at `target_prefix` (the object graph too when
// object-based). Nothing is written unless every tensor reads.
void WriteConversion(const ConversionPlan& plan, const std::string& target_prefix);

// "TARGET <- SOURCE  (rule)" per step, then the unused source keys.
void PrintConversionPlan(const ConversionPlan& plan, std::ostream& out);

// A mapping file: one "SOURCE TARGET" pair per line, separated by spaces or
// tabs; blank lines and lines starting with '#' are skipped. Throws
// NotFoundError for a missing file and InvalidArgumentError naming the file
// and line for a line that is not a pair or repeats a source.
std::map<std::string, std::string> ReadConversionMapping(const std::string& path);

}  // namespace eager
