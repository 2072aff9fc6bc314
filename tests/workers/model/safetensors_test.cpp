// RLWB's safetensors reader/writer: bit-exact round trips for every
// supported dtype, the byte layout of the spec, and errors that name the
// file and the tensor.
#include "workers/model/safetensors.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstring>

#include "tests/workers/model/model_test_support.h"
#include "workers/model/model_error.h"

namespace rlwb::workers::model {
namespace {

using testing::ScratchDir;

std::string with_header(const std::string& json, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + json + data;
}

TEST(Safetensors, RoundTripIsBitExactForEveryDtype) {
  ScratchDir dir("st");
  std::vector<std::pair<std::string, torch::Tensor>> tensors = {
      {"f64", torch::randn({3, 2}, torch::kFloat64)},
      {"f32", torch::randn({2, 3, 4})},
      {"f16", torch::randn({5}).to(torch::kFloat16)},
      {"bf16", torch::randn({4, 4}).to(torch::kBFloat16)},
      {"i64", torch::tensor(std::vector<int64_t>{-1, 0, int64_t{1} << 40})},
      {"i32", torch::tensor({-7, 7}, torch::kInt32)},
      {"i16", torch::tensor({-300, 300}, torch::kInt16)},
      {"i8", torch::tensor({-5, 5}, torch::kInt8)},
      {"u8", torch::tensor({0, 255}, torch::kUInt8)},
      {"bool", torch::tensor({true, false, true})},
      {"scalar", torch::tensor(3.25f)},
      {"empty", torch::zeros({0, 3})},
      {"strided", torch::arange(12, torch::kFloat32).view({3, 4}).t()},  // non-contiguous input
  };
  write_safetensors(dir.path() / "t.safetensors", tensors, {{"format", "pt"}, {"note", "x"}});
  SafetensorsReader reader(dir.path() / "t.safetensors");
  EXPECT_EQ(reader.metadata().at("note"), "x");
  EXPECT_EQ(reader.names().size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    torch::Tensor back = reader.tensor(name);
    EXPECT_EQ(back.scalar_type(), t.scalar_type()) << name;
    EXPECT_EQ(back.sizes(), t.sizes()) << name;
    EXPECT_TRUE(torch::equal(back, t)) << name;
  }
}

TEST(Safetensors, WrittenFileFollowsTheSpecLayout) {
  ScratchDir dir("st");
  write_safetensors(dir.path() / "a.safetensors",
                    {{"b", torch::tensor({1.0f, 2.0f})}, {"a", torch::tensor({7}, torch::kInt8)}});
  const std::string bytes = testing::read_file(dir.path() / "a.safetensors");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ((8 + n) % 8, 0u) << "data must start 8-aligned";
  const std::string header = bytes.substr(8, n);
  EXPECT_NE(header.find("\"__metadata__\":{\"format\":\"pt\"}"), std::string::npos) << header;
  EXPECT_NE(header.find("\"b\":{\"data_offsets\":[0,8],\"dtype\":\"F32\",\"shape\":[2]}"), std::string::npos)
      << header;
  EXPECT_NE(header.find("\"a\":{\"data_offsets\":[8,9],\"dtype\":\"I8\",\"shape\":[1]}"), std::string::npos)
      << header;
  ASSERT_EQ(bytes.size(), 8 + n + 9);
  float two;
  std::memcpy(&two, bytes.data() + 8 + n + 4, 4);
  EXPECT_EQ(two, 2.0f);
}

TEST(Safetensors, ReadsAHandWrittenFile) {
  ScratchDir dir("st");
  float data[2] = {1.5f, -2.0f};
  testing::write_file(dir.path() / "h.safetensors",
                      with_header(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                                  std::string(reinterpret_cast<char*>(data), 8)));
  auto all = read_safetensors(dir.path() / "h.safetensors");
  EXPECT_TRUE(torch::equal(all.at("x"), torch::tensor({1.5f, -2.0f})));
}

void expect_error(const std::string& file_bytes, const std::vector<std::string>& fragments) {
  ScratchDir dir("st");
  const auto path = dir.path() / "bad.safetensors";
  testing::write_file(path, file_bytes);
  try {
    SafetensorsReader reader(path);
    FAIL() << "no error for a bad file";
  } catch (const ModelError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path.string()), std::string::npos) << what;
    for (const auto& f : fragments)
      EXPECT_NE(what.find(f), std::string::npos) << "'" << f << "' not in: " << what;
  }
}

TEST(Safetensors, TruncatedDataNamesTheTensor) {
  expect_error(
      with_header(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", std::string(8, '\0')),
      {"tensor 'w'", "outside the data section"});
}

TEST(Safetensors, ByteCountThatDisagreesWithTheShapeNamesTheTensor) {
  expect_error(
      with_header(R"({"w":{"dtype":"F16","shape":[4],"data_offsets":[0,16]}})", std::string(16, '\0')),
      {"tensor 'w'", "need 8"});
}

TEST(Safetensors, UnknownDtypeNamesTheTensorAndDtype) {
  expect_error(
      with_header(R"({"w":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})", std::string(1, '\0')),
      {"tensor 'w'", "F8_E4M3"});
}

TEST(Safetensors, HeaderLongerThanTheFileIsRejected) {
  std::string bytes(8, '\0');
  bytes[0] = 100;
  expect_error(bytes + "{}", {"header length 100"});
}

TEST(Safetensors, HeaderThatIsNotJsonIsRejected) {
  expect_error(with_header("{not json", ""), {"not valid JSON"});
}

TEST(Safetensors, DuplicateNamesAreRefusedWhenWriting) {
  ScratchDir dir("st");
  EXPECT_THROW(
      write_safetensors(dir.path() / "d.safetensors", {{"a", torch::ones({1})}, {"a", torch::ones({1})}}),
      ModelError);
}

}  // namespace
}  // namespace rlwb::workers::model
