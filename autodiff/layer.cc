#include "autodiff/layer.h"

#include "runtime/errors.h"

namespace eager {

void Layer::RequireBuilt(bool built, std::string_view kind, std::string_view what) const {
  if (built) return;
  throw FailedPreconditionError(StrCat(kind, " '", name(), "': ", what,
                                       " does not exist before the layer is built (call it on an "
                                       "input or call Build first)"));
}

}  // namespace eager
