// Wire codec in one process: round trips for every dtype and edge shape,
// zero copy both ways, unicode objects, shared memory (reuse, decode-once,
// reclaiming), and a WireError for every kind of malformed message.
#include "core/wire/wire.h"

#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <thread>

#include "core/batch/tensor_bits.h"
#include "core/wire/shm_segment.h"

namespace rlwb::core {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

std::vector<zmq::message_t> encode(const Batch& b, const Json& header = Json::object(),
                                   WireOptions options = {}) {
  std::vector<zmq::message_t> frames;
  encode_message(header, b, frames, options);
  return frames;
}

Message round_trip(const Batch& b, const Json& header = Json::object(), WireOptions options = {}) {
  std::vector<zmq::message_t> frames = encode(b, header, options);
  return decode_message(frames);
}

// `n` bytes 0, 7, 14, ... (mod 251) viewed as `shape` of `type`: every
// byte position holds a different value, so a shifted copy shows.
torch::Tensor patterned(torch::ScalarType type, std::vector<int64_t> shape) {
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  const int64_t item = static_cast<int64_t>(c10::elementSize(type));
  torch::Tensor bytes = (torch::arange(numel * item, torch::kInt64) * 7).remainder(251).to(torch::kUInt8);
  std::vector<int64_t> byte_shape = shape;
  byte_shape.back() *= item;
  return bytes.view(byte_shape).view(type);
}

Json header_of(const std::vector<zmq::message_t>& frames) { return Json::parse(frames[0].to_string()); }

void set_header(std::vector<zmq::message_t>& frames, const Json& h) {
  std::string text = h.dump();
  frames[0] = zmq::message_t(text.data(), text.size());
}

std::string wire_error_of(std::vector<zmq::message_t>& frames, size_t first = 0) {
  try {
    decode_message(frames, first);
  } catch (const WireError& e) {
    return e.what();
  }
  return "<no WireError thrown>";
}

size_t shm_entries_with_prefix(const std::string& prefix) {  // prefix like "/rlwb-123-"
  size_t n = 0;
  if (DIR* dir = opendir("/dev/shm")) {
    while (dirent* e = readdir(dir)) {
      if (("/" + std::string(e->d_name)).rfind(prefix, 0) == 0) ++n;
    }
    closedir(dir);
  }
  return n;
}

// [SECTION] dtypes

TEST(WireDtypes, EveryNonQuantizedScalarTypeHasAWireName) {
  for (int i = 0; i < static_cast<int>(c10::ScalarType::NumOptions); ++i) {
    auto type = static_cast<c10::ScalarType>(i);
    if (type == c10::ScalarType::Undefined) continue;
    SCOPED_TRACE(c10::toString(type));
    if (c10::isQIntType(type)) {
      EXPECT_THROW(dtype_name(type), WireError);
      continue;
    }
    std::string name = dtype_name(type);
    EXPECT_EQ(dtype_from_name(name), type);
  }
  EXPECT_EQ(dtype_name(torch::kFloat32), "float32");
  EXPECT_EQ(dtype_name(torch::kBFloat16), "bfloat16");
  EXPECT_EQ(dtype_name(torch::kFloat8_e4m3fn), "float8_e4m3fn");
}

TEST(WireDtypes, UnknownNameIsAWireError) {
  EXPECT_THROW(dtype_from_name("float31"), WireError);
  EXPECT_THROW(dtype_from_name(""), WireError);
}

TEST(WireDtypes, EveryDtypeRoundTripsBitExactInlineAndThroughSharedMemory) {
  for (int i = 0; i < static_cast<int>(c10::ScalarType::NumOptions); ++i) {
    auto type = static_cast<c10::ScalarType>(i);
    if (type == c10::ScalarType::Undefined || c10::isQIntType(type)) continue;
    SCOPED_TRACE(c10::toString(type));
    Batch b;
    b.set_tensor("t", patterned(type, {3, 5}));
    for (size_t threshold : {size_t{0}, size_t{1}}) {
      Message m = round_trip(b, Json::object(), WireOptions{threshold});
      ASSERT_EQ(m.batch.tensor("t").scalar_type(), type);
      EXPECT_EQ(m.batch.tensor("t").sizes(), (std::vector<int64_t>{3, 5}));
      EXPECT_TRUE(m.batch.tensor("t").view(torch::kUInt8).equal(b.tensor("t").view(torch::kUInt8)));
    }
  }
}

TEST(WireDtypes, QuantizedTensorCannotBeEncoded) {
  // A Batch refuses quantized tensors already; the codec names the dtype.
  EXPECT_THAT(
      [] {
        try {
          dtype_name(torch::kQUInt8);
        } catch (const WireError& e) {
          return std::string(e.what());
        }
        return std::string();
      }(),
      HasSubstr("int_repr"));
}

// [SECTION] shapes, meta and header fields

TEST(WireShapes, ZeroRowTensorsKeepTheirShape) {
  Batch b;
  b.set_tensor("a", torch::zeros({0, 5}, torch::kFloat32));
  b.set_tensor("b", torch::zeros({0, 0, 3}, torch::kBFloat16));
  b.set_tensor("c", torch::zeros({0}, torch::kBool));
  b.set_objects("o", {});
  Message m = round_trip(b);
  EXPECT_EQ(m.batch.rows(), 0);
  EXPECT_EQ(m.batch.tensor("a").sizes(), (std::vector<int64_t>{0, 5}));
  EXPECT_EQ(m.batch.tensor("b").sizes(), (std::vector<int64_t>{0, 0, 3}));
  EXPECT_EQ(m.batch.tensor("b").scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(m.batch.objects("o").empty());
  // Shared memory is never used for an empty tensor, whatever the threshold.
  std::vector<zmq::message_t> frames = encode(b, Json::object(), WireOptions{1});
  for (const Json& c : header_of(frames)["columns"]) EXPECT_EQ(c["transport"], "inline");
}

TEST(WireShapes, OneRowAndHighRankTensorsRoundTrip) {
  Batch b;
  b.set_tensor("one", torch::tensor({42}, torch::kInt64));
  b.set_tensor("rank5", patterned(torch::kFloat32, {1, 2, 1, 3, 2}));
  Message m = round_trip(b);
  EXPECT_EQ(m.batch.tensor("one").item<int64_t>(), 42);
  EXPECT_TRUE(m.batch.equals(b));
}

TEST(WireShapes, EmptyBatchAndObjectOnlyBatchRoundTrip) {
  Message empty = round_trip(Batch());
  EXPECT_TRUE(empty.batch.empty());
  Batch objects;
  objects.set_objects("prompt", {Json("a"), Json("b")});
  Message m = round_trip(objects);
  EXPECT_EQ(m.batch.rows(), 2);
  EXPECT_TRUE(m.batch.equals(objects));
}

TEST(WireHeader, CallerFieldsAndMetaScalarsRoundTrip) {
  Batch b;
  b.set_tensor("x", torch::ones({2}));
  b.meta() = {{"temperature", 0.7},
              {"eos_id", 2},
              {"greedy", true},
              {"note", nullptr},
              {"metrics", {{"actor/pg_loss", -0.25}}}};
  Json header = {{"kind", "request"}, {"id", 17}, {"method", "generate"}};
  Message m = round_trip(b, header);
  EXPECT_EQ(m.header, header);  // reserved keys are not handed back
  EXPECT_EQ(m.batch.meta(), b.meta());
  EXPECT_DOUBLE_EQ(m.batch.meta()["temperature"].get<double>(), 0.7);
}

TEST(WireHeader, ReservedKeysAndNonObjectHeadersAreRefused) {
  std::vector<zmq::message_t> frames;
  for (const char* key : {"columns", "objects", "meta"}) {
    EXPECT_THROW(encode_message({{key, 1}}, Batch(), frames), WireError) << key;
  }
  EXPECT_THROW(encode_message(Json::array(), Batch(), frames), WireError);
  EXPECT_TRUE(frames.empty());  // nothing appended on error
}

TEST(WireHeader, DecodeSkipsLeadingRoutingFrames) {
  Batch b;
  b.set_tensor("x", torch::arange(3));
  std::vector<zmq::message_t> frames;
  frames.emplace_back(std::string("identity"));
  frames.emplace_back();  // the empty delimiter
  encode_message({{"kind", "reply"}}, b, frames);
  Message m = decode_message(frames, 2);
  EXPECT_EQ(m.header["kind"], "reply");
  EXPECT_TRUE(m.batch.equals(b));
}

// [SECTION] layout: non-contiguous input, zero copy

TEST(WireLayout, NonContiguousTensorsArriveWithTheirValues) {
  torch::Tensor base = patterned(torch::kFloat32, {4, 6});
  Batch b;
  b.set_tensor("transposed", base.t());                                           // {6, 4}, strides swapped
  b.set_tensor("strided", patterned(torch::kInt16, {12, 4}).slice(0, 0, 12, 2));  // every 2nd row
  b.set_tensor("expanded", torch::arange(6, torch::kInt32).view({6, 1}).expand({6, 3}));
  b.set_tensor("conj", torch::complex(torch::ones({6}), torch::arange(6.0f)).conj());
  b.set_tensor("bits", patterned(torch::kUInt4, {6, 4}).t().t().slice(1, 0, 4, 2));
  for (size_t threshold : {size_t{0}, size_t{1}}) {
    SCOPED_TRACE(threshold);
    Message m = round_trip(b, Json::object(), WireOptions{threshold});
    EXPECT_TRUE(m.batch.equals(b));
    for (const auto& [name, t] : m.batch.tensors()) EXPECT_TRUE(t.is_contiguous()) << name;
    EXPECT_EQ(m.batch.tensor("conj")[3].item<c10::complex<float>>(), c10::complex<float>(1, -3));
    EXPECT_EQ(m.batch.tensor("expanded")[4][2].item<int32_t>(), 4);
  }
}

TEST(WireLayout, InlineEncodeSharesTheTensorsMemory) {
  torch::Tensor t = patterned(torch::kFloat64, {64, 16});
  Batch b;
  b.set_tensor("t", t);
  std::vector<zmq::message_t> frames = encode(b);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[1].data(), t.data_ptr());
  EXPECT_EQ(frames[1].size(), static_cast<size_t>(64 * 16 * 8));
}

TEST(WireLayout, FramesKeepTheTensorAliveAfterTheBatchIsGone) {
  std::vector<zmq::message_t> frames;
  {
    Batch b;
    b.set_tensor("t", torch::full({1000}, 3.5));
    encode_message(Json::object(), b, frames);
  }  // the only tensor reference is now the frame's
  Message m = decode_message(frames);
  EXPECT_EQ(m.batch.tensor("t").sum().item<double>(), 3500.0);
}

TEST(WireLayout, DecodeWrapsTheFrameWithoutCopyingAndOutlivesIt) {
  Batch b;
  b.set_tensor("t", patterned(torch::kFloat32, {256, 8}));
  std::vector<zmq::message_t> frames = encode(b);
  // Give the frame its own buffer, as a received frame has.
  std::vector<zmq::message_t> received;
  received.emplace_back(frames[0].data(), frames[0].size());
  received.emplace_back(frames[1].data(), frames[1].size());
  const void* frame_data = received[1].data();
  Message m = decode_message(received);
  received.clear();
  EXPECT_EQ(m.batch.tensor("t").data_ptr(), frame_data);
  EXPECT_TRUE(m.batch.equals(b));
}

TEST(WireLayout, MisalignedFrameIsCopiedInsteadOfWrapped) {
  Batch b;
  b.set_tensor("t", patterned(torch::kFloat64, {4, 2}));
  std::vector<zmq::message_t> frames = encode(b);
  std::vector<char> buffer(frames[1].size() + 1);
  std::memcpy(buffer.data() + 1, frames[1].data(), frames[1].size());
  frames[1] = zmq::message_t(buffer.data() + 1, frames[1].size(), nullptr, nullptr);
  Message m = decode_message(frames);
  EXPECT_NE(m.batch.tensor("t").data_ptr(), static_cast<void*>(buffer.data() + 1));
  EXPECT_TRUE(m.batch.equals(b));
}

TEST(WireLayout, CudaTensorsArriveOnTheHost) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  Batch b;
  b.set_tensor("g", patterned(torch::kBFloat16, {32, 8}).to(torch::kCUDA));
  b.set_tensor("big", patterned(torch::kFloat32, {1024, 256}).to(torch::kCUDA).t());
  for (size_t threshold : {size_t{0}, size_t{4096}}) {
    Message m = round_trip(b, Json::object(), WireOptions{threshold});
    EXPECT_TRUE(m.batch.tensor("g").device().is_cpu());
    EXPECT_TRUE(m.batch.equals(b.to(torch::kCPU)));
  }
}

