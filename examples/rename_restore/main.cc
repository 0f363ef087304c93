// Seed 004, the rename map: v1 and v2 are saved by name, then restored into
// variables named "renamed-v1" and "renamed-v2" through a map from checkpoint
// key to variable (TF's Saver({"v1": v1_renamed, ...})). Prints 3.0 twice:
// before saving and after the restore. The test suite runs it, checks the
// output and verifies the files with tfckpt.py.
//
//   rename_restore [DIR [save|restore]]   # DIR defaults to ./model; both phases
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
    std::cerr << "usage: rename_restore [DIR [save|restore]]\n";
    return 2;
  }
  try {
    const std::string prefix = dir + "/model.ckpt";
    if (phase != "restore") {
      std::filesystem::remove_all(dir);
      eager::Variable v1(1.0f, "v1"), v2(2.0f, "v2");  // scalars, as the seed's
      std::cout << "v1 + v2 = " << (v1 + v2).ValuesString() << "\n";
      eager::Saver saver;  // every live variable, keyed "v1", "v2"
      std::cout << "saved " << saver.Save(prefix) << "\n";
    }
    if (phase != "save") {
      eager::Variable r1(0.0f, "renamed-v1"), r2(0.0f, "renamed-v2");
      eager::Saver({{"v1", &r1}, {"v2", &r2}}).Restore(prefix);
      std::cout << "restored " << r1.shared_name() << " from v1 and " << r2.shared_name()
                << " from v2\n";
      std::cout << r1.shared_name() << " + " << r2.shared_name() << " = "
                << (r1 + r2).ValuesString() << "\n";
    }
  } catch (const eager::Error& e) {
    std::cerr << "rename_restore: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
