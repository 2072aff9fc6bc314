// GraphIssue's one-line form, warnings, and GraphError's message.
#include <gtest/gtest.h>

#include "core/graph/experiment.h"

namespace rlwb::core {
namespace {

TEST(GraphIssue, ToStringNamesFileLineNodeMessageAndHint) {
  GraphIssue issue{"exp.yaml", 12, "ref", "reads column 'responses' that no node writes",
                   "add a node that writes it"};
  EXPECT_EQ(issue.to_string(),
            "exp.yaml:12: node 'ref': reads column 'responses' that no node writes "
            "(hint: add a node that writes it)");
}

TEST(GraphIssue, ToStringLeavesOutWhatIsUnknown) {
  EXPECT_EQ((GraphIssue{"exp.yaml", 0, "", "no nodes", ""}).to_string(), "exp.yaml: no nodes");
  EXPECT_EQ((GraphIssue{"", 3, "", "bad", "fix"}).to_string(), "line 3: bad (hint: fix)");
  EXPECT_EQ((GraphIssue{"", 0, "gen", "bad", ""}).to_string(), "node 'gen': bad");
}

TEST(GraphIssue, WarningsSayWarning) {
  GraphIssue issue{"exp.yaml", 4, "gne", "has a layout position", "", Severity::warning};
  EXPECT_EQ(issue.to_string(), "exp.yaml:4: warning: node 'gne': has a layout position");
  EXPECT_FALSE(has_errors({issue}));
  EXPECT_TRUE(has_errors({issue, GraphIssue{"exp.yaml", 5, "", "x", ""}}));
}

TEST(GraphIssue, ToStringShowsTheTrainerPhaseBeforeTheMessage) {
  GraphIssue issue{"exp.yaml", 20, "eval_gen", "has no method 'genrate'", "", Severity::error, "eval"};
  EXPECT_EQ(issue.to_string(), "exp.yaml:20: node 'eval_gen': trainer.eval: has no method 'genrate'");
  EXPECT_EQ(issue.message, "has no method 'genrate'");
}

TEST(GraphIssue, DefaultSeverityIsError) { EXPECT_EQ(GraphIssue{}.severity, Severity::error); }

TEST(GraphError, WhatListsEveryIssueOnItsOwnLine) {
  GraphError error({{"a.yaml", 1, "", "first", ""}, {"a.yaml", 2, "n", "second", "h"}});
  EXPECT_STREQ(error.what(), "a.yaml:1: first\na.yaml:2: node 'n': second (hint: h)");
  EXPECT_EQ(error.issues().size(), 2u);
}

}  // namespace
}  // namespace rlwb::core