// [SECTION] object columns

TEST(WireObjects, UnicodeStringsAndNestedValuesRoundTrip) {
  Batch b;
  b.set_objects("prompt", {Json("Solve 2+2 🤖🧮"), Json("解方程：x² = 4"), Json("Ünïcödé ‮ RTL"),
                           Json(std::string("nul\0inside", 10))});
  b.set_objects("回答",
                {Json::array({1, "二", 3.5}), Json{{"emoji", "👍🏽"}}, Json(nullptr), Json(true)});
  b.meta()["タグ"] = "メタ 🏷️";
  Message m = round_trip(b);
  EXPECT_TRUE(m.batch.equals(b));
  EXPECT_EQ(m.batch.objects("prompt")[1].get<std::string>(), "解方程：x² = 4");
  EXPECT_EQ(m.batch.objects("prompt")[3].get<std::string>().size(), 10u);
  EXPECT_EQ(m.batch.objects("回答")[1]["emoji"], "👍🏽");
}

TEST(WireObjects, InvalidUtf8IsAnEncodeErrorNamingTheColumn) {
  Batch b;
  b.set_objects("raw", {Json(std::string("\xff\xfe bad", 6))});
  std::vector<zmq::message_t> frames;
  try {
    encode_message(Json::object(), b, frames);
    FAIL() << "no WireError";
  } catch (const WireError& e) {
    EXPECT_THAT(e.what(), HasSubstr("object column 'raw'"));
  }
  EXPECT_TRUE(frames.empty());
}

