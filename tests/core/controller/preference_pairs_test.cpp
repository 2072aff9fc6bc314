// builtin.preference_pairs (core/controller/rl_builtins.h): online
// preference pairs from the policy's own samples, labelled by an
// annotator's scores. Each prompt's responses are compared once per pair
// (a group of two makes one pair), the better one chosen; ties carry no
// pair but still their signs; the reward model's own ranking of the pairs
// is reported; bad input says which port is wrong.
#include "core/controller/rl_builtins.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

namespace rlwb::core {
namespace {

struct Rows {
  std::vector<std::string> texts;
  std::vector<float> scores;
  std::vector<int64_t> groups;
};

Batch batch_of(const Rows& r) {
  Batch in;
  std::vector<nlohmann::json> t(r.texts.begin(), r.texts.end());
  in.set_objects("response_text", t);
  // Token-level: the score on the last of three tokens, as reward modules place it.
  auto scores = torch::zeros({static_cast<int64_t>(r.scores.size()), 3});
  scores.select(1, 2).copy_(torch::tensor(r.scores));
  in.set_tensor("scores", scores);
  in.set_tensor("group_index", torch::tensor(r.groups));
  return in;
}

Batch run(const Batch& in, nlohmann::json args = nlohmann::json::object()) {
  config::TrainerOptions trainer;
  WantedPorts every;
  nlohmann::json state;
  BuiltinContext ctx{1, trainer, every, state, args};
  return preference_pairs(in, ctx);
}

std::vector<float> floats(const torch::Tensor& t) {
  auto c = t.to(torch::kFloat32).contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

TEST(PreferencePairs, AGroupOfTwoGivesOnePairWithTheRightAnswerChosenWhicheverRowItIsIn) {
  // Prompt 0: the first sample is wrong; prompt 1: the second is.
  Batch out = run(batch_of({{"3", "2", "4", "5"}, {0, 1, 1, 0}, {0, 0, 1, 1}}));
  EXPECT_EQ(floats(out.tensor("pair_weight")), (std::vector<float>{1, 0, 1, 0}));
  EXPECT_EQ(out.objects("chosen")[0], "2");
  EXPECT_EQ(out.objects("rejected")[0], "3");
  EXPECT_EQ(out.objects("chosen")[2], "4");
  EXPECT_EQ(out.objects("rejected")[2], "5");
  // Signs: +1 for a right answer, -1 for a wrong one, on every row.
  EXPECT_EQ(floats(out.tensor("chosen_sign")), (std::vector<float>{1, 1, 1, 1}));
  EXPECT_EQ(floats(out.tensor("rejected_sign")), (std::vector<float>{-1, -1, -1, -1}));
  auto metrics = out.meta()["metrics"];
  EXPECT_DOUBLE_EQ(metrics["pairs/labelled"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(metrics["pairs/per_prompt"].get<double>(), 1.0);
  EXPECT_FALSE(metrics.contains("pairs/model_accuracy")) << "no model_scores bound";
}

TEST(PreferencePairs, TiesCarryNoPairButTheirSignsSayBothAreWrong) {
  Batch out = run(batch_of({{"3", "4"}, {0, 0}, {7, 7}}));
  EXPECT_EQ(floats(out.tensor("pair_weight")), (std::vector<float>{0, 0}));
  EXPECT_EQ(floats(out.tensor("chosen_sign")), (std::vector<float>{-1, -1}));
  EXPECT_EQ(floats(out.tensor("rejected_sign")), (std::vector<float>{-1, -1}));
  EXPECT_DOUBLE_EQ(out.meta()["metrics"]["pairs/labelled"].get<double>(), 0.0);
}

TEST(PreferencePairs, LargerGroupsCompareEachRowWithTheNextAndTheLastWithTheFirst) {
  // Interleaved groups: rows of prompt 0 are 0, 2, 4 (scores 1, 0, 0.5).
  Batch out = run(batch_of({{"a1", "b1", "a0", "b0", "a5", "b5"}, {1, 0, 0, 0, 0.5, 0}, {0, 1, 0, 1, 0, 1}}),
                  {{"sign_threshold", 0.25}});
  // Prompt 0: (a1, a0), (a0, a5), (a5, a1) all differ; prompt 1 ties.
  EXPECT_EQ(floats(out.tensor("pair_weight")), (std::vector<float>{1, 0, 1, 0, 1, 0}));
  EXPECT_EQ(out.objects("chosen")[0], "a1");
  EXPECT_EQ(out.objects("rejected")[0], "a0");
  EXPECT_EQ(out.objects("chosen")[2], "a5");
  EXPECT_EQ(out.objects("rejected")[2], "a0");
  EXPECT_EQ(out.objects("chosen")[4], "a1");
  EXPECT_EQ(out.objects("rejected")[4], "a5");
  // sign_threshold 0.25: 0.5 counts as good.
  EXPECT_EQ(floats(out.tensor("chosen_sign")), (std::vector<float>{1, -1, 1, -1, 1, -1}));
  EXPECT_EQ(floats(out.tensor("rejected_sign")), (std::vector<float>{-1, -1, -1, -1, 1, -1}));
  EXPECT_DOUBLE_EQ(out.meta()["metrics"]["pairs/labelled"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(out.meta()["metrics"]["pairs/per_prompt"].get<double>(), 1.5);
}

TEST(PreferencePairs, ModelAccuracyIsTheShareOfPairsTheRewardModelAlreadyRankedRight) {
  Batch in = batch_of({{"right", "wrong", "right", "wrong"}, {1, 0, 1, 0}, {0, 0, 1, 1}});
  // The model ranks prompt p's pair right and prompt q's wrong.
  in.set_tensor("model_scores", torch::tensor({2.0f, -1.0f, 0.1f, 0.3f}));
  EXPECT_DOUBLE_EQ(run(in).meta()["metrics"]["pairs/model_accuracy"].get<double>(), 0.5);
}

TEST(PreferencePairs, BadInputNamesThePortAndWhatToBind) {
  Batch no_scores = batch_of({{"a", "b"}, {1, 0}, {0, 0}});
  no_scores = no_scores.select({"response_text", "group_index"});
  try {
    run(no_scores);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("input port 'scores'"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("in: [scores]"));
  }
}

}  // namespace
}  // namespace rlwb::core
