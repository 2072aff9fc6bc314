#include "app/registries.h"

#include "core/controller/rl_builtins.h"
#include "core/tasks/arithmetic_task.h"
#include "core/tasks/dataset_task.h"
#include "core/tasks/humaneval_task.h"
#include "core/tasks/print_program_task.h"
#include "rewards/modules/reward_types.h"
#include "workers/roles/model_setup.h"

namespace rlwb::app {

const core::Builtins& builtins() {
  static const core::Builtins nodes = [] {
    core::Builtins b;
    core::add_basic_builtins(b);
    core::add_rl_builtins(b);
    return b;
  }();
  return nodes;
}

namespace {

// A dataset prompt's tokens as the actor's role will count them: the same
// tokenizer and chat template (workers/roles/model_setup.h).
core::tasks::PromptLength count_prompt_tokens(const core::config::TokenizerOptions& options) {
  std::shared_ptr<const workers::model::Tokenizer> tokenizer = workers::roles::make_tokenizer(options);
  std::string refused;
  std::shared_ptr<const workers::model::ChatTemplate> chat =
      workers::roles::make_chat_template(options, refused);
  return [tokenizer, chat, refused](const nlohmann::json& prompt) {
    return static_cast<int64_t>(
        workers::roles::prompt_token_ids(*tokenizer, prompt, chat.get(), refused).size());
  };
}

}  // namespace

const core::tasks::TaskSources& task_sources() {
  static const core::tasks::TaskSources tasks = {
      {"toy_numbers", core::tasks::toy_numbers_task()},
      {"arithmetic", {core::tasks::arithmetic_task, core::tasks::kArithmeticColumns}},
      {"print_program", {core::tasks::print_program_task, core::tasks::kPrintProgramColumns}},
      {"dataset", core::tasks::dataset_task(count_prompt_tokens)},
      {"humaneval", core::tasks::humaneval_task()},
  };
  return tasks;
}

const core::RewardTypes& reward_types() { return rewards::builtin_reward_types(); }

core::ControllerOptions controller_options() {
  core::ControllerOptions o;
  o.builtins = &builtins();
  o.tasks = &task_sources();
  o.reward_types = &reward_types();
  return o;
}

}  // namespace rlwb::app