// [SECTION] malformed messages: each is a WireError that says what is wrong

class WireMalformed : public ::testing::Test {
 protected:
  // A valid message: x float32 {2,3} inline, y int64 {2} inline, text objects.
  std::vector<zmq::message_t> valid() {
    Batch b;
    b.set_tensor("x", torch::ones({2, 3}));
    b.set_tensor("y", torch::arange(2));
    b.set_objects("text", {Json("a"), Json("b")});
    return encode(b);
  }
  // The valid message with its header changed by `edit`.
  std::vector<zmq::message_t> with_header(const std::function<void(Json&)>& edit) {
    std::vector<zmq::message_t> frames = valid();
    Json h = header_of(frames);
    edit(h);
    set_header(frames, h);
    return frames;
  }
  void expect_error(std::vector<zmq::message_t> frames, const std::string& what) {
    EXPECT_THAT(wire_error_of(frames), HasSubstr(what));
  }
};

TEST_F(WireMalformed, NoFramesAtAll) {
  std::vector<zmq::message_t> none;
  EXPECT_THAT(wire_error_of(none), HasSubstr("no header"));
  std::vector<zmq::message_t> frames = valid();
  EXPECT_THAT(wire_error_of(frames, 7), HasSubstr("no header at frame 7"));
}

TEST_F(WireMalformed, HeaderThatIsNotJson) {
  std::vector<zmq::message_t> frames = valid();
  frames[0] = zmq::message_t(std::string("{\"columns\": [oops"));
  expect_error(std::move(frames), "not valid JSON");
  frames = valid();
  std::string cut = frames[0].to_string().substr(0, frames[0].size() / 2);  // truncated
  frames[0] = zmq::message_t(cut);
  expect_error(std::move(frames), "not valid JSON");
  frames = valid();
  frames[0] = zmq::message_t(std::string("\x00\x01\x02", 3));
  expect_error(std::move(frames), "not valid JSON");
}

