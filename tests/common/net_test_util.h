// Builds a Net straight from a graph, for tests of what Net plans and
// runs (below the engine, which OpTester goes through).

#ifndef TESTS_COMMON_NET_TEST_UTIL_H_
#define TESTS_COMMON_NET_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mace/core/net.h"
#include "mace/core/thread_pool.h"
#include "mace/model/model_builder.h"

namespace mace {
namespace test {

// The graph `builder` holds, through its serialized form, with its
// weights in fp32 in *weights (a failure is a test failure).
NetDef BuildNetDef(const ModelBuilder &builder, std::string *weights);

// Initialises `net` from `def` and its serialized `weights` with every
// registered op, on `pool`, without a packed weight store.
MaceStatus InitNetForTest(NetDef def, const std::string &weights,
                          ThreadPool *pool, Net *net);

// A Net on a thread pool of its own, initialised by InitNetForTest and
// bound to an arena of its own (one byte more than it asks for).
class BoundNet {
 public:
  // Starts a pool of `threads`, initialises the net and binds the arena.
  MaceStatus Init(NetDef def, const std::string &weights, int threads);

  Net &net() { return net_; }

 private:
  std::unique_ptr<ThreadPool> pool_;
  Net net_;
  std::vector<uint8_t> arena_;
};

}  // namespace test
}  // namespace mace

#endif  // TESTS_COMMON_NET_TEST_UTIL_H_
