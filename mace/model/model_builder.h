// Builds a NetDef in code and serializes it as MACE's `.pb` + `.data` pair
// (weights laid out in tensor order, 4-byte aligned except uint8, floats in
// the chosen storage type). Used by tests today and by the converters.

#ifndef MACE_MODEL_MODEL_BUILDER_H_
#define MACE_MODEL_MODEL_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "mace/model/mace.pb.h"
#include "mace/public/mace.h"

namespace mace {

// How float weights are stored in `.data`; compute is fp32 either way.
enum class WeightStorage { kFloat32, kFloat16, kBFloat16 };

class ModelBuilder {
 public:
  explicit ModelBuilder(const std::string &name = "model");

  OperatorDef *AddOp(const std::string &type, const std::string &name,
                     const std::vector<std::string> &inputs,
                     const std::vector<std::string> &outputs);
  static void AddIntArg(OperatorDef *op, const std::string &name,
                        int64_t value);
  static void AddFloatArg(OperatorDef *op, const std::string &name,
                          float value);
  static void AddStringArg(OperatorDef *op, const std::string &name,
                           const std::string &value);
  static void AddIntsArg(OperatorDef *op, const std::string &name,
                         const std::vector<int64_t> &values);
  static void AddFloatsArg(OperatorDef *op, const std::string &name,
                           const std::vector<float> &values);

  void AddFloatTensor(const std::string &name, const std::vector<int64_t> &dims,
                      const std::vector<float> &values);
  void AddInt32Tensor(const std::string &name, const std::vector<int64_t> &dims,
                      const std::vector<int32_t> &values);
  // Quantized uint8 weights (real = scale * (q - zero_point)); stored as
  // DT_UINT8 bytes, unaligned, whatever the float storage type.
  void AddUint8Tensor(const std::string &name, const std::vector<int64_t> &dims,
                      const std::vector<uint8_t> &values, float scale,
                      int32_t zero_point);

  // data_format as in the proto: 0 NONE, 1 NHWC, 2 NCHW.
  void AddInput(const std::string &name, const std::vector<int64_t> &dims,
                DataType type = DT_FLOAT, int data_format = 1);
  void AddOutput(const std::string &name, const std::vector<int64_t> &dims,
                 DataType type = DT_FLOAT, int data_format = 1);

  NetDef *mutable_net() { return &net_; }
  const NetDef &net() const { return net_; }

  // Graph bytes (.pb) and weight bytes (.data).
  MaceStatus Serialize(WeightStorage storage, std::string *graph,
                       std::string *weights) const;
  MaceStatus WriteFiles(const std::string &graph_path,
                        const std::string &weights_path,
                        WeightStorage storage = WeightStorage::kFloat32) const;

 private:
  struct PendingTensor {
    std::vector<float> floats;
    std::vector<int32_t> ints;
    std::vector<uint8_t> bytes;
  };
  NetDef net_;
  std::vector<PendingTensor> values_;  // parallel to net_.tensors()
};

}  // namespace mace

#endif  // MACE_MODEL_MODEL_BUILDER_H_
