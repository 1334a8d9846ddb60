// Runs one op through the whole engine (model builder → serialized .pb and
// .data → CreateMaceEngineFromProto → Run) so op tests exercise the same
// path as real models. Inputs given with Input() are graph inputs fed at
// Run; Constant() ones are weights in the .data blob.

#ifndef TESTS_COMMON_OP_TESTER_H_
#define TESTS_COMMON_OP_TESTER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "mace/model/model_builder.h"
#include "mace/public/mace.h"

namespace mace {
namespace test {

struct TensorValue {
  std::vector<int64_t> shape;
  std::vector<float> floats;   // filled for float outputs
  std::vector<int32_t> ints;   // filled for int32 outputs
  bool is_int = false;
};

class OpTester {
 public:
  explicit OpTester(const std::string &type, const std::string &name = "op");

  OpTester &Input(const std::string &name, const std::vector<int64_t> &shape,
                  const std::vector<float> &data);
  OpTester &InputInt(const std::string &name,
                     const std::vector<int64_t> &shape,
                     const std::vector<int32_t> &data);
  OpTester &Constant(const std::string &name,
                     const std::vector<int64_t> &shape,
                     const std::vector<float> &data);
  OpTester &ConstantInt(const std::string &name,
                        const std::vector<int64_t> &shape,
                        const std::vector<int32_t> &data);
  // A quantized uint8 weight: real = scale * (q - zero_point).
  OpTester &ConstantUint8(const std::string &name,
                          const std::vector<int64_t> &shape,
                          const std::vector<uint8_t> &data, float scale,
                          int32_t zero_point);
  // Output names, in the op's output order. Output dtype defaults to float;
  // OutputInt marks an int32 output.
  OpTester &Output(const std::string &name);
  OpTester &OutputInt(const std::string &name);

  OpTester &Arg(const std::string &name, int64_t value);
  OpTester &ArgFloat(const std::string &name, float value);
  OpTester &ArgString(const std::string &name, const std::string &value);
  OpTester &ArgInts(const std::string &name,
                    const std::vector<int64_t> &values);
  OpTester &ArgFloats(const std::string &name,
                      const std::vector<float> &values);

  // Weights storage of the serialized model (fp32 default).
  OpTester &Storage(WeightStorage storage);
  OpTester &Threads(int num_threads);

  // Builds, loads and runs; errors from any stage come back as the status.
  MaceStatus Run();
  const TensorValue &output(int index) const { return outputs_[index]; }
  const TensorValue &output(const std::string &name) const;

 private:
  struct Fed {
    std::string name;
    std::vector<int64_t> shape;
    std::vector<float> floats;
    std::vector<int32_t> ints;
    bool is_int;
  };

  ModelBuilder builder_;
  OperatorDef *op_;
  std::vector<Fed> inputs_;
  std::vector<std::string> output_names_;
  std::vector<bool> output_is_int_;
  std::vector<TensorValue> outputs_;
  WeightStorage storage_ = WeightStorage::kFloat32;
  int num_threads_ = 1;
};

}  // namespace test
}  // namespace mace

#endif  // TESTS_COMMON_OP_TESTER_H_
