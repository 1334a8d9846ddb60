// The packed weight cache: arrays written by one load come back, unchanged
// and marked ready, to the next load of the same key; other keys, damaged
// files and changed array sizes mean packing anew, never reading outside
// the file. Then the engine end to end: outputs are bitwise the same with
// no cache, a cold one and a warm one, and a stale, damaged or unwritable
// cache file only costs the packing.

#include "mace/core/packed_weight_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mace/model/model_builder.h"
#include "mace/public/mace.h"
#include "tests/common/reference.h"

namespace mace {
namespace {

using test::RandomFloats;

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/mace_packed_XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string File(const std::string &name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string ReadAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

ino_t Inode(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 ? info.st_ino : 0;
}

// Fills `count` floats at `data` from `seed`.
void Fill(void *data, int64_t count, float seed) {
  float *values = static_cast<float *>(data);
  for (int64_t i = 0; i < count; ++i) values[i] = seed + 0.5f * i;
}

bool Holds(const void *data, int64_t count, float seed) {
  std::vector<float> expected(count);
  Fill(expected.data(), count, seed);
  return std::memcmp(data, expected.data(), count * sizeof(float)) == 0;
}

// Writes a cache of key "k1" holding op 3's arrays of 100 and 7 floats and
// op 9's array of 64 floats.
void WriteThreeArrays(const std::string &path) {
  PackedWeightCache cache(path, "k1");
  EXPECT_FALSE(cache.Load(nullptr));
  auto op3 = cache.SourceFor(3);
  auto op9 = cache.SourceFor(9);
  bool ready = true;
  Fill(op3->Acquire(100 * 4, &ready), 100, 1.0f);
  EXPECT_FALSE(ready);
  Fill(op9->Acquire(64 * 4, &ready), 64, 3.0f);
  Fill(op3->Acquire(7 * 4, &ready), 7, 2.0f);
  EXPECT_EQ(cache.misses(), 3);
  ASSERT_EQ(cache.Save(), MaceStatus::MACE_SUCCESS);
}

TEST(PackedWeightCacheTest, SavedArraysComeBackReadyForTheSameKey) {
  TempDir dir;
  const std::string path = dir.File("m.packed");
  WriteThreeArrays(path);
  const ino_t written = Inode(path);

  PackedWeightCache cache(path, "k1");
  std::string reason;
  ASSERT_TRUE(cache.Load(&reason)) << reason;
  auto op3 = cache.SourceFor(3);
  auto op9 = cache.SourceFor(9);
  bool ready = false;
  const void *a = op3->Acquire(100 * 4, &ready);
  EXPECT_TRUE(ready);
  EXPECT_TRUE(Holds(a, 100, 1.0f));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % PackedWeightCache::kAlignment, 0u);
  const void *b = op3->Acquire(7 * 4, &ready);
  EXPECT_TRUE(ready);
  EXPECT_TRUE(Holds(b, 7, 2.0f));
  const void *c = op9->Acquire(64 * 4, &ready);
  EXPECT_TRUE(ready);
  EXPECT_TRUE(Holds(c, 64, 3.0f));
  EXPECT_EQ(cache.hits(), 3);
  EXPECT_EQ(cache.misses(), 0);
  // Nothing new: the file is left alone.
  ASSERT_EQ(cache.Save(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(Inode(path), written);
}

TEST(PackedWeightCacheTest, SubsetOfOpsFindsItsArrays) {
  TempDir dir;
  const std::string path = dir.File("m.packed");
  WriteThreeArrays(path);
  PackedWeightCache cache(path, "k1");
  ASSERT_TRUE(cache.Load(nullptr));
  bool ready = false;
  const void *c = cache.SourceFor(9)->Acquire(64 * 4, &ready);
  EXPECT_TRUE(ready);
  EXPECT_TRUE(Holds(c, 64, 3.0f));
}

TEST(PackedWeightCacheTest, OtherKeyIsIgnoredAndReplaced) {
  TempDir dir;
  const std::string path = dir.File("m.packed");
  WriteThreeArrays(path);
  PackedWeightCache cache(path, "k2");
  std::string reason;
  EXPECT_FALSE(cache.Load(&reason));
  EXPECT_NE(reason.find("another"), std::string::npos) << reason;
  bool ready = true;
  Fill(cache.SourceFor(3)->Acquire(100 * 4, &ready), 100, 5.0f);
  EXPECT_FALSE(ready);
  ASSERT_EQ(cache.Save(), MaceStatus::MACE_SUCCESS);

  PackedWeightCache reloaded(path, "k2");
  ASSERT_TRUE(reloaded.Load(nullptr));
  const void *a = reloaded.SourceFor(3)->Acquire(100 * 4, &ready);
  EXPECT_TRUE(ready);
  EXPECT_TRUE(Holds(a, 100, 5.0f));
}

TEST(PackedWeightCacheTest, ChangedSizeIsPackedAnewAndTheFileRewritten) {
  TempDir dir;
  const std::string path = dir.File("m.packed");
  WriteThreeArrays(path);
  {
    PackedWeightCache cache(path, "k1");
    ASSERT_TRUE(cache.Load(nullptr));
    auto op3 = cache.SourceFor(3);
    bool ready = false;
    op3->Acquire(100 * 4, &ready);
    EXPECT_TRUE(ready);
    Fill(op3->Acquire(8 * 4, &ready), 8, 4.0f);  // was 7 floats
    EXPECT_FALSE(ready);
    EXPECT_EQ(cache.hits(), 1);
    EXPECT_EQ(cache.misses(), 1);
    ASSERT_EQ(cache.Save(), MaceStatus::MACE_SUCCESS);
  }
  // The rewritten file holds what was requested: the mapped array and the
  // new one (op 9's, not requested, is dropped).
  PackedWeightCache cache(path, "k1");
  ASSERT_TRUE(cache.Load(nullptr));
  auto op3 = cache.SourceFor(3);
  bool ready = false;
  EXPECT_TRUE(Holds(op3->Acquire(100 * 4, &ready), 100, 1.0f));
  EXPECT_TRUE(ready);
  EXPECT_TRUE(Holds(op3->Acquire(8 * 4, &ready), 8, 4.0f));
  EXPECT_TRUE(ready);
  cache.SourceFor(9)->Acquire(64 * 4, &ready);
  EXPECT_FALSE(ready);
}

TEST(PackedWeightCacheTest, DamagedFilesAreNeverReadOutOfBounds) {
  TempDir dir;
  const std::string good_path = dir.File("good.packed");
  WriteThreeArrays(good_path);
  const std::string good = ReadAll(good_path);
  const std::string path = dir.File("damaged.packed");
  std::vector<std::string> variants;
  // Every truncation of the header, key and table, and a few in the blobs.
  for (size_t length = 0; length < 160 && length < good.size(); ++length) {
    variants.push_back(good.substr(0, length));
  }
  variants.push_back(good.substr(0, good.size() - 1));
  // Every byte of the header, key and table flipped.
  for (size_t i = 0; i < 128 && i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0xff);
    variants.push_back(bad);
  }
  int loaded = 0;
  for (const std::string &bytes : variants) {
    WriteAll(path, bytes);
    PackedWeightCache cache(path, "k1");
    std::string reason;
    if (!cache.Load(&reason)) {
      EXPECT_FALSE(reason.empty());
      continue;
    }
    ++loaded;
    // Whatever a damaged table still maps lies inside the file.
    const std::map<int, std::vector<int64_t>> requests = {{3, {100 * 4, 7 * 4}},
                                                          {9, {64 * 4}}};
    for (const auto &op : requests) {
      auto source = cache.SourceFor(op.first);
      for (int64_t bytes : op.second) {
        bool ready = false;
        const unsigned char *data =
            static_cast<const unsigned char *>(source->Acquire(bytes, &ready));
        ASSERT_NE(data, nullptr);
        unsigned sum = 0;
        for (int64_t i = 0; i < bytes; ++i) sum += data[i];
        (void)sum;
      }
    }
  }
  // Flips inside blob padding or unused fields may leave a usable file;
  // most damage must not.
  EXPECT_LT(loaded, static_cast<int>(variants.size()) / 2);
}

TEST(PackedWeightCacheTest, SaveIntoMissingDirectoryIsAnErrorNamingThePath) {
  PackedWeightCache cache("/nonexistent-mace-dir/m.packed", "k1");
  EXPECT_FALSE(cache.Load(nullptr));
  bool ready = true;
  Fill(cache.SourceFor(0)->Acquire(16, &ready), 4, 1.0f);
  const MaceStatus status = cache.Save();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("/nonexistent-mace-dir/m.packed"),
            std::string::npos)
      << status.information();
}

// ---- through the engine ------------------------------------------------

// Every op that packs at load: a Winograd 3x3 convolution, a 1x1 one
// (im2col SGEMM), a GEMM Deconv2D and a MatMul by a constant B.
struct PackingModel {
  std::string graph_path;
  std::string data_path;
};

// Writes the builder's model as <name>.pb and <name>.data in `dir`.
PackingModel WriteModelFiles(const ModelBuilder &builder, const TempDir &dir,
                             const std::string &name) {
  PackingModel model{dir.File(name + ".pb"), dir.File(name + ".data")};
  EXPECT_EQ(builder.WriteFiles(model.graph_path, model.data_path),
            MaceStatus::MACE_SUCCESS);
  return model;
}

PackingModel WritePackingModel(const TempDir &dir) {
  ModelBuilder builder("packing");
  builder.AddInput("x", {1, 10, 9, 8});
  builder.AddFloatTensor("w3", {16, 3, 3, 8},
                         RandomFloats(16 * 9 * 8, -1, 1, 11));
  builder.AddFloatTensor("b3", {16}, RandomFloats(16, -1, 1, 12));
  OperatorDef *wino =
      builder.AddOp("Conv2D", "wino", {"x", "w3", "b3"}, {"h1"});
  ModelBuilder::AddIntArg(wino, "padding", 1);
  ModelBuilder::AddIntArg(wino, "winograd", 2);
  builder.AddFloatTensor("w1", {20, 1, 1, 16},
                         RandomFloats(20 * 16, -1, 1, 13));
  OperatorDef *pointwise =
      builder.AddOp("Conv2D", "pointwise", {"h1", "w1"}, {"h2"});
  ModelBuilder::AddIntArg(pointwise, "winograd", 0);
  builder.AddFloatTensor("wd", {6, 3, 3, 20},
                         RandomFloats(6 * 9 * 20, -1, 1, 14));
  OperatorDef *up = builder.AddOp("Deconv2D", "up", {"h2", "wd"}, {"up"});
  ModelBuilder::AddIntsArg(up, "strides", {2, 2});
  builder.AddFloatTensor("wm", {20, 12}, RandomFloats(20 * 12, -1, 1, 15));
  builder.AddOp("MatMul", "proj", {"h2", "wm"}, {"proj"});
  builder.AddOutput("up", {1, 21, 19, 6});
  builder.AddOutput("proj", {1, 10, 9, 12});
  return WriteModelFiles(builder, dir, "packing");
}

// The outputs of one engine over the model's files, cached in
// `cache_path` (empty: no cache), bit patterns concatenated.
std::string RunEngine(const PackingModel &model, const std::string &cache_path,
                      const std::vector<std::string> &outputs = {"up",
                                                                 "proj"}) {
  MaceEngineConfig config(DeviceType::CPU);
  EXPECT_EQ(config.SetCPUThreadPolicy(2, AFFINITY_NONE),
            MaceStatus::MACE_SUCCESS);
  config.SetPackedWeightCache(cache_path);
  std::shared_ptr<MaceEngine> engine;
  MaceStatus status = CreateMaceEngineFromProto(
      model.graph_path, model.data_path, {"x"}, outputs, config, &engine);
  EXPECT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
  if (engine == nullptr) return "";
  const std::vector<float> x = RandomFloats(10 * 9 * 8, -1, 1, 16);
  std::shared_ptr<float> input(new float[x.size()],
                               std::default_delete<float[]>());
  std::copy(x.begin(), x.end(), input.get());
  std::map<std::string, MaceTensor> inputs = {
      {"x", MaceTensor({1, 10, 9, 8}, input)}};
  std::map<std::string, MaceTensor> results;
  status = engine->Run(inputs, &results);
  EXPECT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
  std::string bits;
  for (const std::string &name : outputs) {
    const MaceTensor &tensor = results[name];
    int64_t count = 1;
    for (int64_t d : tensor.shape()) count *= d;
    bits.append(reinterpret_cast<const char *>(tensor.data().get()),
                count * sizeof(float));
  }
  return bits;
}

TEST(PackedWeightEngineTest, ColdAndWarmCacheRunBitwiseAsNoCache) {
  TempDir dir;
  const PackingModel model = WritePackingModel(dir);
  const std::string cache = dir.File("packing.packed");
  const std::string expected = RunEngine(model, "");
  ASSERT_FALSE(expected.empty());
  EXPECT_TRUE(RunEngine(model, cache) == expected);  // cold: writes the file
  const ino_t written = Inode(cache);
  ASSERT_NE(written, 0u);
  EXPECT_TRUE(RunEngine(model, cache) == expected);  // warm: maps it
  // Every array came from the file: nothing to write back.
  EXPECT_EQ(Inode(cache), written);
  // An engine of one output prepares fewer ops and still finds its arrays.
  EXPECT_TRUE(RunEngine(model, cache, {"proj"}) ==
              RunEngine(model, "", {"proj"}));
  EXPECT_EQ(Inode(cache), written);
}

TEST(PackedWeightEngineTest, ChangedWeightsFileReplacesTheCache) {
  TempDir dir;
  const PackingModel model = WritePackingModel(dir);
  const std::string cache = dir.File("packing.packed");
  const std::string expected = RunEngine(model, cache);
  const ino_t written = Inode(cache);
  // New weights of the same size: only the modification time tells.
  std::string data = ReadAll(model.data_path);
  for (size_t i = 0; i + 4 <= data.size(); i += 4) {
    float value;
    std::memcpy(&value, &data[i], 4);
    value = -value;
    std::memcpy(&data[i], &value, 4);
  }
  WriteAll(model.data_path, data);
  struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 678}};
  ASSERT_EQ(utimensat(AT_FDCWD, model.data_path.c_str(), times, 0), 0);
  const std::string negated = RunEngine(model, cache);
  EXPECT_TRUE(negated != expected);
  EXPECT_TRUE(negated == RunEngine(model, ""));
  EXPECT_NE(Inode(cache), written);
}

