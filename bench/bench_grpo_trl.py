"""TRL reference for RLWB's GRPO step benchmark: the time of one full GRPO
step in Hugging Face TRL's GRPOTrainer, on CPU, reported as tokens/s.

One step here is what one step of RLWB's experiments/grpo.yaml does:
  1. generate: sample `num_generations` completions (temperature 1.0, at most
     `max_new_tokens` tokens, stopping at <eos>) for each of `prompts`
     arithmetic prompts "a+b=" with the current policy;
  2. reference log-probs: a forward pass of a frozen reference model (a copy
     of the initial policy) over prompt+completion, which TRL does whenever
     beta (the KL coefficient) is non-zero;
  3. rewards: exact match of the completion text with str(a+b), then
     group-normalised advantages over the `num_generations` samples of a prompt;
  4. one update: policy forward/backward of the clipped policy loss plus
     beta * KL(policy || reference) (TRL's k3 estimator, the same quantity as
     RLWB's kl_loss_type low_var_kl), token-mean aggregation, one AdamW step.
The batch is configured so that every optimizer step generates exactly once
and updates exactly once (RLWB: ppo.epochs 1, mini_batch_size = micro batch
= batch_size * samples_per_prompt = 128 rows).

Same tiny model as RLWB: a randomly initialised Llama (hidden 128,
intermediate 256, 2 layers, 4 heads, 2 kv heads, vocab 18, 16 positions,
untied embeddings, float32), and RLWB's character tokenizer (0 <pad>,
1 <bos>, 2 <eos>, then "0123456789+-*= " as ids 3..17; prompts get <bos>).

Timing: wall time between the Trainer's on_step_begin and on_step_end of each
optimizer step; the first `warmup` steps are not timed. Tokens of a step:
prompt tokens (with <bos>) plus completion tokens actually generated (up to
and including the first <eos>), over the step's prompts x num_generations
rows, without padding. tokens/s = sum of tokens / sum of seconds over the
timed steps.

Layouts: --processes 1 --threads T is one process with T intra-op threads;
--processes P (> 1) starts P processes through torchrun, each with --threads
threads, and TRL trains them data-parallel (DDP over Gloo, as accelerate sets
it up on CPU): each process generates and updates on its share of the step's
rows, and the step's tokens are summed over the processes. RLWB's own layout
is 2 processes x 1 thread; the benchmark measures TRL in both and compares
with the faster.

  bench_grpo_trl.py --prompts 16 --num-generations 8 --max-new-tokens 5 \
      --steps 8 --warmup 2 --processes 1 --threads 2 --hidden 128 \
      --intermediate 256 --layers 2 --heads 4 --kv-heads 2 --lr 1e-4 --beta 0.001

Human-readable lines first; the last line of stdout is one JSON object.
Exit status 0 on success, 1 (with a message on stderr) on failure.
"""
import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time

ALPHABET = "0123456789+-*= "
SPECIALS = ["<pad>", "<bos>", "<eos>"]  # ids 0, 1, 2
MAX_POSITIONS = 16
MAX_OPERAND = 99


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--prompts", type=int, default=16, help="distinct prompts per step")
    p.add_argument("--num-generations", type=int, default=8, help="completions sampled per prompt")
    p.add_argument("--max-new-tokens", type=int, default=5)
    p.add_argument("--steps", type=int, default=8, help="timed optimizer steps")
    p.add_argument("--warmup", type=int, default=2, help="untimed optimizer steps before them")
    p.add_argument("--threads", type=int, default=2, help="intra-op threads of each process")
    p.add_argument("--processes", type=int, default=1, help="data-parallel processes (torchrun, Gloo)")
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--intermediate", type=int, default=256)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--beta", type=float, default=0.001, help="KL coefficient (non-zero: reference model)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-positions", type=int, default=MAX_POSITIONS,
                   help="the model's positions (prompt + response); RLWB's max_position_embeddings")
    a = p.parse_args(argv)
    if (a.prompts < 1 or a.steps < 1 or a.warmup < 0 or a.threads < 1 or a.max_new_tokens < 1
            or a.processes < 1):
        p.error("--prompts, --steps, --threads, --processes and --max-new-tokens must be >= 1, --warmup >= 0")
    if (a.prompts * a.num_generations) % a.processes:
        p.error(f"--prompts x --num-generations ({a.prompts * a.num_generations} rows) must divide by "
                f"--processes ({a.processes})")
    if a.num_generations < 2:
        p.error("--num-generations must be >= 2 (GRPO normalises rewards within a group)")
    if a.beta == 0.0:
        p.error("--beta must be non-zero: the benchmark includes the reference log-prob pass")
    # Longest prompt: <bos> "99+99=" = 7 tokens.
    if 1 + len(f"{MAX_OPERAND}+{MAX_OPERAND}=") + a.max_new_tokens > a.max_positions:
        p.error(f"prompt + --max-new-tokens exceeds the model's {a.max_positions} positions (--max-positions)")
    if a.hidden % a.heads or a.heads % a.kv_heads:
        p.error("--hidden must be divisible by --heads, and --heads by --kv-heads")
    return a


