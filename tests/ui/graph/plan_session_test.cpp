// The Plan panel's model (ui/graph/plan_session.h) on a real experiment:
// the search lists ranked plans without touching the document; applying
// one writes its pools and layouts as one undo entry that undo takes back
// exactly; bad requests and experiments the planner cannot read end in a
// message, never an exception or a changed document.
#include "ui/graph/plan_session.h"

#include <gtest/gtest.h>

#include <optional>
#include <filesystem>

#include "core/planner/device_profile.h"
#include "core/planner/plan_writer.h"
#include "tests/ui/ui_test_support.h"
#include "ui/graph/editor_catalog.h"

namespace rlwb::ui {
namespace {

namespace planner = core::planner;

// ppo.yaml's models use the char tokenizer; its vocabulary is not what a
// plan is ranked by, so a fixed one stands in for the workers' tokenizers.
const planner::TokenizerVocab kVocab = [](const core::config::TokenizerOptions&) { return int64_t{64}; };

class PlanSessionTest : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    // No calibrated profile here: the choices are the built-in ones only.
    home_.emplace("RLWB_HOME", path("home"));
  }
  GraphDocument open_copy(const std::string& experiment) {
    const std::string file = path(experiment);
    test::write_bytes(file, test::read_bytes(test::source_path("experiments/" + experiment)));
    return GraphDocument::open(file);
  }
  void search(PlanSession& session, const GraphDocument& doc, int devices,
              const planner::TokenizerVocab& vocab = kVocab) {
    session.request.devices = devices;
    session.request.profile = "A100-80G";
    search_plans_for(session, doc, catalog_from_calls(doc.experiment()), vocab);
  }
  std::optional<test::ScopedEnv> home_;
};

// What the plan says each model gets: pool (its set's) and dp/tp/pp.
void expect_document_has_plan(const core::Experiment& exp, const PlanSession& session,
                              const planner::Plan& plan) {
  ASSERT_EQ(exp.pools.size(), plan.sets.size());
  for (const auto& set : plan.sets) {
    const std::string pool = planner::pool_name_of(session.input, set);
    ASSERT_TRUE(exp.pools.count(pool)) << pool;
    EXPECT_EQ(exp.pools.at(pool).workers, set.devices) << pool;
    EXPECT_EQ(exp.pools.at(pool).device, "cuda") << pool;
    for (int m : set.models) {
      const core::ModelSpec& model = exp.models.at(session.input.models[m].name);
      EXPECT_EQ(model.pool, pool) << model.name;
      EXPECT_EQ(model.parallel.dp, plan.layouts[m].dp) << model.name;
      EXPECT_EQ(model.parallel.tp, plan.layouts[m].tp) << model.name;
      EXPECT_EQ(model.parallel.pp, plan.layouts[m].pp) << model.name;
    }
  }
}

TEST_F(PlanSessionTest, SearchListsRankedPlansForPpoOnEightDevicesAndLeavesTheDocumentAlone) {
  GraphDocument doc = open_copy("ppo.yaml");
  ASSERT_TRUE(doc.loaded());
  const std::string before = doc.text_to_save();
  const uint64_t version = doc.version();
  PlanSession session;
  search(session, doc, 8);
  ASSERT_EQ(session.error, "");
  ASSERT_GT(session.search.plans.size(), 1u);
  EXPECT_LE(session.search.plans.size(), 10u);
  for (size_t i = 1; i < session.search.plans.size(); ++i)
    EXPECT_LE(session.search.plans[i - 1].step.seconds, session.search.plans[i].step.seconds) << "rank " << i;
  for (const auto& plan : session.search.plans) {
    int devices = 0;
    for (const auto& set : plan.sets) devices += set.devices;
    EXPECT_EQ(devices, 8);
  }
  EXPECT_EQ(session.selected, 0);
  EXPECT_EQ(session.profile, "A100-80G");
  EXPECT_NE(session.summary.find("on 8 A100-80G device(s)"), std::string::npos) << session.summary;
  EXPECT_TRUE(plans_are_current(session, doc));
  EXPECT_EQ(doc.version(), version);
  EXPECT_EQ(doc.text_to_save(), before);
  EXPECT_FALSE(doc.can_undo());
}

