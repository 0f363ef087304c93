// eager-ckpt meta on a TF 2 SavedModel lists its function library (what its
// calls run): TF Serving's half_plus_two as TF 2.14 wrote it. A TF 1
// SavedModel has no such section and is not read whole for one.

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "saving/tools/meta_graph_listing.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::RealdataDir;

std::string Listing(const std::string& path, bool json) {
  std::ostringstream out;
  PrintMetaGraphListing(ReadMetaGraphListing(path), json, out);
  return out.str();
}

TEST(MetaFunctionListingTest, ATf2SavedModelListsEachFunctionWithItsArgumentsAndResults) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string pb = RealdataDir() + "/savedmodel_tf2_half_plus_two/00000123/saved_model.pb";
  const std::string text = Listing(pb, false);
  // 14 FunctionDefs: the signature wrappers, the functions they call, and
  // the save and restore functions.
  EXPECT_NE(text.find("functions (14)\n"), std::string::npos) << text.substr(0, 2000);
  // serving_default's function: x plus the two captured variables a and b.
  EXPECT_NE(text.find("function __inference_signature_wrapper_predict_245 (x: DT_FLOAT, "
                      "unknown: DT_RESOURCE, unknown_0: DT_RESOURCE) -> (identity: DT_FLOAT), "
                      "3 nodes, stateful\n"),
            std::string::npos);
  // The functions come before the graph's nodes, which call them.
  EXPECT_LT(text.find("functions (14)"), text.find("StatefulPartitionedCall_5  "));
  // Its tf.functions by object path, each trace's input specs (the
  // SavedObjectGraph's), and how many variables it captures.
  EXPECT_NE(text.find("object function predict (x: float32 [1]) -> "), std::string::npos);
  EXPECT_NE(text.find("(__inference_predict_235, 2 captured)"), std::string::npos);
  EXPECT_NE(text.find("object function regress_xy (inputs: string [?])"), std::string::npos);

  const std::string json = Listing(pb, true);
  EXPECT_NE(json.find("{\"name\":\"__inference_signature_wrapper_predict_245\",\"inputs\":[{"
                      "\"name\":\"x\",\"dtype\":\"DT_FLOAT\"},{\"name\":\"unknown\",\"dtype\":"
                      "\"DT_RESOURCE\"},{\"name\":\"unknown_0\",\"dtype\":\"DT_RESOURCE\"}],"
                      "\"outputs\":[{\"name\":\"identity\",\"dtype\":\"DT_FLOAT\"}],\"nodes\":3,"
                      "\"stateful\":true}"),
            std::string::npos);
}

TEST(MetaFunctionListingTest, ATf1SavedModelHasNoFunctionsSection) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string pb = RealdataDir() + "/savedmodel_tf1_half_plus_two/00000123/saved_model.pb";
  const MetaGraphListing listing = ReadMetaGraphListing(pb);
  ASSERT_EQ(listing.functions.size(), listing.graphs->num_graphs());
  for (const auto& functions : listing.functions) EXPECT_EQ(functions, nullptr);
  EXPECT_EQ(Listing(pb, false).find("functions ("), std::string::npos);
  EXPECT_NE(Listing(pb, true).find("\"functions\":[]"), std::string::npos);
}

}  // namespace
}  // namespace eager
