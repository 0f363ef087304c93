// DataParallel without MPI (CMake found none): always one rank, and the
// main job trains as a single process (distributed_training.h).
#include "examples/fashion_mnist/distributed_training.h"

namespace fashion_mnist {

struct DataParallel::State {};

DataParallel::DataParallel(int&, char**&) {}
DataParallel::~DataParallel() = default;
int DataParallel::rank() const { return 0; }
int DataParallel::size() const { return 1; }
std::ostream& DataParallel::Log(std::ostream& log) { return log; }
void DataParallel::Configure(TrainOptions&) {}

}  // namespace fashion_mnist