TEST_F(WireMalformed, HeaderWithoutTheCodecsTables) {
  std::vector<zmq::message_t> frames = valid();
  frames[0] = zmq::message_t(std::string("[1, 2]"));
  expect_error(std::move(frames), "not an object");
  expect_error(with_header([](Json& h) { h.erase("columns"); }), "no 'columns' array");
  expect_error(with_header([](Json& h) { h["columns"] = "x"; }), "no 'columns' array");
  expect_error(with_header([](Json& h) { h["objects"] = Json::array(); }), "no 'objects' object");
  expect_error(with_header([](Json& h) { h["meta"] = 3; }), "no 'meta' object");
}

TEST_F(WireMalformed, MissingOrExtraTensorFrames) {
  std::vector<zmq::message_t> frames = valid();
  frames.pop_back();
  expect_error(std::move(frames), "lists 2 tensor columns but 1 tensor frames");
  frames = valid();
  frames.emplace_back(std::string("extra"));
  expect_error(std::move(frames), "lists 2 tensor columns but 3 tensor frames");
}

TEST_F(WireMalformed, FrameByteLengthDisagreesWithTheHeader) {
  std::vector<zmq::message_t> frames = valid();
  frames[1] = zmq::message_t(std::string(23, 'x'));  // x needs 24 bytes
  expect_error(std::move(frames), "column 'x': its frame holds 23 bytes but the header says 24");
}

