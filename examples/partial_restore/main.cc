// Seed 004, partial restore: a Saver given only v1 restores only v1; v2 stays
// uninitialized and reading it fails as TensorFlow's does ("Attempting to use
// uninitialized value v2"). Eager form: the second "graph" is a fresh name
// registry (ResetDefaultNames, TF's reset_default_graph) whose variables are
// created uninitialized, as graph variables are before an initializer runs.
//
//   partial_restore [DIR [save|restore]]   # DIR defaults to ./model; both phases
//
// "restore" alone reads DIR/model.ckpt, such as the one TensorFlow's run of
// the seed wrote (tests/tf/seed_004.py).

#include <filesystem>
#include <iostream>

#include "eager.h"

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "model";
  const std::string phase = argc > 2 ? argv[2] : "both";
  if (phase != "both" && phase != "save" && phase != "restore") {
    std::cerr << "usage: partial_restore [DIR [save|restore]]\n";
    return 2;
  }
  try {
    const std::string prefix = dir + "/model.ckpt";
    if (phase != "restore") {
      std::filesystem::remove_all(dir);
      eager::Variable v1(1.0f, "v1"), v2(2.0f, "v2");  // scalars, as the seed's
      std::cout << "saved " << eager::Saver().Save(prefix) << "\n";
    }
    if (phase != "save") {
      eager::ResetDefaultNames();
      eager::Variable v1(eager::DType::kFloat32, eager::Shape{}, "v1");
      eager::Variable v2(eager::DType::kFloat32, eager::Shape{}, "v2");
      eager::Saver({&v1}).Restore(prefix);
      std::cout << "v1 = " << v1.value().ValuesString() << "\n";
      try {
        const eager::Tensor value = v2.value();  // throws: v2 was not restored
        std::cout << "v2 = " << value.ValuesString() << "\n";
        return 1;  // v2 must not be readable
      } catch (const eager::FailedPreconditionError& e) {
        std::cout << "FailedPreconditionError: " << e.what() << "\n";
      }
    }
  } catch (const eager::Error& e) {
    std::cerr << "partial_restore: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
