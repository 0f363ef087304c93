#pragma once

// Keras files for `eager-ckpt`: every command reads a TensorBundle, so a
// `.weights.h5`, `.h5` or `.keras` PATH is first read as the Keras loaders
// read it (saving/keras/keras_file_tensors.h: libhdf5 in a forked child,
// every dataset and archive member checked) and its tensors written as a
// bundle in a fresh directory under $TMPDIR, keyed by dataset path
// ("layers/dense/vars/0"). The bundle's prefix ends with the file's own
// name; ShownPrefix() gives the Keras file's own path for messages and
// listings.
//
//   eager-ckpt list m.weights.h5
//   eager-ckpt diff before.keras after.keras
//   eager-ckpt convert m.weights.h5 ckpt/model      # a name-based TF checkpoint

#include <memory>
#include <string>

namespace eager {
class BundleReader;
}  // namespace eager

namespace eager::ckpt_tool {

class KerasFileBundle {
 public:
  // Throws the Keras readers' errors naming `path`.
  explicit KerasFileBundle(const std::string& path);
  ~KerasFileBundle();  // removes the directory
  KerasFileBundle(const KerasFileBundle&) = delete;
  KerasFileBundle& operator=(const KerasFileBundle&) = delete;

  const std::string& prefix() const { return prefix_; }

 private:
  std::string dir_;
  std::string prefix_;
};

// What a listing or message calls `reader`'s checkpoint: the Keras file's
// path when it reads a live KerasFileBundle, else its prefix.
std::string ShownPrefix(const BundleReader& reader);
std::string ShownPrefix(const std::string& prefix);

// The bundle prefix a command reads for PATH: ResolveCheckpointPath(PATH) for
// a checkpoint; for a Keras file, the prefix of a KerasFileBundle made into
// `holder`, which must outlive the reading.
std::string ResolveReadablePath(const std::string& path, std::unique_ptr<KerasFileBundle>& holder);

}  // namespace eager::ckpt_tool
