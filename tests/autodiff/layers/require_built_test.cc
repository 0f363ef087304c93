// A layer's variable accessors before the layer is built name the layer's
// kind, its name and the variable (Layer::RequireBuilt, autodiff/layer.h).

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "autodiff/dense.h"
#include "autodiff/layers/conv.h"
#include "autodiff/layers/normalization.h"
#include "runtime/errors.h"

namespace eager {
namespace {

void ExpectUnbuilt(const std::function<void()>& access, const std::string& prefix) {
  try {
    access();
    ADD_FAILURE() << "no error; expected " << prefix;
  } catch (const FailedPreconditionError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(prefix + " does not exist before the layer is built"), std::string::npos)
        << what;
  }
}

TEST(RequireBuiltTest, AccessorsBeforeBuildNameKindLayerAndVariable) {
  Dense dense(3, nullptr, true, 1, "d");
  ExpectUnbuilt([&] { dense.kernel(); }, "Dense 'd': kernel");
  ExpectUnbuilt([&] { dense.bias(); }, "Dense 'd': bias");
  layers::Conv2DConfig c2;
  c2.name = "c2";
  layers::Conv2D conv2d(4, {3, 3}, c2);
  ExpectUnbuilt([&] { conv2d.kernel(); }, "Conv2D 'c2': kernel");
  layers::Conv1DConfig c1;
  c1.name = "c1";
  layers::Conv1D conv1d(4, 3, c1);
  ExpectUnbuilt([&] { conv1d.bias(); }, "Conv1D 'c1': bias");
  layers::BatchNormalization bn(0.99, 1e-3, true, true, "bn");
  ExpectUnbuilt([&] { bn.moving_variance(); }, "BatchNormalization 'bn': moving_variance");
}

}  // namespace
}  // namespace eager
