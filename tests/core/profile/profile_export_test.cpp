// The exports of `rlwb profile export`: folded stacks (one line per context,
// self microseconds), the Chrome trace (Trace Event Format fields, lanes,
// the critical path) and the pprof Profile (gzip'd, decoded back).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include "core/profile/profile_export.h"
#include "tests/core/profile/profile_fixtures.h"

#include <map>
#include <set>
#include <sstream>

namespace rlwb::core::profile {
namespace {

using ::testing::HasSubstr;
using namespace fixtures;
using nlohmann::json;

TEST(FoldedStacks, OneLinePerContextWithSelfMicroseconds) {
  const std::string folded = folded_stacks(grpo_profile());
  std::map<std::string, int64_t> lines;
  std::istringstream in(folded);
  for (std::string line; std::getline(in, line);) {
    const size_t space = line.rfind(' ');
    ASSERT_NE(space, std::string::npos) << line;
    lines[line.substr(0, space)] = std::stoll(line.substr(space + 1));
  }
  // update/update: 140 ms of self time per call, 8 calls (4 steps, 2 workers).
  EXPECT_EQ(lines.at("update;update"), 8 * 140'000);
  EXPECT_EQ(lines.at("gen;generate;aten::add"), 8 * 40 * 200);
  EXPECT_EQ(lines.count("gen"), 0u);  // no self time: drawn from its children
  EXPECT_EQ(lines.size(), 7u);
}

TEST(FoldedStacks, FrameNamesCannotBreakTheFormat) {
  RunProfile p;
  WorkerWindow w;
  w.worker = "main/0";
  FrameMetrics& m = w.tree.root().child(FrameKind::node, "a;b").child(FrameKind::method, "m\nx").metrics;
  m.calls = 1;
  m.wall_ns = 5000;
  p.workers.push_back(std::move(w));
  EXPECT_EQ(folded_stacks(p), "a_b;m_x 5\n");
}

// The Trace Event Format's rules for the events this export writes.
void expect_valid_trace_event(const json& e) {
  ASSERT_TRUE(e.is_object());
  ASSERT_TRUE(e.contains("ph") && e["ph"].is_string()) << e;
  ASSERT_TRUE(e.contains("pid") && e["pid"].is_number_integer()) << e;
  ASSERT_TRUE(e.contains("tid") && e["tid"].is_number_integer()) << e;
  ASSERT_TRUE(e.contains("name") && e["name"].is_string()) << e;
  const std::string ph = e["ph"];
  if (ph == "X") {
    ASSERT_TRUE(e["ts"].is_number() && e["dur"].is_number()) << e;
    EXPECT_GE(e["dur"].get<double>(), 0) << e;
    EXPECT_TRUE(e["args"].is_object()) << e;
  } else {
    ASSERT_EQ(ph, "M") << e;
    const std::set<std::string> metadata = {"process_name", "process_sort_index", "thread_name",
                                            "thread_sort_index"};
    EXPECT_TRUE(metadata.count(e["name"])) << e;
    EXPECT_TRUE(e["args"].is_object()) << e;
  }
}

// Events of one thread must nest: no two overlap without one holding the other.
void expect_nested_per_thread(const json& events) {
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> by_thread;
  for (const json& e : events)
    if (e["ph"] == "X")
      by_thread[{e["pid"], e["tid"]}].push_back({e["ts"], e["ts"].get<double>() + e["dur"].get<double>()});
  for (auto& [thread, spans] : by_thread) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i)
      EXPECT_TRUE(spans[i].first >= spans[i - 1].second - 1e-6 ||
                  spans[i].second <= spans[i - 1].second + 1e-6)
          << "overlapping events on pid " << thread.first << " tid " << thread.second;
  }
}

std::map<int, std::string> names_of(const json& events, const std::string& kind) {
  std::map<int, std::string> names;
  for (const json& e : events)
    if (e["ph"] == "M" && e["name"] == kind)
      names[kind == "process_name" ? e["pid"].get<int>() : e["tid"].get<int>()] = e["args"]["name"];
  return names;
}

TEST(ChromeTrace, IsTheTraceEventFormatWithAProcessPerPool) {
  ProfileShape shape;
  shape.step.ref_pool = "ref";
  shape.step.ref.compute = {0.1};
  shape.pools["ref"] = {{"workers", 1}};
  const json trace = json::parse(chrome_trace(grpo_profile(shape)).dump());  // what a file holds
  ASSERT_TRUE(trace["traceEvents"].is_array());
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  for (const json& e : trace["traceEvents"]) expect_valid_trace_event(e);
  expect_nested_per_thread(trace["traceEvents"]);
  const std::map<int, std::string> processes = names_of(trace["traceEvents"], "process_name");
  EXPECT_EQ(processes, (std::map<int, std::string>{{1, "controller"}, {2, "pool main"}, {3, "pool ref"}}));
  // gen of step 1 on pool main's "nodes" lane: ts and dur in microseconds.
  bool found = false;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["name"] == "gen" && e["cat"] == "worker" && e["args"]["step"] == 1) {
      found = true;
      EXPECT_EQ(e["pid"], 2);
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 0);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 305'000);
      EXPECT_EQ(e["args"]["critical"], true);
    }
  EXPECT_TRUE(found);
}

