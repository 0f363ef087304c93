// eager-ckpt: inspect TensorFlow checkpoints (TensorBundle V2), whoever wrote
// them. See saving/tools/inspect_checkpoint.h for the commands.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>

#include "saving/tools/ckpt_commands.h"
#include "saving/tools/inspect_checkpoint.h"
#include "saving/tools/keras_file_bundle.h"

namespace {

int Main(int argc, char** argv) {
  CLI::App app{
      "Inspects TensorFlow checkpoints (PREFIX.index + PREFIX.data-*). PATH is a "
      "checkpoint prefix or a directory (its latest checkpoint), or a Keras file "
      "(.weights.h5, .h5, .keras), whose tensors are keyed by HDF5 dataset path."};
  app.require_subcommand(1);
  std::string path;
  std::string key;
  int64_t limit = 64;

  bool json = false;
  CLI::App* list = app.add_subcommand("list", "Key, dtype, shape and size of every tensor");
  list->add_option("PATH", path, "Checkpoint prefix or directory")->required();
  list->add_flag("--json", json, "Print JSON");
  CLI::App* dump = app.add_subcommand("dump", "Print one tensor");
  dump->add_option("PATH", path, "Checkpoint prefix or directory")->required();
  dump->add_option("KEY", key, "Tensor key, e.g. dense/kernel")->required();
  dump->add_option("--limit", limit, "Print at most this many values (0: all)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  dump->add_flag("--json", json, "Print JSON");
  CLI::App* verify =
      app.add_subcommand("verify", "Read every tensor, checking every size and checksum");
  verify->add_option("PATH", path, "Checkpoint prefix or directory")->required();
  app.footer(eager::ckpt_tool::kExitCodes);
  app.set_version_flag("--version", "eager-ckpt " EAGER_VERSION);
  const eager::ckpt_tool::ExtraCommands extra(app);  // state, diff, stats
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, version or the error
    return code == 0 ? 0 : eager::ckpt_tool::kExitUsage;
  }
  if (extra.parsed()) return extra.Run(std::cout, std::cerr);

  try {
    std::unique_ptr<eager::ckpt_tool::KerasFileBundle> keras;  // a Keras file, read as a bundle
    const eager::BundleReader reader(eager::ckpt_tool::ResolveReadablePath(path, keras));
    if (list->parsed()) {
      json ? eager::ListCheckpointJson(reader, std::cout)
           : eager::ListCheckpoint(reader, std::cout);
    } else if (dump->parsed()) {
      json ? eager::DumpTensorJson(reader, key, limit, std::cout)
           : eager::DumpTensor(reader, key, limit, std::cout);
    } else {
      const eager::VerifyResult result = eager::VerifyCheckpoint(reader);
      if (!result.unchecked.empty()) {
        std::fprintf(stderr, "eager-ckpt: FAILED: %zu entries of %s could not be checked:\n",
                     result.unchecked.size(), eager::ckpt_tool::ShownPrefix(reader).c_str());
        for (const std::string& why : result.unchecked) std::fprintf(stderr, "  %s\n", why.c_str());
        return 1;
      }
      std::cout << "OK: " << eager::ckpt_tool::ShownPrefix(reader) << ": " << result.tensors
                << " tensors, " << result.bytes << " bytes verified\n";
    }
  } catch (const eager::Error& e) {
    std::fprintf(stderr, "eager-ckpt: %s error: %s\n",
                 std::string(eager::ErrorCodeName(e.code())).c_str(), e.what());
    return 1;
  }
  return 0;
}

}  // namespace

// Errors that are not eager's (out of memory, a library's own) end the
// program with a message and kExitError too, never with an uncaught exception.
int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "eager-ckpt: error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "eager-ckpt: error: unknown exception\n");
  }
  return eager::ckpt_tool::kExitError;
}