TEST_F(WireMalformed, UnknownDtype) {
  expect_error(with_header([](Json& h) { h["columns"][0]["dtype"] = "float128"; }),
               "unknown dtype 'float128'");
  expect_error(with_header([](Json& h) { h["columns"][0]["dtype"] = 6; }), "dtype is not a string");
}

TEST_F(WireMalformed, ShapeAndBytesDisagree) {
  expect_error(with_header([](Json& h) {
                 h["columns"][0]["shape"] = {3, 3};
               }),
               "needs 36 bytes but the header says 24");
  expect_error(with_header([](Json& h) { h["columns"][0]["bytes"] = 25; }),
               "needs 24 bytes but the header says 25");
}

TEST_F(WireMalformed, NegativeNonIntegerAndMissingDimensions) {
  expect_error(with_header([](Json& h) {
                 h["columns"][0]["shape"] = {-2, -3};
               }),
               "negative or out-of-range dimension");
  expect_error(with_header([](Json& h) { h["columns"][0]["shape"] = {2, "3"}; }), "holds a non-integer");
  expect_error(with_header([](Json& h) { h["columns"][0]["shape"] = {2, 1.5}; }), "holds a non-integer");
  expect_error(with_header([](Json& h) { h["columns"][0]["shape"] = Json::array(); }),
               "needs dim 0 for its rows");
  expect_error(with_header([](Json& h) { h["columns"][0]["shape"] = Json(std::vector<int>(65, 1)); }),
               "65 dims");
  expect_error(with_header([](Json& h) { h["columns"][0]["bytes"] = -24; }),
               "bytes is not a non-negative integer");
  expect_error(with_header([](Json& h) { h["columns"][0].erase("shape"); }), "has no 'shape'");
  expect_error(with_header([](Json& h) { h["columns"][0]["name"] = ""; }), "non-empty string");
}

TEST_F(WireMalformed, HugeClaimedSizesAreRefusedWithoutAllocating) {
  // Overflows 64 bits.
  expect_error(with_header([](Json& h) {
                 h["columns"][0]["shape"] = {int64_t{1} << 40, int64_t{1} << 40};
               }),
               "more elements than fit in 64 bits");
  // Fits 64 bits, but no tensor can be that large.
  expect_error(with_header([](Json& h) { h["columns"][0]["shape"] = {int64_t{1} << 62}; }),
               "larger than any tensor can be");
  // Consistent header claiming 4 TiB, but the frame has 24 bytes.
  expect_error(with_header([](Json& h) {
                 h["columns"][0]["shape"] = {int64_t{1} << 40};
                 h["columns"][0]["bytes"] = uint64_t{4} << 40;
               }),
               "its frame holds 24 bytes but the header says 4398046511104");
  // Zero rows of a huge width allocate nothing and are legal.
  std::vector<zmq::message_t> frames = with_header([](Json& h) {
    h["columns"][0]["shape"] = {0, int64_t{1} << 50};
    h["columns"][0]["bytes"] = 0;
    h["columns"].erase(1);
    h["objects"] = Json::object();
  });
  frames.erase(frames.begin() + 1, frames.end());
  frames.emplace_back();
  Message m = decode_message(frames);
  EXPECT_EQ(m.batch.tensor("x").size(1), int64_t{1} << 50);
}