def build_tokenizer(max_positions=MAX_POSITIONS):
    """RLWB's character tokenizer as a transformers fast tokenizer."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(SPECIALS)}
    for ch in ALPHABET:
        vocab[ch] = len(vocab)
    # No unknown token: a character outside the alphabet is an error, as in RLWB.
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=None))
    # Every character (space included) becomes its own word.
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.decoder = decoders.Fuse()  # concatenate, no separators
    tok.post_processor = processors.TemplateProcessing(
        single="<bos> $A", pair="<bos> $A $B", special_tokens=[("<bos>", vocab["<bos>"])]
    )
    tok.add_special_tokens(SPECIALS)  # already in the vocab: ids stay 0, 1, 2
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>",
        padding_side="left", truncation_side="left", model_max_length=max_positions,
    )
    expect = [1] + [3 + ALPHABET.index(c) for c in "37+48="]
    got = fast("37+48=")["input_ids"]
    if got != expect or fast.decode([1, 11, 8, 2, 0], skip_special_tokens=True) != "85":
        raise RuntimeError(f"character tokenizer mismatch: encode gave {got}, expected {expect}")
    return fast


def build_dataset(n_rows, seed, tokenizer):
    from datasets import Dataset

    rng = random.Random(seed)
    prompts, answers, prompt_tokens = [], [], []
    for _ in range(n_rows):
        a, b = rng.randint(0, MAX_OPERAND), rng.randint(0, MAX_OPERAND)
        prompts.append(f"{a}+{b}=")
        answers.append(str(a + b))
    prompt_tokens = [len(ids) for ids in tokenizer(prompts)["input_ids"]]
    return Dataset.from_dict({"prompt": prompts, "answer": answers, "prompt_tokens": prompt_tokens})


class TokenMeter:
    """Counts the real tokens of every generation batch, via the reward call
    (TRL scores each generation batch exactly once)."""

    def __init__(self):
        self.tokens = 0
        self.rows = 0
        self.calls = 0
        self.correct = 0


def make_reward(meter):
    def exact_match_reward(prompts, completions, completion_ids, answer, prompt_tokens, **kwargs):
        # completions: decoded with special tokens skipped (TRL does this).
        meter.calls += 1
        meter.rows += len(completions)
        meter.tokens += sum(prompt_tokens) + sum(len(ids) for ids in completion_ids)
        rewards = [1.0 if c.strip() == ans else 0.0 for c, ans in zip(completions, answer)]
        meter.correct += int(sum(rewards))
        return rewards

    return exact_match_reward


def launch_processes(args, argv):
    """Runs this script again under torchrun, --processes copies; rank 0's
    stdout (the result) comes through as this process's."""
    import subprocess

    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           f"--nproc_per_node={args.processes}", "--tee", "0", os.path.abspath(__file__), *argv]
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    return subprocess.run(cmd, env=env, check=False).returncode


