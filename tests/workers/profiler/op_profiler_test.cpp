// The worker's operator profiler in one process: ATen operators (forward
// and backward) land under node -> method, nested operators under their
// parent, with calls, wall time, bytes and shapes; nothing is recorded
// outside a call scope; collect() starts a new tree; hardware counters are
// measured or their absence explained; native frames are RLWB's own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "core/profile/context_tree.h"
#include "workers/profiler/op_profiler.h"

namespace rlwb::workers::profiler {
namespace {

using core::profile::ContextTree;
using core::profile::Frame;
using core::profile::FrameKind;
using ::testing::HasSubstr;

// The frame at `names` below the root, or null.
const Frame* at(const ContextTree& tree, std::vector<std::pair<FrameKind, std::string>> names) {
  const Frame* f = &tree.root();
  for (auto& [kind, name] : names) {
    f = f->find(kind, name);
    if (!f) return nullptr;
  }
  return f;
}

// The first frame named `name` anywhere under `from`.
const Frame* find_anywhere(const Frame& from, const std::string& name) {
  for (auto& c : from.children) {
    if (c->name == name) return c.get();
    if (const Frame* deeper = find_anywhere(*c, name)) return deeper;
  }
  return nullptr;
}

__attribute__((noinline)) torch::Tensor train_step(const torch::Tensor& x, const torch::Tensor& w) {
  auto y = torch::softmax(torch::mm(x, w), -1).sum();
  y.backward();
  return y;
}

class OpProfilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ProfilerSettings s;
    s.shapes = true;
    OpProfiler::instance().configure(s);
    OpProfiler::instance().collect();  // start from an empty tree
  }
};

TEST_F(OpProfilerTest, OperatorsLandUnderTheCallsNodeAndMethod) {
  auto x = torch::randn({8, 32});
  auto w = torch::randn({32, 64}, torch::requires_grad());
  torch::mm(x, w.detach());  // outside any call: not recorded
  {
    OpProfiler::CallScope scope(OpProfiler::instance(), "actor_update", "update_actor");
    for (int i = 0; i < 32; ++i) train_step(x, w);
  }
  ContextTree tree = ContextTree::from_json(OpProfiler::instance().collect().at("tree"));
  const Frame* method = at(tree, {{FrameKind::node, "actor_update"}, {FrameKind::method, "update_actor"}});
  ASSERT_NE(method, nullptr) << tree.to_json().dump(1);
  EXPECT_EQ(method->metrics.calls, 1);
  EXPECT_GT(method->metrics.cpu_ns, 0);
  const Frame* mm = method->find(FrameKind::op, "aten::mm");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->metrics.calls, 32);  // the call outside the scope is not here
  EXPECT_GT(mm->metrics.wall_ns, 0);
  EXPECT_LE(mm->metrics.wall_ns, method->metrics.wall_ns);
  EXPECT_GE(mm->bytes(), 32 * 8 * 64 * 4) << "each mm allocates its 8x64 float result";
  ASSERT_FALSE(mm->shapes.empty()) << "shapes are sampled 1 in 16: 32 calls should give some";
  EXPECT_TRUE(mm->shapes.count("[8,32] [32,64]")) << nlohmann::json(mm->shapes).dump();
  // Backward operators are attributed to the same call.
  EXPECT_NE(find_anywhere(*method, "aten::_softmax_backward_data"), nullptr) << tree.to_json().dump(1);
  // Nested operators hang under their parent: softmax calls _softmax.
  const Frame* softmax = method->find(FrameKind::op, "aten::softmax");
  ASSERT_NE(softmax, nullptr);
  EXPECT_NE(softmax->find(FrameKind::op, "aten::_softmax"), nullptr);
  EXPECT_GE(softmax->metrics.wall_ns, softmax->find(FrameKind::op, "aten::_softmax")->metrics.wall_ns);
}