TEST_F(WireMalformed, UnknownTransportAndBadSharedMemoryDescriptors) {
  expect_error(with_header([](Json& h) { h["columns"][0]["transport"] = "rdma"; }),
               "unknown transport \"rdma\"");
  auto shm_frames = [&](const std::string& descriptor) {
    std::vector<zmq::message_t> frames = with_header([](Json& h) { h["columns"][0]["transport"] = "shm"; });
    frames[1] = zmq::message_t(descriptor);
    return frames;
  };
  expect_error(shm_frames("not json"), "is not a JSON object");
  expect_error(shm_frames(R"({"name": "/rlwb-1-2-3"})"), "needs {\"name\"");
  expect_error(shm_frames(R"({"name": "/../../etc/passwd", "id": 1, "gen": 1})"), "not an RLWB segment name");
  expect_error(shm_frames(R"({"name": "/rlwb-999999999-0-0", "id": 1, "gen": 1})"), "does not exist");
  expect_error(shm_frames(std::string(2000, ' ')), "too big");
}

TEST_F(WireMalformed, ObjectColumnsThatDoNotFormABatch) {
  expect_error(with_header([](Json& h) { h["objects"]["text"] = "a"; }),
               "object column 'text' is not an array");
  expect_error(with_header([](Json& h) { h["objects"]["text"] = {"a", "b", "c"}; }), "do not form a batch");
  expect_error(with_header([](Json& h) { h["objects"]["x"] = {1, 2}; }), "do not form a batch");
}

TEST_F(WireMalformed, DuplicateColumnNames) {
  std::vector<zmq::message_t> frames = with_header([](Json& h) { h["columns"][1]["name"] = "x"; });
  // Both specs are valid on their own; only the name repeats.
  EXPECT_THAT(wire_error_of(frames), HasSubstr("column 'x' appears twice"));
}

// [SECTION] shared memory in one process

class WireShm : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = shm_settings();
    shm_trim();
  }
  void TearDown() override {
    set_shm_settings(saved_);
    shm_trim();
    EXPECT_EQ(shm_entries_with_prefix(shm_name_prefix()), 0u) << "segments left in /dev/shm";
  }
  ShmSettings saved_;
};

TEST_F(WireShm, LargeTensorsTravelAsASmallDescriptor) {
  Batch b;
  b.set_tensor("big", patterned(torch::kFloat32, {1024, 256}));  // 1 MiB
  b.set_tensor("small", torch::arange(1024));                    // 8 KiB
  std::vector<zmq::message_t> frames = encode(b, Json::object(), WireOptions{64 * 1024});
  Json h = header_of(frames);
  EXPECT_EQ(h["columns"][0]["transport"], "shm");
  EXPECT_EQ(h["columns"][1]["transport"], "inline");
  EXPECT_LT(frames[1].size(), 200u);
  EXPECT_THAT(frames[1].to_string(), HasSubstr(shm_name_prefix()));
  Message m = decode_message(frames);
  EXPECT_TRUE(m.batch.equals(b));
  EXPECT_EQ(shm_stats().sender_in_flight, 1u);  // claimed while the tensor lives
}

TEST_F(WireShm, ReleasedSegmentsAreReusedWithoutNewMappings) {
  Batch b;
  b.set_tensor("big", patterned(torch::kInt64, {4096, 32}));  // 1 MiB
  const ShmStats before = shm_stats();
  for (int i = 0; i < 5; ++i) {
    b.set_tensor("big", b.tensor("big") + 1);
    Message m = round_trip(b, Json::object(), WireOptions{4096});
    EXPECT_TRUE(m.batch.equals(b));
  }
  const ShmStats after = shm_stats();
  EXPECT_EQ(after.sender_created - before.sender_created, 1u);
  EXPECT_EQ(after.sender_reused - before.sender_reused, 4u);
  EXPECT_EQ(after.receiver_maps - before.receiver_maps, 1u);
  EXPECT_EQ(after.sender_in_flight, 0u);
  EXPECT_EQ(shm_entries_with_prefix(shm_name_prefix()), 1u);  // cached for reuse
  EXPECT_EQ(shm_trim(), 1u);
  EXPECT_EQ(shm_entries_with_prefix(shm_name_prefix()), 0u);
}

TEST_F(WireShm, HeldTensorsKeepTheirSegmentsBusy) {
  Batch b;
  b.set_tensor("big", patterned(torch::kUInt8, {1 << 20}));
  Message first = round_trip(b, Json::object(), WireOptions{1});
  b.set_tensor("big", patterned(torch::kUInt8, {1 << 20}) + 1);
  Message second = round_trip(b, Json::object(), WireOptions{1});
  // The first tensor still reads its own values: the sender took a new segment.
  EXPECT_EQ(first.batch.tensor("big")[1].item<uint8_t>(), 7);
  EXPECT_EQ(second.batch.tensor("big")[1].item<uint8_t>(), 8);
  EXPECT_EQ(shm_stats().sender_in_flight, 2u);
}

