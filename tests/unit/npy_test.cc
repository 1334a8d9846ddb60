#include "mace/tools/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace mace {
namespace tools {
namespace {

using Type = NpyArray::Type;

// A .npy file built by hand: magic, version, header length, header, data.
std::string MakeNpy(const std::string &header_dict, const std::string &data,
                    int major = 1) {
  std::string header = header_dict;
  const size_t prefix = major == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  const size_t length_bytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < length_bytes; ++i) {
    out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  }
  return out + header + data;
}

std::string Dict(const std::string &descr, const std::string &shape,
                 const std::string &fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran +
         ", 'shape': " + shape + ", }";
}

template <typename T>
std::string Bytes(const std::vector<T> &values) {
  std::string out(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(&out[0], values.data(), out.size());
  return out;
}

MaceStatus Parse(const std::string &bytes, NpyArray *array) {
  return ParseNpy(bytes, "test.npy", array);
}

// The parse fails with a message naming the file and containing `what`.
void ExpectError(const std::string &bytes, const std::string &what) {
  NpyArray array;
  const MaceStatus status = Parse(bytes, &array);
  ASSERT_NE(status, MaceStatus::MACE_SUCCESS) << "expected: " << what;
  EXPECT_NE(status.information().find("test.npy"), std::string::npos)
      << status.information();
  EXPECT_NE(status.information().find(what), std::string::npos)
      << status.information();
}

std::string TempPath(const std::string &name) {
  const char *dir = std::getenv("TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/mace_npy_test_" +
         std::to_string(getpid()) + "_" + name;
}

TEST(NpyTest, Float32RoundTripKeepsShapeAndValues) {
  NpyArray array;
  array.shape = {2, 3, 4, 5};
  for (int i = 0; i < 120; ++i) array.floats.push_back(i * 0.25f - 7.0f);
  array.floats[3] = -0.0f;
  array.floats[4] = 1e-40f;  // subnormal
  std::string bytes;
  ASSERT_EQ(SerializeNpy(array, &bytes), MaceStatus::MACE_SUCCESS);
  NpyArray back;
  ASSERT_EQ(Parse(bytes, &back), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(back.type, Type::kFloat32);
  EXPECT_EQ(back.shape, array.shape);
  EXPECT_EQ(back.source_dtype, "<f4");
  ASSERT_EQ(back.floats.size(), array.floats.size());
  EXPECT_EQ(std::memcmp(back.floats.data(), array.floats.data(),
                        array.floats.size() * 4),
            0);
}

TEST(NpyTest, Int32RoundTripKeepsExtremes) {
  NpyArray array;
  array.type = Type::kInt32;
  array.shape = {4};
  array.ints = {INT32_MIN, -1, 0, INT32_MAX};
  std::string bytes;
  ASSERT_EQ(SerializeNpy(array, &bytes), MaceStatus::MACE_SUCCESS);
  NpyArray back;
  ASSERT_EQ(Parse(bytes, &back), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(back.type, Type::kInt32);
  EXPECT_EQ(back.shape, array.shape);
  EXPECT_EQ(back.ints, array.ints);
}

TEST(NpyTest, ScalarAndEmptyArraysRoundTrip) {
  NpyArray scalar;
  scalar.floats = {3.5f};
  std::string bytes;
  ASSERT_EQ(SerializeNpy(scalar, &bytes), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(bytes.find("'shape': ()"), std::string::npos);
  NpyArray back;
  ASSERT_EQ(Parse(bytes, &back), MaceStatus::MACE_SUCCESS);
  EXPECT_TRUE(back.shape.empty());
  EXPECT_EQ(back.floats, std::vector<float>{3.5f});

  NpyArray empty;
  empty.shape = {2, 0, 3};
  ASSERT_EQ(SerializeNpy(empty, &bytes), MaceStatus::MACE_SUCCESS);
  ASSERT_EQ(Parse(bytes, &back), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(back.shape, empty.shape);
  EXPECT_TRUE(back.floats.empty());
}

TEST(NpyTest, WrittenHeaderIsVersion1AlignedTo64) {
  NpyArray array;
  array.shape = {7};
  array.floats.assign(7, 1.0f);
  std::string bytes;
  ASSERT_EQ(SerializeNpy(array, &bytes), MaceStatus::MACE_SUCCESS);
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 6), std::string("\x93NUMPY", 6));
  EXPECT_EQ(bytes[6], 1);
  EXPECT_EQ(bytes[7], 0);
  const size_t header_len = static_cast<unsigned char>(bytes[8]) |
                            (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_EQ(bytes[10 + header_len - 1], '\n');
  EXPECT_NE(bytes.find("'shape': (7,)"), std::string::npos);
  EXPECT_EQ(bytes.size(), 10 + header_len + 7 * 4);
}

TEST(NpyTest, SerializeRejectsValueCountThatDoesNotMatchShape) {
  NpyArray array;
  array.shape = {2, 2};
  array.floats = {1, 2, 3};
  std::string bytes;
  EXPECT_NE(SerializeNpy(array, &bytes), MaceStatus::MACE_SUCCESS);
}

TEST(NpyTest, FilesRoundTripThroughWriteAndRead) {
  const std::string path = TempPath("round_trip.npy");
  NpyArray array;
  array.shape = {1, 10};
  for (int i = 0; i < 10; ++i) array.floats.push_back(i / 10.0f);
  ASSERT_EQ(WriteNpy(path, array), MaceStatus::MACE_SUCCESS);
  NpyArray back;
  ASSERT_EQ(ReadNpy(path, &back), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(back.shape, array.shape);
  EXPECT_EQ(back.floats, array.floats);
  std::remove(path.c_str());
}

TEST(NpyTest, MissingFileIsAnErrorNamingIt) {
  NpyArray array;
  const MaceStatus status = ReadNpy("/nonexistent/dir/x.npy", &array);
  ASSERT_NE(status, MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("/nonexistent/dir/x.npy"),
            std::string::npos);
}

TEST(NpyTest, WriteToMissingDirectoryIsAnError) {
  NpyArray array;
  array.floats = {1.0f};
  EXPECT_NE(WriteNpy("/nonexistent/dir/x.npy", array),
            MaceStatus::MACE_SUCCESS);
}

TEST(NpyTest, ReadsFloat64AsFloat32) {
  NpyArray array;
  ASSERT_EQ(
      Parse(MakeNpy(Dict("<f8", "(3,)"), Bytes<double>({1.5, -2.25, 1e-3})),
            &array),
      MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(array.type, Type::kFloat32);
  EXPECT_EQ(array.source_dtype, "<f8");
  EXPECT_EQ(array.floats, (std::vector<float>{1.5f, -2.25f, 1e-3f}));
}

TEST(NpyTest, ReadsFloat16AsFloat32) {
  // 1.0, -2.0, 0.5, 65504 (max half), 2^-24 (smallest subnormal)
  NpyArray array;
  ASSERT_EQ(
      Parse(MakeNpy(Dict("<f2", "(5,)"),
                    Bytes<uint16_t>({0x3C00, 0xC000, 0x3800, 0x7BFF, 0x0001})),
            &array),
      MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(array.type, Type::kFloat32);
  EXPECT_EQ(array.floats, (std::vector<float>{1.0f, -2.0f, 0.5f, 65504.0f,
                                              5.9604644775390625e-8f}));
}

TEST(NpyTest, ReadsInt64AsInt32) {
  NpyArray array;
  ASSERT_EQ(Parse(MakeNpy(Dict("<i8", "(2, 2)"),
                          Bytes<int64_t>({-5, 0, 7, INT32_MAX})),
                  &array),
            MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(array.type, Type::kInt32);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(array.ints, (std::vector<int32_t>{-5, 0, 7, INT32_MAX}));
}

TEST(NpyTest, Int64OutsideInt32IsAnError) {
  ExpectError(
      MakeNpy(Dict("<i8", "(2,)"), Bytes<int64_t>({1, int64_t{1} << 40})),
      "does not fit in int32");
}

TEST(NpyTest, ReadsUint8AsInt32) {
  NpyArray array;
  ASSERT_EQ(
      Parse(MakeNpy(Dict("|u1", "(4,)"), std::string("\x00\x01\x7f\xff", 4)),
            &array),
      MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(array.type, Type::kInt32);
  EXPECT_EQ(array.ints, (std::vector<int32_t>{0, 1, 127, 255}));
}

TEST(NpyTest, ReadsInt32) {
  NpyArray array;
  ASSERT_EQ(
      Parse(MakeNpy(Dict("<i4", "(1, 3)"), Bytes<int32_t>({-1, 2, 3})), &array),
      MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(array.type, Type::kInt32);
  EXPECT_EQ(array.ints, (std::vector<int32_t>{-1, 2, 3}));
}

TEST(NpyTest, ReadsVersions2And3) {
  for (int major : {2, 3}) {
    NpyArray array;
    ASSERT_EQ(Parse(MakeNpy(Dict("<f4", "(2,)"), Bytes<float>({1, 2}), major),
                    &array),
              MaceStatus::MACE_SUCCESS)
        << "version " << major;
    EXPECT_EQ(array.floats, (std::vector<float>{1, 2}));
  }
}

TEST(NpyTest, AcceptsHeaderSpellingVariants) {
  // Keys in another order, double quotes, no trailing comma, Python 2 longs.
  NpyArray array;
  ASSERT_EQ(Parse(MakeNpy("{\"shape\": (2L, 1L), \"fortran_order\": False, "
                          "\"descr\": \"<f4\"}",
                          Bytes<float>({1, 2})),
                  &array),
            MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 1}));
}

TEST(NpyTest, FortranOrderIsAnError) {
  ExpectError(
      MakeNpy(Dict("<f4", "(2, 2)", "True"), Bytes<float>({1, 2, 3, 4})),
      "Fortran order");
}

TEST(NpyTest, BadMagicIsAnError) {
  ExpectError("PK\x03\x04 this is a zip file", "bad magic");
  ExpectError("", "bad magic");
  ExpectError(std::string("\x93NUMPZ\x01\x00", 8), "bad magic");
}

TEST(NpyTest, TruncatedHeaderIsAnError) {
  const std::string good = MakeNpy(Dict("<f4", "(2,)"), Bytes<float>({1, 2}));
  ExpectError(good.substr(0, 7), "truncated header");
  ExpectError(good.substr(0, 9), "truncated header");
  ExpectError(good.substr(0, 30), "truncated header");
}

TEST(NpyTest, UnsupportedVersionIsAnError) {
  std::string bytes = MakeNpy(Dict("<f4", "(1,)"), Bytes<float>({1}));
  bytes[6] = 4;
  ExpectError(bytes, "unsupported format version 4.0");
}

TEST(NpyTest, BadHeaderDictIsAnError) {
  const std::string data = Bytes<float>({1, 2});
  ExpectError(MakeNpy("'descr': '<f4'", data), "bad header dict");
  ExpectError(MakeNpy("{'descr': '<f4', 'shape': (2,)}", data),
              "no 'fortran_order'");
  ExpectError(MakeNpy("{'fortran_order': False, 'shape': (2,)}", data),
              "no 'descr'");
  ExpectError(MakeNpy("{'descr': '<f4', 'fortran_order': False}", data),
              "no 'shape'");
  ExpectError(MakeNpy(Dict("<f4", "(2,)") + "junk", data), "unexpected text");
  ExpectError(MakeNpy("{'descr': '<f4', 'fortran_order': False, "
                      "'shape': (2,), 'extra': 1}",
                      data),
              "unexpected key 'extra'");
  ExpectError(MakeNpy(Dict("<f4", "(2, -1)"), data), "non-negative");
  ExpectError(MakeNpy(Dict("<f4", "[2]"), data), "must be a tuple");
  ExpectError(MakeNpy(Dict("<f4", "(2,)", "maybe"), data), "True or False");
  ExpectError(MakeNpy("{'descr': '<f4", data), "unterminated string");
  ExpectError(MakeNpy("{'descr': [('a', '<f4')], 'fortran_order': False, "
                      "'shape': (2,)}",
                      data),
              "structured");
  ExpectError(MakeNpy(Dict("<f4", "(99999999999999999999,)"), data),
              "too large");
}

TEST(NpyTest, UnsupportedDtypeIsAnError) {
  for (const char *descr : {"<c8", "<U4", "|b1", "<i2", "|O", "<u4", "x"}) {
    ExpectError(MakeNpy(Dict(descr, "(1,)"), std::string(16, '\0')),
                "unsupported dtype");
  }
  ExpectError(MakeNpy(Dict(">f4", "(1,)"), std::string(4, '\0')), "big-endian");
}

TEST(NpyTest, DataSizeMismatchIsAnError) {
  ExpectError(MakeNpy(Dict("<f4", "(3,)"), Bytes<float>({1, 2})), "truncated");
  ExpectError(MakeNpy(Dict("<f4", "(1,)"), Bytes<float>({1, 2})),
              "trailing bytes");
  ExpectError(
      MakeNpy(Dict("<f4", "(4611686018427387904, 4)"), Bytes<float>({1})),
      "truncated");
}

TEST(NpyTest, EveryTruncationOfAValidFileIsAnErrorNotACrash) {
  NpyArray array;
  array.shape = {3, 4};
  array.floats.assign(12, 2.0f);
  std::string bytes;
  ASSERT_EQ(SerializeNpy(array, &bytes), MaceStatus::MACE_SUCCESS);
  for (size_t n = 0; n < bytes.size(); ++n) {
    NpyArray out;
    EXPECT_NE(Parse(bytes.substr(0, n), &out), MaceStatus::MACE_SUCCESS)
        << "prefix of " << n << " bytes";
  }
}

TEST(NpyTest, RandomHeaderCorruptionNeverCrashes) {
  NpyArray array;
  array.shape = {2, 3};
  array.floats.assign(6, 1.0f);
  std::string good;
  ASSERT_EQ(SerializeNpy(array, &good), MaceStatus::MACE_SUCCESS);
  std::mt19937 gen(1);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bytes = good;
    const int flips = 1 + static_cast<int>(gen() % 4);
    for (int f = 0; f < flips; ++f) {
      bytes[gen() % 80] = static_cast<char>(gen() & 0xff);
    }
    NpyArray out;
    const MaceStatus status = Parse(bytes, &out);
    if (status == MaceStatus::MACE_SUCCESS) {
      EXPECT_EQ(
          static_cast<int64_t>(out.type == Type::kFloat32 ? out.floats.size()
                                                          : out.ints.size()),
          out.size());
    }
  }
}

}  // namespace
}  // namespace tools
}  // namespace mace
