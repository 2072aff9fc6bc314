// The kinds of value the editor's forms offer, decoded from the type texts
// the settings parse writes: each text decodes to what it says, and every
// documented setting decodes to a widget (a new text no form knows fails).
#include "core/config/setting_types.h"

#include <gtest/gtest.h>

#include <set>

namespace rlwb::core::config {
namespace {

TEST(SettingShape, DecodesEachTypeTextWithItsRangeAndNull) {
  SettingShape s = setting_shape("integer > 0 or null");
  EXPECT_EQ(s.kind, SettingKind::kInteger);
  EXPECT_TRUE(s.nullable);
  ASSERT_TRUE(s.range.min);
  EXPECT_EQ(*s.range.min, 0);
  EXPECT_TRUE(s.range.min_exclusive);

  s = setting_shape("number in [0, 1]");
  EXPECT_EQ(s.kind, SettingKind::kNumber);
  EXPECT_FALSE(s.nullable);
  EXPECT_EQ(s.range.min.value_or(-1), 0);
  EXPECT_EQ(s.range.max.value_or(-1), 1);

  EXPECT_EQ(setting_shape("number").kind, SettingKind::kNumber);
  EXPECT_EQ(setting_shape("integer >= 0").range.min.value_or(-1), 0);
  EXPECT_EQ(setting_shape("true or false").kind, SettingKind::kFlag);
  EXPECT_EQ(setting_shape("text").kind, SettingKind::kText);
  EXPECT_EQ(setting_shape("list of text").kind, SettingKind::kNames);

  s = setting_shape("list of 2 numbers");
  EXPECT_EQ(s.kind, SettingKind::kNumbers);
  EXPECT_EQ(s.exact_size, 2u);

  s = setting_shape("one of fixed, adaptive");
  EXPECT_EQ(s.kind, SettingKind::kChoice);
  EXPECT_EQ(s.choices, (std::vector<std::string>{"fixed", "adaptive"}));
}

TEST(SettingShape, TextsNoWidgetKnowsAreOther) {
  EXPECT_EQ(setting_shape("list of nodes").kind, SettingKind::kOther);
  EXPECT_EQ(setting_shape("integer between friends").kind, SettingKind::kOther);
  EXPECT_EQ(setting_shape("numbers").kind, SettingKind::kOther);
  EXPECT_EQ(setting_shape("").kind, SettingKind::kOther);
}

// Every setting of every section decodes to a widget, except those another
// parser reads (listed, so a new one has to be looked at).
TEST(SettingShape, EveryDocumentedSettingHasAWidget) {
  std::vector<SettingsDoc> docs = {task_settings(), trainer_settings()};
  for (const char* role : {"actor", "critic", "reference", "reward_model"})
    docs.push_back(model_settings(role, "models.m.config"));
  const std::set<std::string> read_elsewhere = {"trainer.warm_start.nodes", "trainer.eval.nodes",
                                                "models.m.config.tokenizer", "task.tokenizer"};
  size_t count = 0;
  for (const auto& doc : docs)
    for (const auto& s : doc.settings) {
      ++count;
      if (read_elsewhere.count(s.path)) continue;
      EXPECT_NE(setting_shape(s.type).kind, SettingKind::kOther) << s.path << ": " << s.type;
    }
  EXPECT_GT(count, 60u);
}

TEST(SettingsOfASection, AModelsSettingsDependOnItsRole) {
  auto has = [](const SettingsDoc& doc, const std::string& path) {
    for (const auto& s : doc.settings)
      if (s.path == path) return true;
    return false;
  };
  const SettingsDoc actor = model_settings("actor", "models.policy.config");
  const SettingsDoc reference = model_settings("reference", "models.ref.config");
  EXPECT_TRUE(has(actor, "models.policy.config.optim.lr"));
  EXPECT_TRUE(has(actor, "models.policy.config.rollout.temperature"));
  EXPECT_FALSE(has(reference, "models.ref.config.optim.lr"));
  EXPECT_TRUE(has(reference, "models.ref.config.model.hidden_size"));
  EXPECT_TRUE(has(task_settings(), "task.batch_size"));
  EXPECT_TRUE(has(trainer_settings(), "trainer.algorithm.kl_ctrl.type"));
}

}  // namespace
}  // namespace rlwb::core::config