TEST(ChromeTrace, RanksHaveLanesFromDispatchToTheirReply) {
  ProfileShape shape;
  shape.step.gen.compute = {0.2, 0.4};
  const json events = chrome_trace(grpo_profile(shape))["traceEvents"];
  std::map<int, std::string> lanes;
  for (const json& e : events)
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 2) lanes[e["tid"]] = e["args"]["name"];
  std::set<std::string> lane_names;
  for (auto& [tid, name] : lanes) lane_names.insert(name);
  EXPECT_EQ(lane_names, (std::set<std::string>{"nodes", "rank 0", "rank 1"}));
  for (const json& e : events)
    if (e["ph"] == "X" && e["cat"] == "rank" && e["name"] == "gen" && e["args"]["step"] == 1) {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 2000);                       // after the 2 ms dispatch
      const double expected = e["args"]["rank"] == 0 ? 202'000 : 402'000;  // compute and the way back
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), expected) << e;
      EXPECT_EQ(lanes.at(e["tid"]), "rank " + std::to_string(e["args"]["rank"].get<int>()));
    }
}

TEST(ChromeTrace, CriticalPathHasALaneAndOverlappingNodesSplitLanes) {
  const json events = chrome_trace(grpo_profile())["traceEvents"];
  std::vector<std::string> critical_step_1;
  for (const json& e : events)
    if (e["ph"] == "X" && e["cat"] == "critical" && e["args"]["step"] == 1)
      critical_step_1.push_back(e["name"]);
  EXPECT_EQ(critical_step_1, (std::vector<std::string>{"gen", "ref", "adv", "update"}));
  // reward and adv are controller-local; reward overlaps nothing local, but
  // the critical lane, the steps lane and the nodes lane are three threads.
  std::set<std::string> controller_lanes;
  for (const json& e : events)
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 1)
      controller_lanes.insert(e["args"]["name"]);
  EXPECT_EQ(controller_lanes, (std::set<std::string>{"steps", "nodes", "critical path"}));
  // Two nodes of one pool that overlap go to two lanes: gen and ref start together here.
  RunProfile p = grpo_profile();
  for (StepTiming& s : p.steps) s.nodes[2].start = s.nodes[0].start;
  const json split = chrome_trace(p)["traceEvents"];
  std::set<std::string> main_lanes;
  for (const json& e : split)
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 2) main_lanes.insert(e["args"]["name"]);
  EXPECT_TRUE(main_lanes.count("nodes (2)")) << json(main_lanes).dump();
  expect_nested_per_thread(split);
}

std::string gunzip(const std::string& bytes) {
  z_stream stream{};
  EXPECT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);  // gzip only: a zlib or raw stream fails
  std::string out(1 << 20, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  inflateEnd(&stream);
  return out;
}

// The protobuf wire format, read by hand so that the check does not rest on
// the classes protoc made from RLWB's own pprof.proto: a message is fields
// of (number << 3 | wire type); 0 varint, 2 length-delimited (packed
// repeated numbers, strings, messages), 1 and 5 fixed 8 and 4 bytes.
struct WireFields {
  std::multimap<int, uint64_t> numbers;     // varints, packed ones unpacked
  std::multimap<int, std::string> strings;  // length-delimited payloads
};

uint64_t read_varint(const std::string& bytes, size_t& at) {
  uint64_t value = 0;
  for (int shift = 0; at < bytes.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(bytes[at++]);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return value;
  }
  ADD_FAILURE() << "varint runs past the end";
  return value;
}

