// Writes a small but real CNN, `mobilenet_mini`, as MACE model files
// (<dir>/mobilenet_mini.pb + .data) through mace::ModelBuilder:
//
//   input  [1,32,32,3] NHWC
//   conv1  Conv2D 3x3 stride 2 SAME, 3 -> 8, bias, RELUX(6)  [1,16,16,8]
//   dw1    DepthwiseConv2d 3x3 stride 1 SAME, bias, RELU     [1,16,16,8]
//   pw1    Conv2D 1x1, 8 -> 16, bias, RELU                   [1,16,16,16]
//   pool   Pooling AVG global                                [1,1,1,16]
//   flat   Reshape to [1,16]                                 [1,16]
//   fc     FullyConnected 16 -> 10, bias                     [1,10]
//   prob   Softmax                                           [1,10]
//
// Weights are fixed-seed He-uniform (variance 2 / fan_in, so activations
// keep their scale through the ReLUs), biases small; the generator's raw
// output is mapped to floats by hand so every platform writes the same
// bytes. Usage: mace_make_example_model [output_dir] (default ".").

#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "mace/model/model_builder.h"

namespace {

constexpr int kNhwc = 1;
constexpr int kNone = 0;
constexpr int kSame = 1;

// Fixed-seed uniform values with the same bytes on every platform.
class WeightSource {
 public:
  explicit WeightSource(uint32_t seed) : gen_(seed) {}

  // n values uniform in [-limit, limit).
  std::vector<float> Uniform(int64_t n, double limit) {
    std::vector<float> values(static_cast<size_t>(n));
    for (float &v : values) {
      const double unit = static_cast<double>(gen_() >> 8) / 16777216.0;
      v = static_cast<float>((2.0 * unit - 1.0) * limit);
    }
    return values;
  }

  // He-uniform: variance 2 / fan_in.
  std::vector<float> He(int64_t n, int64_t fan_in) {
    return Uniform(n, std::sqrt(6.0 / static_cast<double>(fan_in)));
  }

