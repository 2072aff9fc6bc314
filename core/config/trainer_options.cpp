#include "core/config/trainer_options.h"

namespace rlwb::core::config {

namespace alg = algorithms;

namespace {

void read_algorithm(Section&& s, AlgorithmOptions& a) {
  s.choice("adv_estimator", a.adv_estimator, alg::advantage_estimator_names(), "the advantage estimator")
      .number("gamma", a.gamma, "discount factor (GAE, REINFORCE++)", between(0, 1))
      .number("lam", a.lam, "GAE's lambda", between(0, 1))
      .flag("norm_adv_by_std_in_grpo", a.norm_adv_by_std_in_grpo,
            "GRPO divides by the group's std; false gives Dr.GRPO")
      .flag("use_kl_in_reward", a.use_kl_in_reward, "subtract the KL to the reference from the reward (PPO)")
      .choice("kl_penalty", a.kl_penalty, alg::kl_estimator_names(), "KL estimator of the reward penalty");
  {
    Section k = s.child("kl_ctrl", "the KL coefficient's controller (use_kl_in_reward)");
    k.choice("type", a.kl_ctrl.type, alg::kl_control_names(), "fixed, or adaptive toward target_kl")
        .number("kl_coef", a.kl_ctrl.kl_coef, "the (initial) KL coefficient", at_least(0))
        .number("target_kl", a.kl_ctrl.target_kl, "adaptive: the KL to steer toward", above(0))
        .number("horizon", a.kl_ctrl.horizon, "adaptive: rows over which the coefficient adapts", above(0));
  }
  Section c = s.child("safe_rlhf", "Safe-RLHF's Lagrange multiplier (builtin.safe_rlhf_advantage)");
  c.number("cost_threshold", a.safe_rlhf.cost_threshold, "the episode cost the policy must stay under")
      .number("lambda_init", a.safe_rlhf.lambda_init, "the multiplier's start", at_least(0))
      .number("lambda_lr", a.safe_rlhf.lambda_lr, "the multiplier's step size", at_least(0))
      .number("lambda_max", a.safe_rlhf.lambda_max, "upper bound of the multiplier; null: none", at_least(0))
      .number("lambda_kp", a.safe_rlhf.lambda_kp,
              "proportional gain: a step over the threshold adds lambda_kp * (cost - threshold) to the "
              "multiplier it applies (PI control); 0: none",
              at_least(0))
      .choice("lambda_step", a.safe_rlhf.lambda_step, alg::lagrange_step_names(),
              "log: lambda *= exp(lambda_lr * (cost - threshold)); linear: lambda += lambda_lr * (cost - "
              "threshold), at least 0 (with lambda_kp: PI control as Stooke et al. 2020)");
}

}  // namespace

TrainerOptions parse_trainer_options(const nlohmann::json& trainer, ParseContext& ctx) {
  TrainerOptions o;
  Section s(&trainer, "trainer", ctx);
  s.integer("steps", o.steps, "RL steps", above(0));
  read_algorithm(s.child("algorithm", "the RL algorithm's settings"), o.algorithm);
  {
    o.warm_start.enabled = s.has("warm_start");
    Section w =
        s.child("warm_start", "supervised steps before RL (SFT), then weights copied to other models");
    w.integer("steps", o.warm_start.steps, "warm-start steps", at_least(0))
        .integer("batch_size", o.warm_start.batch_size,
                 "prompts per warm-start step; default task.batch_size", above(0));
    w.raw("nodes", "list of nodes", "the warm start's graph, run once per warm-start step");
    Section sync = w.child("sync", "after the warm start, copy one model's weights into others");
    sync.text("from", o.warm_start.sync_from, "the model whose weights are copied")
        .names("to", o.warm_start.sync_to, "the models that load them");
    // A sync without `from`, and names of models that do not exist, are the
    // validator's phase checks (core/graph/phase_checks.cpp).
  }
  {
    o.eval.enabled = s.has("eval");
    Section e = s.child("eval", "held-out evaluation on the task's test split");
    e.integer("every", o.eval.every, "evaluate every this many RL steps (and at the last); 0: before RL only",
              at_least(0))
        .integer("batch_size", o.eval.batch_size, "held-out rows; default the task's test_size", above(0))
        .text("score", o.eval.score, "the column of per-token or per-row scores the eval nodes write");
    e.raw("nodes", "list of nodes", "the evaluation's graph");
  }
  {
    o.samples.enabled = s.has("samples");
    Section p = s.child("samples", "rows of each step stored for the samples view");
    p.integer("rows", o.samples.rows, "rows stored per step", at_least(0))
        .text("prompt", o.samples.prompt, "the prompt column")
        .text("response", o.samples.response, "the response text column")
        .text("score", o.samples.score, "the score column")
        .names("details", o.samples.details, "object columns stored with each sample");
  }
  {
    Section c = s.child("checkpoint", "resumable checkpoints (rlwb run --resume RUN)");
    c.integer("every", o.checkpoint.every,
              "save every this many RL steps: weights, optimizer states, KL/Lagrange states; 0: never",
              at_least(0))
        .integer("keep", o.checkpoint.keep, "the newest checkpoints kept; older ones are deleted", above(0));
  }
  s.choice("on_worker_failure", o.on_worker_failure,
           {{"fail", WorkerFailurePolicy::kFail}, {"restart", WorkerFailurePolicy::kRestart}},
           "a worker that dies or hangs: fail the run, or restart the workers from the last checkpoint")
      .integer("max_restarts", o.max_restarts,
               "on_worker_failure restart: the most restarts of one rlwb run (--resume counts anew)",
               at_least(0));
  s.names("save", o.save, "models saved (HF layout) at the end of the run")
      .names("token_masks", o.token_masks, "mask columns whose sums count the tokens of perf/throughput");
  return o;
}

}  // namespace rlwb::core::config