TEST_F(OpProfilerTest, CollectHandsOverTheTreeAndStartsANewOne) {
  {
    OpProfiler::CallScope scope(OpProfiler::instance(), "gen", "generate");
    torch::relu(torch::randn({4, 4}));
  }
  auto first = OpProfiler::instance().collect();
  EXPECT_FALSE(ContextTree::from_json(first.at("tree")).empty());
  EXPECT_GT(first.at("peak_bytes").get<int64_t>(), 0);
  EXPECT_GT(first.at("memory_limit_bytes").get<int64_t>(), 0) << first.at("notes").dump();
  EXPECT_GT(first.at("rss_peak_bytes").get<int64_t>(), 0) << first.at("notes").dump();
  EXPECT_GE(first.at("intra_op_threads").get<int>(), 1);
  EXPECT_TRUE(ContextTree::from_json(OpProfiler::instance().collect().at("tree")).empty());
}

TEST_F(OpProfilerTest, HardwareCountersAreMeasuredOrTheirAbsenceIsExplained) {
  {
    OpProfiler::CallScope scope(OpProfiler::instance(), "gen", "generate");
    torch::mm(torch::randn({64, 64}), torch::randn({64, 64}));
  }
  auto out = OpProfiler::instance().collect();
  ContextTree tree = ContextTree::from_json(out.at("tree"));
  const Frame* method = at(tree, {{FrameKind::node, "gen"}, {FrameKind::method, "generate"}});
  ASSERT_NE(method, nullptr);
  if (method->metrics.cycles >= 0) {
    EXPECT_GT(method->metrics.cycles, 0);
    EXPECT_GT(method->metrics.instructions, 0);
  } else {
    ASSERT_FALSE(out.at("notes").empty());
    EXPECT_THAT(out.at("notes")[0].get<std::string>(), HasSubstr("perf_event_open"));
  }
}

TEST_F(OpProfilerTest, NativeFramesAreRlwbsOwnBetweenTheMethodAndItsOperators) {
  ProfilerSettings s;
  s.native_stacks = true;
  s.shapes = false;
  OpProfiler::instance().configure(s);
  auto x = torch::randn({8, 32});
  auto w = torch::randn({32, 64}, torch::requires_grad());
  {
    OpProfiler::CallScope scope(OpProfiler::instance(), "actor_update", "update_actor");
    train_step(x, w);
  }
  ContextTree tree = ContextTree::from_json(OpProfiler::instance().collect().at("tree"));
  const Frame* method = at(tree, {{FrameKind::node, "actor_update"}, {FrameKind::method, "update_actor"}});
  ASSERT_NE(method, nullptr);
  // Every path to aten::mm passes through a native frame, none of LibTorch's.
  bool native_above_mm = false;
  tree.walk([&](const std::vector<const Frame*>& path) {
    if (path.back()->name != "aten::mm" || path.size() < 3 || path[2]->kind == FrameKind::op) return;
    native_above_mm = path[2]->kind == FrameKind::native;
    for (const Frame* f : path)
      if (f->kind == FrameKind::native) {
        EXPECT_EQ(f->name.find("libtorch"), std::string::npos) << f->name;
        EXPECT_EQ(f->name.rfind("0x", 0), std::string::npos) << "not symbolized: " << f->name;
      }
  });
  EXPECT_TRUE(native_above_mm) << tree.to_json().dump(1);
  // train_step is in an anonymous namespace: no dynamic symbol, so only the
  // module's full symbol table names it -- and as one frame, not one per call site.
  int train_step_frames = 0;
  tree.walk([&](const std::vector<const Frame*>& path) {
    if (path.back()->kind == FrameKind::native && path.back()->name.find("train_step") != std::string::npos)
      ++train_step_frames;
  });
  EXPECT_GE(train_step_frames, 1) << tree.to_json().dump(1);
  OpProfiler::instance().configure(ProfilerSettings{});
}

}  // namespace
}  // namespace rlwb::workers::profiler