// Two 1x1 convolutions of x by filters "a" and "b" of one shape; with
// `swapped` the first takes "b" and the second "a". The weights file is
// the same either way, and so are the sizes of the packed arrays.
PackingModel WriteTwoFilterModel(const TempDir &dir, bool swapped) {
  ModelBuilder builder("two_filters");
  builder.AddInput("x", {1, 10, 9, 8});
  builder.AddFloatTensor("a", {12, 1, 1, 8}, RandomFloats(12 * 8, -1, 1, 21));
  builder.AddFloatTensor("b", {12, 1, 1, 8}, RandomFloats(12 * 8, -1, 1, 22));
  builder.AddOp("Conv2D", "first", {"x", swapped ? "b" : "a"}, {"up"});
  builder.AddOp("Conv2D", "second", {"x", swapped ? "a" : "b"}, {"proj"});
  builder.AddOutput("up", {1, 10, 9, 12});
  builder.AddOutput("proj", {1, 10, 9, 12});
  return WriteModelFiles(builder, dir, "two");
}

// The key names the graph by the bytes of its file: the same weights file,
// modification time and array sizes under a graph that uses the weights
// otherwise mean packing anew, and the cache rewritten.
TEST(PackedWeightEngineTest, ChangedGraphReplacesTheCache) {
  TempDir dir;
  const PackingModel model = WriteTwoFilterModel(dir, false);
  const std::string cache = dir.File("two.packed");
  RunEngine(model, cache);
  const ino_t written = Inode(cache);
  ASSERT_NE(written, 0u);
  const std::string data = ReadAll(model.data_path);
  struct stat before;
  ASSERT_EQ(stat(model.data_path.c_str(), &before), 0);
  WriteTwoFilterModel(dir, true);
  ASSERT_TRUE(ReadAll(model.data_path) == data);
  struct timespec times[2] = {{0, UTIME_OMIT}, before.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, model.data_path.c_str(), times, 0), 0);
  const std::string expected = RunEngine(model, "");
  EXPECT_TRUE(RunEngine(model, cache) == expected);
  EXPECT_NE(Inode(cache), written);
}