WireFields read_message(const std::string& bytes) {
  WireFields fields;
  for (size_t at = 0; at < bytes.size();) {
    const uint64_t key = read_varint(bytes, at);
    const int number = static_cast<int>(key >> 3), type = static_cast<int>(key & 7);
    if (type == 0) {
      fields.numbers.emplace(number, read_varint(bytes, at));
    } else if (type == 2) {
      const uint64_t length = read_varint(bytes, at);
      EXPECT_LE(at + length, bytes.size());
      fields.strings.emplace(number, bytes.substr(at, length));
      at += length;
    } else {
      ADD_FAILURE() << "unexpected wire type " << type << " for field " << number;
      return fields;
    }
  }
  return fields;
}

// A repeated number field, packed (proto3's default) or not.
std::vector<uint64_t> repeated_numbers(const WireFields& m, int number) {
  std::vector<uint64_t> values;
  for (auto [it, end] = m.numbers.equal_range(number); it != end; ++it) values.push_back(it->second);
  for (auto [it, end] = m.strings.equal_range(number); it != end; ++it)
    for (size_t at = 0; at < it->second.size();) values.push_back(read_varint(it->second, at));
  return values;
}

uint64_t number_or_zero(const WireFields& m, int number) {
  auto it = m.numbers.find(number);
  return it == m.numbers.end() ? 0 : it->second;
}

std::vector<WireFields> messages(const WireFields& m, int number) {
  std::vector<WireFields> out;
  for (auto [it, end] = m.strings.equal_range(number); it != end; ++it)
    out.push_back(read_message(it->second));
  return out;
}

TEST(PprofProfile, GzipdProfileHasASamplePerContextWithCallsAndSelfWall) {
  const std::string bytes = pprof_profile(grpo_profile());
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);  // the gzip magic
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  // pprof's field numbers: Profile 1 sample_type, 2 sample, 4 location, 5
  // function, 6 string_table; ValueType 1 type, 2 unit; Sample 1
  // location_id, 2 value; Location 1 id, 4 line; Line 1 function_id;
  // Function 1 id, 2 name.
  const WireFields profile = read_message(gunzip(bytes));
  std::vector<std::string> strings;
  for (auto [it, end] = profile.strings.equal_range(6); it != end; ++it) strings.push_back(it->second);
  ASSERT_FALSE(strings.empty());
  EXPECT_EQ(strings[0], "");
  const std::vector<WireFields> types = messages(profile, 1);
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(strings.at(number_or_zero(types[0], 1)), "calls");
  EXPECT_EQ(strings.at(number_or_zero(types[1], 1)), "wall");
  EXPECT_EQ(strings.at(number_or_zero(types[1], 2)), "nanoseconds");
  std::map<uint64_t, std::string> function_names;
  for (const WireFields& f : messages(profile, 5))
    function_names[number_or_zero(f, 1)] = strings.at(number_or_zero(f, 2));
  std::map<uint64_t, uint64_t> location_function;
  for (const WireFields& l : messages(profile, 4)) {
    EXPECT_NE(number_or_zero(l, 1), 0u);  // ids are non-zero
    location_function[number_or_zero(l, 1)] = number_or_zero(messages(l, 4).at(0), 1);
  }
  std::map<std::string, std::pair<int64_t, int64_t>> samples;  // "update;update" -> calls, wall
  for (const WireFields& s : messages(profile, 2)) {
    const std::vector<uint64_t> stack_ids = repeated_numbers(s, 1), values = repeated_numbers(s, 2);
    ASSERT_EQ(values.size(), 2u);
    std::string stack;
    for (auto id = stack_ids.rbegin(); id != stack_ids.rend(); ++id)  // stored innermost first
      stack += (stack.empty() ? "" : ";") + function_names.at(location_function.at(*id));
    samples[stack] = {static_cast<int64_t>(values[0]), static_cast<int64_t>(values[1])};
  }
  EXPECT_EQ(samples.size(), 8u);  // every context with calls or self time: not the ref and update node frames
  EXPECT_EQ(samples.at("update;update"), (std::pair<int64_t, int64_t>(8, 8 * 140'000'000LL)));
  EXPECT_EQ(samples.at("gen;generate;aten::add").first, 8 * 40);
  int64_t wall = 0, total = 0;
  for (auto& [stack, values] : samples) wall += values.second;
  const ContextTree merged = grpo_profile().merged_tree();
  for (const auto& node : merged.root().children) total += node->metrics.wall_ns;
  EXPECT_EQ(wall, total);  // the self times add up to the nodes' total
}

}  // namespace
}  // namespace rlwb::core::profile
