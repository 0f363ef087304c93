#include "saving/keras/internal/keras_layer_kinds.h"

#include "runtime/errors.h"

namespace eager::keras_internal {
namespace {

const std::vector<KerasLayerKind>& Kinds() {
  static const std::vector<KerasLayerKind> kinds = [] {
    std::vector<KerasLayerKind> all;
    for (auto family : {CoreKinds, ConvKinds, PoolingKinds, MergingKinds, RecurrentKinds}) {
      for (KerasLayerKind& k : family()) all.push_back(k);
    }
    return all;
  }();
  return kinds;
}

}  // namespace

const KerasLayerKind& KindOf(const Layer& layer) {
  for (const KerasLayerKind& k : Kinds()) {
    if (k.matches(layer)) return k;
  }
  throw UnimplementedError(
      StrCat("Keras files: layer '", layer.name(),
             "' is of a class eager cannot save in Keras's format (it can: ", KindNames(), ")"));
}

const KerasLayerKind* KindByClassName(const std::string& class_name) {
  for (const KerasLayerKind& k : Kinds()) {
    if (class_name == k.class_name) return &k;
  }
  return nullptr;
}

std::string KindNames() {
  std::string names;
  for (const KerasLayerKind& k : Kinds()) names += StrCat(names.empty() ? "" : ", ", k.class_name);
  return names;
}

std::vector<std::string> VariablePaths(const KerasLayerKind& kind, const Layer& layer,
                                       size_t count) {
  std::vector<std::string> paths;
  if (kind.sublayers == nullptr) {
    for (size_t i = 0; i < count; ++i) paths.push_back(StrCat("vars/", i));
    return paths;
  }
  for (const KerasSublayer& sub : kind.sublayers(layer)) {
    for (int i = 0; i < sub.variables; ++i) paths.push_back(StrCat(sub.path, "/vars/", i));
  }
  return paths;
}

void ExpectShape(const std::string& what, const Shape& got, const std::vector<int64_t>& want) {
  bool ok = got.rank() == static_cast<int>(want.size());
  for (size_t i = 0; ok && i < want.size(); ++i) {
    const int64_t d = got.dim(static_cast<int>(i));
    ok = want[i] == -1 ? d > 0 : d == want[i];
  }
  if (!ok) {
    std::string w = "[";
    for (size_t i = 0; i < want.size(); ++i)
      w += StrCat(i ? "," : "", want[i] == -1 ? std::string("?") : std::to_string(want[i]));
    throw InvalidArgumentError(StrCat(what, " is ", got, "; expected ", w, "]"));
  }
}

void ExpectCount(const std::string& layer, const std::vector<Shape>& shapes, size_t n) {
  if (shapes.size() != n) {
    throw InvalidArgumentError(
        StrCat(layer, " has ", shapes.size(), " variables in the file; expected ", n));
  }
}

}  // namespace eager::keras_internal
