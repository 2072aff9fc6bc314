// The profiler's CUDA side (workers/profiler/cupti_kernels.h). Without a
// GPU: CUPTI says why it cannot start, and a worker whose device is cuda
// still gets its operator tree, with a note that kernels are missing. With
// one (the device check, scripts/device_check.sh): a matmul's kernels land
// in a `kernel` frame under aten::mm, and a copy back to the host counts
// its bytes, all summed up the tree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <torch/cuda.h>
#include <torch/torch.h>

#include "core/profile/context_tree.h"
#include "workers/profiler/cupti_kernels.h"
#include "workers/profiler/op_profiler.h"

namespace rlwb::workers::profiler {
namespace {

using core::profile::ContextTree;
using core::profile::Frame;
using core::profile::FrameKind;
using ::testing::HasSubstr;

const Frame* method_frame(const ContextTree& tree, const std::string& node, const std::string& method) {
  const Frame* n = tree.root().find(FrameKind::node, node);
  return n ? n->find(FrameKind::method, method) : nullptr;
}

std::vector<std::string> notes_of(const nlohmann::json& profile) {
  return profile.at("notes").get<std::vector<std::string>>();
}

// The profiler as a CUDA worker configures it.
void configure_for(const std::string& device) {
  ProfilerSettings s;
  s.device = device;
  OpProfiler::instance().configure(s);
  OpProfiler::instance().collect();  // start from an empty tree
}

TEST(CuptiKernelsTest, StartSaysWhyWithoutAGpu) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "a GPU is here";
  CuptiKernels& cupti = CuptiKernels::instance();
  EXPECT_FALSE(cupti.start());
  EXPECT_FALSE(cupti.active());
  EXPECT_THAT(cupti.why_unavailable(), HasSubstr("CUPTI not"));  // not started, or not built
  EXPECT_FALSE(cupti.start()) << "the first answer stays";
  ContextTree tree;
  EXPECT_TRUE(cupti.fold(tree).empty()) << "an inactive collector folds nothing";
}

TEST(CuptiKernelsTest, CudaDeviceWithoutCudaStillProfilesWithANote) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "a GPU is here";
  configure_for("cuda");
  auto x = torch::randn({8, 32});
  auto w = torch::randn({32, 64});
  {
    OpProfiler::CallScope scope(OpProfiler::instance(), "rollout", "generate");
    torch::mm(x, w);
  }
  nlohmann::json out = OpProfiler::instance().collect();
  EXPECT_THAT(notes_of(out), ::testing::Contains(HasSubstr("CUDA kernels not collected"))) << out.at("notes");
  ContextTree tree = ContextTree::from_json(out.at("tree"));
  const Frame* method = method_frame(tree, "rollout", "generate");
  ASSERT_NE(method, nullptr) << tree.to_json().dump(1);
  const Frame* mm = method->find(FrameKind::op, "aten::mm");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->metrics.calls, 1);
  EXPECT_EQ(mm->metrics.kernels, 0);

  configure_for("cpu");  // a CPU worker has no such note
  { OpProfiler::CallScope scope(OpProfiler::instance(), "rollout", "generate"); }
  EXPECT_THAT(notes_of(OpProfiler::instance().collect()),
              ::testing::Not(::testing::Contains(HasSubstr("CUDA kernels"))));
}

TEST(CuptiKernelsTest, CudaMatmulKernelsLandUnderTheirOperator) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no GPU: the device check runs this";
  configure_for("cuda");
  auto x = torch::randn({256, 512}, torch::kCUDA);
  auto w = torch::randn({512, 256}, torch::kCUDA);
  torch::mm(x, w);  // cuBLAS set-up, outside any call
  torch::cuda::synchronize();
  {
    OpProfiler::CallScope scope(OpProfiler::instance(), "actor_update", "update_actor");
    for (int i = 0; i < 4; ++i) torch::mm(x, w);
    torch::mm(x, w).cpu();  // a device-to-host copy, and a wait for it
  }
  nlohmann::json out = OpProfiler::instance().collect();
  EXPECT_THAT(notes_of(out), ::testing::Not(::testing::Contains(HasSubstr("not collected"))))
      << out.at("notes");
  ContextTree tree = ContextTree::from_json(out.at("tree"));
  const Frame* method = method_frame(tree, "actor_update", "update_actor");
  ASSERT_NE(method, nullptr) << tree.to_json().dump(1);
  const Frame* mm = method->find(FrameKind::op, "aten::mm");
  ASSERT_NE(mm, nullptr) << tree.to_json().dump(1);
  const Frame* kernel = nullptr;
  for (auto& c : mm->children)
    if (c->kind == FrameKind::kernel) kernel = c.get();
  ASSERT_NE(kernel, nullptr) << "no kernel frame under aten::mm: " << tree.to_json().dump(1);
  EXPECT_FALSE(kernel->name.empty());
  EXPECT_GT(kernel->metrics.kernels, 0);
  EXPECT_GT(kernel->metrics.kernel_ns, 0);
  EXPECT_GE(mm->metrics.kernels, 5) << "one kernel or more per mm";
  EXPECT_GE(method->metrics.kernels, mm->metrics.kernels) << "kernel counts add up the tree";
  EXPECT_GE(method->metrics.memcpy_bytes, 256 * 256 * 4) << "the copy back to the host";

  // The next window starts empty, and CUPTI is collecting again.
  {
    OpProfiler::CallScope scope(OpProfiler::instance(), "actor_update", "update_actor");
    torch::mm(x, w);
  }
  ContextTree next = ContextTree::from_json(OpProfiler::instance().collect().at("tree"));
  const Frame* again = method_frame(next, "actor_update", "update_actor");
  ASSERT_NE(again, nullptr);
  EXPECT_GT(again->metrics.kernels, 0);
  EXPECT_LT(again->metrics.kernels, mm->metrics.kernels);
}

}  // namespace
}  // namespace rlwb::workers::profiler
