#include "saving/keras/keras_file_tensors.h"

#include <cstring>

#include "saving/keras/internal/h5_file.h"
#include "saving/keras/internal/keras_layout.h"

namespace eager {
namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() > n && s.compare(s.size() - n, n, suffix) == 0;
}

}  // namespace

bool IsKerasFile(const std::string& path) {
  return EndsWith(path, ".h5") || EndsWith(path, ".keras");
}

std::map<std::string, Tensor> ReadKerasFileTensors(const std::string& path) {
  keras_internal::H5Contents contents;
  if (EndsWith(path, ".keras")) {
    std::map<std::string, std::string> members = keras_internal::ReadKerasArchive(path);
    contents = keras_internal::ReadWeightsMember(path, members.at("model.weights.h5"));
  } else {
    contents = keras_internal::ReadH5File(path);
  }
  std::map<std::string, Tensor> out;
  for (auto& [key, dataset] : contents.datasets) {
    out.emplace(key, keras_internal::DatasetTensor(dataset));
  }
  return out;
}

}  // namespace eager