TEST_F(WireShm, AMessageCanBeDecodedOnlyOnce) {
  Batch b;
  b.set_tensor("big", patterned(torch::kFloat32, {1000}));
  std::vector<zmq::message_t> frames = encode(b, Json::object(), WireOptions{1});
  std::vector<zmq::message_t> copy;
  for (auto& f : frames) copy.emplace_back(f.data(), f.size());
  Message m = decode_message(frames);
  EXPECT_THAT(wire_error_of(copy), HasSubstr("can be decoded only once"));
  EXPECT_TRUE(m.batch.equals(b));  // the first decode is unaffected
}

TEST_F(WireShm, UnclaimedSegmentsAreReclaimedAfterTheTimeout) {
  ShmSettings s = shm_settings();
  s.unclaimed_timeout = std::chrono::milliseconds(50);
  set_shm_settings(s);
  Batch b;
  b.set_tensor("big", patterned(torch::kFloat32, {1000}));
  std::vector<zmq::message_t> lost = encode(b, Json::object(), WireOptions{1});  // never decoded
  EXPECT_EQ(shm_entries_with_prefix(shm_name_prefix()), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  const size_t reclaimed = shm_stats().sender_reclaimed;
  shm_trim();
  EXPECT_EQ(shm_stats().sender_reclaimed, reclaimed + 1);
  EXPECT_EQ(shm_entries_with_prefix(shm_name_prefix()), 0u);
  EXPECT_THAT(wire_error_of(lost), HasSubstr("does not exist"));
}

TEST_F(WireShm, ReceiverMappingOfAReclaimedSegmentGivesAClearError) {
  ShmSettings s = shm_settings();
  s.unclaimed_timeout = std::chrono::milliseconds(50);
  set_shm_settings(s);
  Batch b;
  b.set_tensor("big", patterned(torch::kFloat32, {1000}));
  { Message warm = round_trip(b, Json::object(), WireOptions{1}); }  // receiver caches the map
  std::vector<zmq::message_t> lost = encode(b, Json::object(), WireOptions{1});
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  shm_trim();  // the sender reclaims the unclaimed segment
  std::string msg = wire_error_of(lost);
  EXPECT_TRUE(msg.find("reclaimed") != std::string::npos || msg.find("does not exist") != std::string::npos)
      << msg;
}

TEST_F(WireShm, IdleSegmentsBeyondTheCacheBudgetAreUnlinked) {
  ShmSettings s = shm_settings();
  s.sender_cache_bytes = 3u << 20;
  set_shm_settings(s);
  std::vector<Message> held;
  for (int i = 0; i < 6; ++i) {  // six segments in use at once
    Batch b;
    b.set_tensor("big", torch::full({1 << 18}, i, torch::kInt32));  // 1 MiB
    held.push_back(round_trip(b, Json::object(), WireOptions{1}));
  }
  EXPECT_EQ(shm_entries_with_prefix(shm_name_prefix()), 6u);
  held.clear();  // all six come back idle
  Batch b;
  b.set_tensor("big", torch::zeros({1 << 18}, torch::kInt32));
  Message m = round_trip(b, Json::object(), WireOptions{1});  // the sweep trims to the budget
  EXPECT_LE(shm_entries_with_prefix(shm_name_prefix()), 4u);
  EXPECT_TRUE(m.batch.equals(b));
}

TEST_F(WireShm, WithdrawnMessageFreesItsSegment) {
  Batch b;
  b.set_tensor("big", patterned(torch::kFloat32, {1000}));
  std::vector<zmq::message_t> frames = encode(b, Json::object(), WireOptions{1});
  Json d = Json::parse(frames[1].to_string());
  EXPECT_EQ(shm_stats().sender_in_flight, 1u);
  shm_withdraw({d["name"].get<std::string>(), d["id"].get<uint64_t>(), d["gen"].get<uint32_t>()});
  EXPECT_EQ(shm_stats().sender_in_flight, 0u);
  EXPECT_THAT(wire_error_of(frames), HasSubstr("no longer waiting"));
}

}  // namespace
}  // namespace rlwb::core
