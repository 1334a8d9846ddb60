#include "tests/common/net_test_util.h"

#include <gtest/gtest.h>

#include <utility>

#include "mace/ops/op_registry.h"

namespace mace {
namespace test {

NetDef BuildNetDef(const ModelBuilder &builder, std::string *weights) {
  std::string graph;
  EXPECT_EQ(builder.Serialize(WeightStorage::kFloat32, &graph, weights),
            MaceStatus::MACE_SUCCESS);
  NetDef net;
  EXPECT_TRUE(net.ParseFromString(graph));
  return net;
}

MaceStatus InitNetForTest(NetDef def, const std::string &weights,
                          ThreadPool *pool, Net *net) {
  const OpRegistry &registry = OpRegistry::Global();
  bool borrowed = false;
  return net->Init(
      std::move(def), reinterpret_cast<const unsigned char *>(weights.data()),
      static_cast<int64_t>(weights.size()), {}, {},
      [&registry](const std::string &type) { return registry.Create(type); },
      pool, &borrowed);
}

MaceStatus BoundNet::Init(NetDef def, const std::string &weights,
                          int threads) {
  pool_ = std::make_unique<ThreadPool>(threads, AFFINITY_NONE);
  MACE_RETURN_IF_ERROR(pool_->Init());
  MACE_RETURN_IF_ERROR(
      InitNetForTest(std::move(def), weights, pool_.get(), &net_));
  arena_.assign(net_.arena_bytes() + 1, 0);
  net_.BindArena(arena_.data());
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace test
}  // namespace mace