def main(argv):
    args = parse_args(argv)
    if args.processes > 1 and "LOCAL_RANK" not in os.environ:
        return launch_processes(args, argv)
    rank = int(os.environ.get("RANK", "0"))
    if rank != 0:  # one process reports: the others keep quiet
        sys.stdout = open(os.devnull, "w")
    # Before torch is imported, so intra-op pools start with this size.
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    os.environ["MKL_NUM_THREADS"] = str(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # CPU only, like the RLWB run it is compared with

    import torch
    import transformers
    import trl
    from transformers import LlamaConfig, LlamaForCausalLM, TrainerCallback
    from transformers.trainer_callback import PrinterCallback, ProgressCallback
    from trl import GRPOConfig, GRPOTrainer

    torch.set_num_threads(args.threads)
    transformers.utils.logging.disable_progress_bar()
    tokenizer = build_tokenizer(args.max_positions)
    total_steps = args.warmup + args.steps
    rows_per_step = args.prompts * args.num_generations
    rows_per_process = rows_per_step // args.processes
    dataset = build_dataset(args.prompts * total_steps, args.seed, tokenizer)

    with tempfile.TemporaryDirectory(prefix="bench_grpo_trl_") as tmp:
        # TRL builds the reference model with from_pretrained(<policy's name_or_path>),
        # so the random initial policy is written once to a scratch directory and
        # loaded from there: policy and reference start from identical weights.
        config = LlamaConfig(
            vocab_size=len(SPECIALS) + len(ALPHABET), hidden_size=args.hidden,
            intermediate_size=args.intermediate, num_hidden_layers=args.layers,
            num_attention_heads=args.heads, num_key_value_heads=args.kv_heads,
            max_position_embeddings=args.max_positions, tie_word_embeddings=False,
            pad_token_id=0, bos_token_id=1, eos_token_id=2, dtype="float32",
        )
        torch.manual_seed(args.seed)
        init_dir = os.path.join(tmp, "init")
        LlamaForCausalLM(config).to(torch.float32).save_pretrained(init_dir)
        model = LlamaForCausalLM.from_pretrained(init_dir, dtype=torch.float32)

        # Batch accounting in TRL 1.x: per_device_train_batch_size counts
        # completions (rows), not prompts; a batch holds
        # per_device_train_batch_size / num_generations distinct prompts.
        # generation_batch_size = per_device_train_batch_size * processes *
        # steps_per_generation rows are generated at once and split over
        # steps_per_generation optimizer steps. steps_per_generation = 1 and
        # gradient_accumulation_steps = 1: each optimizer step generates its own
        # prompts x num_generations rows once and updates once. With steps aligned
        # like this TRL also skips the extra "old log-probs" forward pass (the
        # importance ratio is then exactly 1, as in RLWB's single PPO epoch).
        cfg = GRPOConfig(
            output_dir=os.path.join(tmp, "out"),
            use_cpu=True,
            # float32 like RLWB: left unset, TrainingArguments may turn on
            # bf16 autocast on a CPU it thinks supports it, and CPUs without
            # bf16 matmul units then run the products ~10x slower.
            bf16=False,
            fp16=False,
            report_to="none",
            save_strategy="no",
            eval_strategy="no",
            do_eval=False,
            logging_steps=1,
            disable_tqdm=True,
            seed=args.seed,
            data_seed=args.seed,
            per_device_train_batch_size=rows_per_process,
            gradient_accumulation_steps=1,
            steps_per_generation=1,
            num_generations=args.num_generations,
            num_iterations=1,
            max_completion_length=args.max_new_tokens,
            temperature=1.0,
            top_p=1.0,
            top_k=0,
            beta=args.beta,
            learning_rate=args.lr,
            weight_decay=0.0,
            max_grad_norm=1.0,
            # "dapo": token-level losses summed and divided by the number of active
            # completion tokens in the whole (globally accumulated) batch, i.e.
            # RLWB's loss_agg_mode token-mean. With one process and no gradient
            # accumulation "bnpo" would compute the same.
            loss_type="dapo",
            max_steps=total_steps,
            gradient_checkpointing=False,
            dataloader_num_workers=0,
            remove_unused_columns=False,  # the reward needs the answer column
            # Every parameter gets a gradient: DDP's search for unused ones
            # would be an extra pass over the graph each step (TRL's best layout).
            ddp_find_unused_parameters=False,
        )
        if cfg.generation_batch_size != rows_per_step or cfg.steps_per_generation != 1:
            raise RuntimeError(
                f"TRL derived generation_batch_size={cfg.generation_batch_size}, "
                f"steps_per_generation={cfg.steps_per_generation}; expected {rows_per_step}, 1")

        meter = TokenMeter()
        timed = []  # (seconds, tokens) of timed steps
        step_log = {}

        def step_total(tokens, calls, rows):
            """The step's counts summed over the processes (after the step's
            time was taken)."""
            if args.processes == 1:
                return tokens, calls, rows
            t = torch.tensor([tokens, calls, rows], dtype=torch.int64)
            torch.distributed.all_reduce(t)
            return tuple(int(x) for x in t)

        class StepTimer(TrainerCallback):
            def on_step_begin(self, a, state, control, **kw):
                self.t0, self.c0 = time.perf_counter(), time.process_time()
                self.tokens0, self.calls0, self.rows0 = meter.tokens, meter.calls, meter.rows
                self.seen0 = state.num_input_tokens_seen

            def on_step_end(self, a, state, control, **kw):
                dt, dc = time.perf_counter() - self.t0, time.process_time() - self.c0
                tokens, calls, rows = step_total(meter.tokens - self.tokens0, meter.calls - self.calls0,
                                                 meter.rows - self.rows0)
                if calls != args.processes or rows != rows_per_step:
                    raise RuntimeError(f"step {state.global_step}: {calls} generation(s) of {rows} rows in all; "
                                       f"expected {args.processes} of {rows_per_step}")
                trl_tokens = state.num_input_tokens_seen - self.seen0
                if trl_tokens != tokens:
                    raise RuntimeError(f"step {state.global_step}: counted {tokens} tokens, TRL counted {trl_tokens}")
                kind = "warmup" if state.global_step <= args.warmup else "timed"
                if kind == "timed":
                    timed.append((dt, tokens))
                step_log[state.global_step] = (kind, dt, dc, tokens)

            def on_log(self, a, state, control, logs=None, **kw):
                if logs and "loss" in logs and state.global_step in step_log:
                    kind, dt, dc, tokens = step_log[state.global_step]
                    print(f"step {state.global_step:3d} [{kind}] {dt * 1e3:8.1f} ms wall {dc * 1e3:8.1f} ms cpu  "
                          f"{tokens:5d} tokens  "
                          f"reward {logs.get('reward', float('nan')):.3f}  kl {logs.get('kl', float('nan')):.2e}  "
                          f"loss {logs['loss']:+.4f}", flush=True)

        trainer = GRPOTrainer(
            model=model,
            reward_funcs=make_reward(meter),
            args=cfg,
            train_dataset=dataset,
            processing_class=tokenizer,
            callbacks=[StepTimer()],
        )
        trainer.remove_callback(PrinterCallback)
        trainer.remove_callback(ProgressCallback)
        torch.set_num_threads(args.threads)  # in case a library changed it

        if trainer.ref_model is None:
            raise RuntimeError("TRL created no reference model; the step would skip reference log-probs")
        ckpt_attr = ("is_activation_checkpointing" if hasattr(trainer.model, "is_activation_checkpointing")
                     else "is_gradient_checkpointing")
        if trainer.args.gradient_checkpointing or getattr(trainer.model, ckpt_attr, False):
            raise RuntimeError("gradient checkpointing is on; the benchmark runs without it")
        if trainer.args.device.type != "cpu":
            raise RuntimeError(f"trainer runs on {trainer.args.device}, expected cpu")
        n_params = sum(p.numel() for p in trainer.model.parameters())
        print(f"TRL {trl.__version__}, transformers {transformers.__version__}, torch {torch.__version__}, "
              f"{args.processes} process(es) x {torch.get_num_threads()} threads, device {trainer.args.device}, "
              f"distributed: {trainer.accelerator.distributed_type}")
        print(f"model: Llama {n_params} params (hidden {args.hidden}, intermediate {args.intermediate}, "
              f"layers {args.layers}, heads {args.heads}/{args.kv_heads}), reference model loaded, beta {args.beta}")
        print(f"step: {args.prompts} prompts x {args.num_generations} generations = {rows_per_step} rows, "
              f"max {args.max_new_tokens} new tokens; loss_type {cfg.loss_type}, optim {getattr(cfg.optim, 'value', cfg.optim)}, "
              f"{args.warmup} warmup + {args.steps} timed steps", flush=True)

        trainer.train()

    if len(timed) != args.steps:
        raise RuntimeError(f"timed {len(timed)} steps, expected {args.steps}")
    secs = [s for s, _ in timed]
    total_s, total_tokens = sum(secs), sum(t for _, t in timed)
    result = {
        "peer": "trl",
        "trl_version": trl.__version__,
        "steps": len(timed),
        "step_s_median": statistics.median(secs),
        "tokens_per_s": total_tokens / total_s,
        "prompts": args.prompts,
        "num_generations": args.num_generations,
        "max_new_tokens": args.max_new_tokens,
        "threads": args.threads,
        "processes": args.processes,
    }
    print(f"timed {len(timed)} steps: median {result['step_s_median'] * 1e3:.1f} ms/step, "
          f"{total_tokens} tokens in {total_s:.3f} s = {result['tokens_per_s']:.0f} tokens/s")
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        print("bench_grpo_trl: interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as e:  # noqa: BLE001 - report any failure as a clear error and non-zero exit
        import traceback

        traceback.print_exc()
        print(f"bench_grpo_trl: error: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