TEST(PackedWeightEngineTest, DamagedOrUnwritableCacheOnlyCostsThePacking) {
  TempDir dir;
  const PackingModel model = WritePackingModel(dir);
  const std::string expected = RunEngine(model, "");
  const std::string cache = dir.File("packing.packed");
  RunEngine(model, cache);
  const std::string good = ReadAll(cache);
  WriteAll(cache, good.substr(0, good.size() / 2));
  EXPECT_TRUE(RunEngine(model, cache) == expected);
  EXPECT_TRUE(ReadAll(cache) == good);  // rewritten whole
  WriteAll(cache, "not a cache file");
  EXPECT_TRUE(RunEngine(model, cache) == expected);
  EXPECT_TRUE(ReadAll(cache) == good);
  EXPECT_TRUE(RunEngine(model, "/nonexistent-mace-dir/packing.packed") ==
              expected);
  // A directory where the file should be: neither read nor replaced.
  const std::string directory = dir.File("a_directory");
  ASSERT_EQ(mkdir(directory.c_str(), 0755), 0);
  EXPECT_TRUE(RunEngine(model, directory) == expected);
  struct stat info;
  ASSERT_EQ(stat(directory.c_str(), &info), 0);
  EXPECT_TRUE(S_ISDIR(info.st_mode));
}

}  // namespace
}  // namespace mace
