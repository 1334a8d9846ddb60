// Tensor: the size bound every op output is held to, and the tensor's own
// storage, which fails with a status (never an exception through the
// library) when the machine cannot hold it.

#include "mace/core/tensor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "mace/core/aligned_buffer.h"

namespace mace {
namespace {

TEST(TensorTest, AllocateOwnedGivesZeroedStorage) {
  Tensor tensor("t", DT_FLOAT, {3, 5});
  ASSERT_EQ(tensor.AllocateOwned(), MaceStatus::MACE_SUCCESS);
  ASSERT_NE(tensor.raw_data(), nullptr);
  for (int i = 0; i < 15; ++i) EXPECT_EQ(tensor.data<float>()[i], 0.0f);
  Tensor empty("e", DT_INT32, {0, 4});
  EXPECT_EQ(empty.AllocateOwned(), MaceStatus::MACE_SUCCESS);
}

TEST(TensorTest, AllocateOwnedLargerThanTheMachineIsAnError) {
  const int64_t elements =
      static_cast<int64_t>(PhysicalMemoryBytes() / sizeof(float)) + 1024;
  Tensor tensor("huge", DT_FLOAT, {elements});
  const MaceStatus status = tensor.AllocateOwned();
  EXPECT_EQ(status.code(), MaceStatus::MACE_OUT_OF_RESOURCES);
  EXPECT_NE(status.information().find("'huge'"), std::string::npos)
      << status.information();
  EXPECT_EQ(tensor.raw_data(), nullptr);
}

TEST(TensorTest, AllocateOwnedOfAnInvalidShapeIsAnError) {
  Tensor negative("negative", DT_FLOAT, {1, -1000, -1000});
  EXPECT_EQ(negative.AllocateOwned().code(),
            MaceStatus::MACE_OUT_OF_RESOURCES);
  EXPECT_EQ(negative.raw_data(), nullptr);
}

TEST(TensorTest, HasValidSizeBoundsShapeTypeAndBytes) {
  EXPECT_TRUE(HasValidSize(Tensor("a", DT_FLOAT, {2, 3})));
  EXPECT_TRUE(HasValidSize(Tensor("scalar", DT_FLOAT, {})));
  EXPECT_FALSE(HasValidSize(Tensor("negative", DT_FLOAT, {2, -1})));
  const int64_t max_floats = kMaxTensorBytes / 4;
  EXPECT_TRUE(HasValidSize(Tensor("largest", DT_FLOAT, {max_floats})));
  EXPECT_FALSE(HasValidSize(Tensor("larger", DT_FLOAT, {max_floats + 1})));
  // A count whose bytes would overflow int64.
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_FALSE(HasValidSize(Tensor("overflow", DT_FLOAT, {max / 2})));
}

}  // namespace
}  // namespace mace
