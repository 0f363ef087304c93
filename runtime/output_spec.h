#pragma once

// OutputSpec: what is known of an op's output before it runs, its dtype and
// static shape. An eager op's shape function returns one (ops/op_def.h); a
// graph node records one per output (runtime/graph.h: Node::output_specs),
// where the shape may be partial or of unknown rank (Shape::Partial,
// Shape::UnknownRank).

#include <ostream>

#include "runtime/dtype.h"
#include "runtime/shape.h"

namespace eager {

struct OutputSpec {
  Shape shape;
  DType dtype;
  friend bool operator==(const OutputSpec&, const OutputSpec&) = default;
};

// "float32 [?,784]".
inline std::ostream& operator<<(std::ostream& out, const OutputSpec& spec) {
  return out << spec.dtype << " " << spec.shape;
}

}  // namespace eager
