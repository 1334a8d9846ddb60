// 1,000 random corruptions of a valid .pb and .data (bit flips,
// truncations, field changes): each must give an error or a valid run,
// never a crash, hang or sanitizer report. scripts/test.sh also runs this
// under AddressSanitizer + UndefinedBehaviorSanitizer.

#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "mace/public/mace.h"
#include "tests/common/reference.h"
#include "tests/common/small_cnn.h"

namespace mace {
namespace test {
namespace {

constexpr int kCorruptions = 1000;
// Valid-but-huge models (a corrupted Pad or dims) are loaded and planned,
// but only run when their arena is modest, to keep the test fast.
constexpr int64_t kMaxArenaToRun = 64 << 20;

struct Outcome {
  int load_errors = 0;
  int run_errors = 0;
  int runs = 0;
};

void FlipBits(std::string *bytes, std::mt19937 *rng) {
  if (bytes->empty()) return;
  const int flips = 1 + (*rng)() % 8;
  for (int i = 0; i < flips; ++i) {
    const size_t at = (*rng)() % bytes->size();
    (*bytes)[at] = static_cast<char>((*bytes)[at] ^ (1u << ((*rng)() % 8)));
  }
}

void Truncate(std::string *bytes, std::mt19937 *rng) {
  if (!bytes->empty()) bytes->resize((*rng)() % bytes->size());
}

int64_t WildInt(std::mt19937 *rng) {
  static const int64_t kValues[] = {-1,  0,     1,      2,          3,
                                    7,   1000,  -1000,  1 << 20,    1LL << 31,
                                    -(1LL << 31), 1LL << 40, INT64_MAX,
                                    INT64_MIN};
  return kValues[(*rng)() % (sizeof(kValues) / sizeof(kValues[0]))];
}

// Changes one field of the graph to a plausible-but-wrong value.
void ChangeField(NetDef *net, std::mt19937 *rng) {
  std::mt19937 &r = *rng;
  switch (r() % 10) {
    case 0: {  // a tensor dim
      ConstTensor *t = net->mutable_tensors(r() % net->tensors_size());
      if (t->dims_size() > 0) t->set_dims(r() % t->dims_size(), WildInt(rng));
      break;
    }
    case 1:
      net->mutable_tensors(r() % net->tensors_size())->set_offset(WildInt(rng));
      break;
    case 2:
      net->mutable_tensors(r() % net->tensors_size())
          ->set_data_size(WildInt(rng));
      break;
    case 3: {  // an int or int-list argument
      OperatorDef *op = net->mutable_op(r() % net->op_size());
      if (op->arg_size() == 0) break;
      Argument *arg = op->mutable_arg(r() % op->arg_size());
      if (arg->ints_size() > 0) {
        arg->set_ints(r() % arg->ints_size(), WildInt(rng));
      } else if (r() % 2) {
        arg->set_i(WildInt(rng));
      } else {
        arg->set_f(static_cast<float>(WildInt(rng)));
      }
      break;
    }
    case 4: {  // an op input renamed or pointed at another tensor
      OperatorDef *op = net->mutable_op(r() % net->op_size());
      if (op->input_size() == 0) break;
      const OperatorDef &other = net->op(r() % net->op_size());
      op->set_input(r() % op->input_size(),
                    r() % 2 ? other.output(0) : "missing");
      break;
    }
    case 5: {  // an op type swapped with another's
      const std::string type = net->op(r() % net->op_size()).type();
      net->mutable_op(r() % net->op_size())->set_type(type);
      break;
    }
    case 6: {  // input dims
      InputOutputInfo *info = net->mutable_input_info(0);
      info->set_dims(r() % info->dims_size(),
                     static_cast<int32_t>(WildInt(rng)));
      break;
    }
    case 7:  // a weight's storage type
      net->mutable_tensors(r() % net->tensors_size())
          ->set_data_type(static_cast<DataType>(r() % 13));
      break;
    case 8: {  // an op loses or gains an input
      OperatorDef *op = net->mutable_op(r() % net->op_size());
      if (r() % 2 && op->input_size() > 0) {
        op->mutable_input()->RemoveLast();
      } else {
        op->add_input(net->tensors(r() % net->tensors_size()).name());
      }
      break;
    }
    default:  // the output renamed
      net->mutable_op(r() % net->op_size())
          ->set_output(0, net->op(r() % net->op_size()).output(0));
      break;
  }
}

void TryModel(const std::string &graph, const std::string &weights,
              const std::vector<float> &input, Outcome *outcome) {
  std::shared_ptr<MaceEngine> engine;
  const MaceStatus status = CreateMaceEngineFromProto(
      reinterpret_cast<const unsigned char *>(graph.data()), graph.size(),
      reinterpret_cast<const unsigned char *>(weights.data()), weights.size(),
      {}, {}, MaceEngineConfig(DeviceType::CPU), &engine);
  if (status != MaceStatus::MACE_SUCCESS) {
    EXPECT_FALSE(status.information().empty());
    ++outcome->load_errors;
    return;
  }
  if (engine->planned_peak_bytes() > kMaxArenaToRun) return;
  std::shared_ptr<float> buffer(new float[input.size()],
                                std::default_delete<float[]>());
  std::memcpy(buffer.get(), input.data(), input.size() * sizeof(float));
  std::map<std::string, MaceTensor> inputs{
      {"input", MaceTensor(SmallCnn::InputShape(), buffer)}};
  std::map<std::string, MaceTensor> outputs;
  if (engine->Run(inputs, &outputs) == MaceStatus::MACE_SUCCESS) {
    ++outcome->runs;
  } else {
    ++outcome->run_errors;
  }
}

TEST(ModelCorruptionTest, ThousandCorruptionsGiveErrorsOrValidRuns) {
  std::string graph, weights;
  ASSERT_EQ(SmallCnn().Build().Serialize(WeightStorage::kFloat32, &graph,
                                         &weights),
            MaceStatus::MACE_SUCCESS);
  NetDef original;
  ASSERT_TRUE(original.ParseFromString(graph));
  const std::vector<float> input =
      RandomFloats(Product(SmallCnn::InputShape()), -1, 1, 5);
  // MACE_FUZZ_SEED explores other corruptions locally; CI uses the default.
  const char *seed_env = std::getenv("MACE_FUZZ_SEED");
  std::mt19937 rng(seed_env ? std::strtoul(seed_env, nullptr, 10) : 20261121);
  Outcome outcome;
  for (int i = 0; i < kCorruptions; ++i) {
    std::string bad_graph = graph, bad_weights = weights;
    switch (i % 5) {
      case 0: FlipBits(&bad_graph, &rng); break;
      case 1: FlipBits(&bad_weights, &rng); break;
      case 2:
        if (rng() % 2) {
          Truncate(&bad_graph, &rng);
        } else {
          Truncate(&bad_weights, &rng);
        }
        break;
      default: {
        NetDef net = original;
        const int changes = 1 + rng() % 3;
        for (int c = 0; c < changes; ++c) ChangeField(&net, &rng);
        net.SerializeToString(&bad_graph);
        break;
      }
    }
    SCOPED_TRACE("corruption #" + std::to_string(i));
    TryModel(bad_graph, bad_weights, input, &outcome);
  }
  // Both outcomes must occur, or the corruptions are not reaching the
  // validator (or everything is rejected, valid variants included).
  EXPECT_GT(outcome.load_errors, 100);
  EXPECT_GT(outcome.runs, 50);
  std::printf("corruptions: %d load errors, %d run errors, %d valid runs\n",
              outcome.load_errors, outcome.run_errors, outcome.runs);
}

}  // namespace
}  // namespace test
}  // namespace mace