 private:
  std::mt19937 gen_;
};

void SetOutputShape(mace::OperatorDef *op, const std::vector<int64_t> &dims) {
  mace::OutputShape *shape = op->add_output_shape();
  for (int64_t d : dims) shape->add_dims(d);
  op->add_output_type(mace::DT_FLOAT);
}

// Arguments every NHWC float op of a MACE model carries.
void AddCommonArgs(mace::OperatorDef *op) {
  mace::ModelBuilder::AddIntArg(op, "T", mace::DT_FLOAT);
  mace::ModelBuilder::AddIntArg(op, "data_format", kNhwc);
}

void AddWindowArgs(mace::OperatorDef *op, int64_t stride) {
  mace::ModelBuilder::AddIntsArg(op, "strides", {stride, stride});
  mace::ModelBuilder::AddIntArg(op, "padding", kSame);
  mace::ModelBuilder::AddIntsArg(op, "dilations", {1, 1});
}

void BuildModel(mace::ModelBuilder *b) {
  using mace::ModelBuilder;
  WeightSource w(20240601);
  b->AddInput("input", {1, 32, 32, 3}, mace::DT_FLOAT, kNhwc);

  b->AddFloatTensor("conv1/filter", {8, 3, 3, 3}, w.He(8 * 3 * 3 * 3, 27));
  b->AddFloatTensor("conv1/bias", {8}, w.Uniform(8, 0.1));
  auto *conv1 = b->AddOp("Conv2D", "conv1",
                         {"input", "conv1/filter", "conv1/bias"}, {"conv1"});
  AddCommonArgs(conv1);
  AddWindowArgs(conv1, 2);
  ModelBuilder::AddStringArg(conv1, "activation", "RELUX");
  ModelBuilder::AddFloatArg(conv1, "max_limit", 6.0f);
  SetOutputShape(conv1, {1, 16, 16, 8});

  b->AddFloatTensor("dw1/filter", {3, 3, 8, 1}, w.He(3 * 3 * 8, 9));
  b->AddFloatTensor("dw1/bias", {8}, w.Uniform(8, 0.1));
  auto *dw1 = b->AddOp("DepthwiseConv2d", "dw1",
                       {"conv1", "dw1/filter", "dw1/bias"}, {"dw1"});
  AddCommonArgs(dw1);
  AddWindowArgs(dw1, 1);
  ModelBuilder::AddStringArg(dw1, "activation", "RELU");
  SetOutputShape(dw1, {1, 16, 16, 8});

  b->AddFloatTensor("pw1/filter", {16, 1, 1, 8}, w.He(16 * 8, 8));
  b->AddFloatTensor("pw1/bias", {16}, w.Uniform(16, 0.1));
  auto *pw1 =
      b->AddOp("Conv2D", "pw1", {"dw1", "pw1/filter", "pw1/bias"}, {"pw1"});
  AddCommonArgs(pw1);
  AddWindowArgs(pw1, 1);
  ModelBuilder::AddStringArg(pw1, "activation", "RELU");
  SetOutputShape(pw1, {1, 16, 16, 16});

  // Global average pooling; the full-size kernel keeps the op meaningful
  // for readers that ignore `global_pooling`.
  auto *pool = b->AddOp("Pooling", "pool", {"pw1"}, {"pool"});
  AddCommonArgs(pool);
  ModelBuilder::AddIntArg(pool, "pooling_type", 1);
  ModelBuilder::AddIntArg(pool, "global_pooling", 1);
  ModelBuilder::AddIntsArg(pool, "kernels", {16, 16});
  ModelBuilder::AddIntsArg(pool, "strides", {1, 1});
  ModelBuilder::AddIntArg(pool, "padding", 0);
  SetOutputShape(pool, {1, 1, 1, 16});

  b->AddInt32Tensor("flat/shape", {2}, {1, 16});
  auto *flat = b->AddOp("Reshape", "flat", {"pool", "flat/shape"}, {"flat"});
  AddCommonArgs(flat);
  SetOutputShape(flat, {1, 16});

  // Glorot-scaled logits: spread enough for a non-uniform softmax, small
  // enough not to saturate it.
  b->AddFloatTensor("fc/weight", {10, 16},
                    w.Uniform(10 * 16, std::sqrt(6.0 / (16 + 10))));
  b->AddFloatTensor("fc/bias", {10}, w.Uniform(10, 0.1));
  auto *fc = b->AddOp("FullyConnected", "fc", {"flat", "fc/weight", "fc/bias"},
                      {"fc"});
  AddCommonArgs(fc);
  SetOutputShape(fc, {1, 10});

  auto *prob = b->AddOp("Softmax", "prob", {"fc"}, {"prob"});
  AddCommonArgs(prob);
  SetOutputShape(prob, {1, 10});

  b->AddOutput("prob", {1, 10}, mace::DT_FLOAT, kNone);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc > 2 || (argc == 2 && (std::string(argv[1]) == "--help" ||
                                 std::string(argv[1]) == "-h"))) {
    std::cerr << "usage: mace_make_example_model [output_dir]\n"
                 "writes output_dir/mobilenet_mini.pb and .data\n";
    return argc > 2 ? 2 : 0;
  }
  const std::string dir = argc == 2 ? argv[1] : ".";
  mace::ModelBuilder builder("mobilenet_mini");
  BuildModel(&builder);
  const std::string base = dir + "/mobilenet_mini";
  const mace::MaceStatus status =
      builder.WriteFiles(base + ".pb", base + ".data");
  if (status != mace::MaceStatus::MACE_SUCCESS) {
    std::cerr << "mace_make_example_model: error: " << status.information()
              << std::endl;
    return 2;
  }
  std::cout << "wrote " << base << ".pb and " << base << ".data" << std::endl;
  return 0;
}
