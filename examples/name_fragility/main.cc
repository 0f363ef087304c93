// Why name-based checkpoints are fragile. The same model built twice in one
// process gets new names: the second Dense is "dense_1", so its variables are
// dense_1/kernel and dense_1/bias. A name-based restore of the first model's
// checkpoint into it fails; eager's error lists the missing keys, the closest
// keys in the file and the rename map that would work, and that map does
// work. The object-based Checkpoint matches objects by their path from the
// root ("model/dense/kernel"), never by name, so it just works.
//
//   name_fragility [DIR]      # DIR defaults to ./fragility

#include <filesystem>
#include <iostream>

#include "eager.h"

struct MyModel : eager::Module {
  eager::Dense dense{3};
  MyModel() { Track("dense", dense); }
  eager::Tensor operator()(const eager::Tensor& x) { return dense(x); }
};

namespace {

bool SameValues(MyModel& a, MyModel& b) {
  const std::vector<eager::Variable*> x = a.Variables();
  const std::vector<eager::Variable*> y = b.Variables();
  for (size_t i = 0; i < x.size(); ++i) {
    const auto p = x[i]->value().bytes();
    const auto q = y[i]->value().bytes();
    if (!std::equal(p.begin(), p.end(), q.begin(), q.end())) return false;
  }
  return x.size() == y.size();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "fragility";
  std::filesystem::remove_all(dir);
  try {
    eager::RandomGenerator rng(/*seed=*/1);
    const eager::Tensor x = rng.Normal(eager::Shape{2, 4});

    MyModel first;
    first(x);  // builds dense/kernel, dense/bias
    const std::string name_based =
        eager::Saver(first.Variables()).Save(dir + "/name_based/model.ckpt");
    eager::Checkpoint object_based({{"model", &first}});
    const std::string object_path = object_based.Save(dir + "/object_based/ckpt");
    std::cout << "saved " << first.dense.kernel().name() << " and " << first.dense.bias()->name()
              << " by name to " << name_based << " and by object to " << object_path << "\n";

    MyModel second;  // the same model again: now dense_1/kernel, dense_1/bias
    second(x);
    std::cout << "the same model built again: " << second.dense.kernel().name() << ", "
              << second.dense.bias()->name() << "\n";
    try {
      eager::Saver(second.Variables()).Restore(name_based);
      std::cout << "unexpected: the name-based restore worked\n";
      return 1;
    } catch (const eager::NotFoundError& e) {
      std::cout << "name-based restore: NotFoundError: " << e.what() << "\n";
    }
    eager::Variable& dense_1_kernel = second.dense.kernel();
    eager::Variable& dense_1_bias = *second.dense.bias();
    eager::Saver saver({{"dense/bias", &dense_1_bias}, {"dense/kernel", &dense_1_kernel}});
    saver.Restore(name_based);
    std::cout << "through the rename map: values match the first model: "
              << (SameValues(first, second) ? "yes" : "no") << "\n";

    MyModel third;  // dense_2/...
    third(x);
    eager::Checkpoint restored({{"model", &third}});
    restored.Restore(object_path).AssertExistingObjectsMatched();
    std::cout << "object-based restore into " << third.dense.kernel().name()
              << ": values match the first model: " << (SameValues(first, third) ? "yes" : "no")
              << "\n";
  } catch (const eager::Error& e) {
    std::cerr << "name_fragility: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
