// Seed 004, the rename map: v1 and v2 are saved by name, then restored into
// variables named "renamed-v1" and "renamed-v2" through a map from checkpoint
// key to variable (TF's Saver({"v1": v1_renamed, ...})). Prints 3.0 twice:
// before saving and after the restore. The test suite runs it, checks the
// output and verifies the files with tfckpt.py.
//
//   rename_restore [DIR]      # DIR defaults to ./model

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
      std::cout << "v1 + v2 = " << (v1.value() + v2.value()).ValuesString() << "\n";
      eager::Saver saver;  // every live variable, keyed "v1", "v2"
      std::cout << "saved " << saver.Save(prefix) << "\n";
    }
    eager::Variable r1(eager::Tensor::FromVector<float>({0.0f}, eager::Shape{1}), "renamed-v1");
    eager::Variable r2(eager::Tensor::FromVector<float>({0.0f}, eager::Shape{1}), "renamed-v2");
    eager::Saver({{"v1", &r1}, {"v2", &r2}}).Restore(prefix);
    std::cout << "restored " << r1.shared_name() << " from v1 and " << r2.shared_name()
              << " from v2\n";
    std::cout << r1.shared_name() << " + " << r2.shared_name() << " = "
              << (r1.value() + r2.value()).ValuesString() << "\n";
  } catch (const eager::Error& e) {
    std::cerr << "rename_restore: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
