// Seed 004, partial restore: a Saver given only v1 restores only v1; v2 stays
// uninitialized and reading it fails as TensorFlow's does ("Attempting to use
// uninitialized value v2"). Eager form: the second "graph" is a fresh name
// registry (ResetDefaultNames, TF's reset_default_graph) whose variables are
// created uninitialized, as graph variables are before an initializer runs.
//
//   partial_restore [DIR]      # DIR defaults to ./model

#include <filesystem>
#include <iostream>

#include "eager.h"

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "model";
  std::filesystem::remove_all(dir);
  try {
    const std::string prefix = dir + "/model.ckpt";
    {
      eager::Variable v1(eager::Tensor::FromVector<float>({1.0f}, eager::Shape{1}), "v1");
      eager::Variable v2(eager::Tensor::FromVector<float>({2.0f}, eager::Shape{1}), "v2");
      std::cout << "saved " << eager::Saver().Save(prefix) << "\n";
    }
    eager::ResetDefaultNames();
    eager::Variable v1(eager::DType::kFloat32, eager::Shape{1}, "v1");
    eager::Variable v2(eager::DType::kFloat32, eager::Shape{1}, "v2");
    eager::Saver({&v1}).Restore(prefix);
    std::cout << "v1 = " << v1.value().ValuesString() << "\n";
    try {
      const eager::Tensor value = v2.value();  // throws: v2 was not restored
      std::cout << "v2 = " << value.ValuesString() << "\n";
      return 1;  // v2 must not be readable
    } catch (const eager::FailedPreconditionError& e) {
      std::cout << "FailedPreconditionError: " << e.what() << "\n";
    }
  } catch (const eager::Error& e) {
    std::cerr << "partial_restore: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