TEST_F(PlanSessionTest, ApplyingAPlanIsOneUndoEntryThatUndoTakesBackExactly) {
  GraphDocument doc = open_copy("ppo.yaml");
  const core::Experiment before = doc.experiment();
  const std::string text_before = doc.text_to_save();
  PlanSession session;
  search(session, doc, 8);
  ASSERT_GT(session.search.plans.size(), 1u) << session.error;
  session.selected = 1;
  ASSERT_TRUE(apply_selected_plan(session, doc)) << session.error;
  EXPECT_EQ(session.error, "");
  EXPECT_NE(session.note.find("applied plan #2"), std::string::npos) << session.note;
  expect_document_has_plan(doc.experiment(), session, session.search.plans[1]);
  EXPECT_FALSE(doc.experiment().pools.count("train"));  // the file's own pool is replaced
  EXPECT_TRUE(doc.dirty());

  ASSERT_TRUE(doc.undo());
  EXPECT_TRUE(core::same_content(doc.experiment(), before));
  EXPECT_EQ(doc.experiment().pools.size(), 1u);
  EXPECT_EQ(doc.text_to_save(), text_before);
  EXPECT_FALSE(doc.dirty());
  EXPECT_FALSE(doc.can_undo());  // one entry, and it is gone
  EXPECT_TRUE(plans_are_current(session, doc));

  ASSERT_TRUE(doc.redo());
  expect_document_has_plan(doc.experiment(), session, session.search.plans[1]);
  // Another plan applies on top of the first, as its own undo entry.
  session.selected = 0;
  ASSERT_TRUE(apply_selected_plan(session, doc)) << session.error;
  expect_document_has_plan(doc.experiment(), session, session.search.plans[0]);
  ASSERT_TRUE(doc.undo());
  expect_document_has_plan(doc.experiment(), session, session.search.plans[1]);
}

TEST_F(PlanSessionTest, TheAppliedPlanIsWhatTheSavedFileSays) {
  GraphDocument doc = open_copy("ppo.yaml");
  PlanSession session;
  search(session, doc, 8);
  ASSERT_FALSE(session.search.plans.empty()) << session.error;
  ASSERT_TRUE(apply_selected_plan(session, doc));
  doc.save();
  const core::Experiment saved = core::load_experiment_file(doc.path());
  expect_document_has_plan(saved, session, session.search.plans[0]);
  // Everything else of the file stays: the graph, the trainer, the models' configs.
  EXPECT_EQ(saved.nodes.size(), doc.experiment().nodes.size());
  EXPECT_EQ(saved.trainer, doc.experiment().trainer);
}

TEST_F(PlanSessionTest, ZeroDevicesIsRefusedWithAMessage) {
  GraphDocument doc = open_copy("ppo.yaml");
  const std::string before = doc.text_to_save();
  PlanSession session;
  search(session, doc, 0);
  EXPECT_EQ(session.error, "devices: give at least 1 device to plan for");
  EXPECT_TRUE(session.search.plans.empty());
  EXPECT_FALSE(apply_selected_plan(session, doc));
  EXPECT_EQ(doc.text_to_save(), before);
  EXPECT_FALSE(doc.can_undo());
}

TEST_F(PlanSessionTest, ACountNoPlanFitsShowsThePlannersReason) {
  GraphDocument doc = open_copy("ppo.yaml");
  const std::string before = doc.text_to_save();
  PlanSession session;
  search(session, doc, 1000);
  EXPECT_NE(session.error.find("no placement of the 3 models fits on 1000 A100-80G device(s)"),
            std::string::npos)
      << session.error;
  EXPECT_TRUE(session.search.plans.empty());
  EXPECT_EQ(session.selected, -1);
  EXPECT_FALSE(apply_selected_plan(session, doc));
  EXPECT_EQ(doc.text_to_save(), before);
}

TEST_F(PlanSessionTest, AnExperimentThePlannerCannotReadSaysWhy) {
  GraphDocument doc = open_copy("demo.yaml");  // demo roles: no transformer to plan
  PlanSession session;
  search(session, doc, 4);
  EXPECT_NE(session.error, "");
  EXPECT_TRUE(session.search.plans.empty());
  // Without the workers' tokenizers the panel says so rather than guessing.
  GraphDocument ppo = open_copy("ppo.yaml");
  search(session, ppo, 8, nullptr);
  EXPECT_NE(session.error.find("no tokenizers"), std::string::npos) << session.error;
}

TEST_F(PlanSessionTest, PlansForAnExperimentEditedSinceAreNotApplied) {
  GraphDocument doc = open_copy("ppo.yaml");
  PlanSession session;
  search(session, doc, 8);
  ASSERT_FALSE(session.search.plans.empty()) << session.error;
  doc.begin_gesture();
  doc.experiment().models.at("actor").parallel.dp = 1;
  ASSERT_TRUE(doc.end_gesture());
  EXPECT_FALSE(plans_are_current(session, doc));
  const std::string edited = doc.text_to_save();
  EXPECT_FALSE(apply_selected_plan(session, doc));
  EXPECT_NE(session.error.find("Search again"), std::string::npos) << session.error;
  EXPECT_EQ(doc.text_to_save(), edited);
}

TEST_F(PlanSessionTest, ThisHostIsOfferedAndChosenFirstOnceCalibrated) {
  const auto builtins = planner::builtin_device_profile_names();
  EXPECT_EQ(plan_profile_choices(), builtins);
  EXPECT_EQ(default_plan_profile(), builtins.front());
  planner::DeviceProfile host = planner::load_device_profile("H200");
  host.name = planner::kThisHostProfile;
  planner::save_device_profile(host, planner::this_host_profile_path());
  ASSERT_EQ(planner::this_host_profile_path(), path("home") + "/devices/this-host.json");
  auto with_host = builtins;
  with_host.push_back("this-host");
  EXPECT_EQ(plan_profile_choices(), with_host);
  EXPECT_EQ(default_plan_profile(), "this-host");
}

}  // namespace
}  // namespace rlwb::ui
