// Seed 004, ExponentialMovingAverage: the shadow of v after one update is the
// golden 0.10989987; saved by name, it is restored into v itself, once
// through the rename map {"v/ExponentialMovingAverage": &v} and once through
// ema.VariablesToRestore() (what evaluation code does to use the averages).
//
//   ema_restore [DIR [save|restore]]   # DIR defaults to ./model; both phases
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
    std::cerr << "usage: ema_restore [DIR [save|restore]]\n";
    return 2;
  }
  try {
    const std::string prefix = dir + "/model.ckpt";
    if (phase != "restore") {
      std::filesystem::remove_all(dir);
      eager::Variable v(0.1f, "v");
      eager::ExponentialMovingAverage ema(0.999);
      ema.Apply({&v});  // shadow "v/ExponentialMovingAverage", initialised to 0.1
      v.Assign(10.0f);
      ema.Apply();  // shadow -= (1 - decay) * (shadow - v), in float32
      std::cout << eager::Tensor::Vector<float>(
                       {v.value().scalar<float>(), ema.AverageVariable(v)->value().scalar<float>()})
                       .ValuesString()
                << "\n";
      std::cout << "saved " << eager::Saver().Save(prefix) << "\n";  // v and its shadow
    }
    if (phase == "save") return 0;
    eager::ResetDefaultNames();
    {
      eager::Variable v(0.0f, "v");
      eager::Saver({{"v/ExponentialMovingAverage", &v}}).Restore(prefix);
      std::cout << "through the rename map: v = " << v.value().ValuesString() << "\n";
    }
    eager::ResetDefaultNames();
    {
      eager::Variable v(0.0f, "v");
      eager::ExponentialMovingAverage ema(0.999);
      const std::map<std::string, eager::Variable*> to_restore = ema.VariablesToRestore();
      for (const auto& [key, variable] : to_restore) {
        std::cout << "variables_to_restore: " << key << " -> " << variable->shared_name() << "\n";
      }
      eager::Saver(to_restore).Restore(prefix);
      std::cout << "through VariablesToRestore: v = " << v.value().ValuesString() << "\n";
    }
  } catch (const eager::Error& e) {
    std::cerr << "ema_restore: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
