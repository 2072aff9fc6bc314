#!/usr/bin/env python3
"""Writes experiments/data/arithmetic/: the built-in arithmetic task as verl-format
dataset files, for experiments/grpo_dataset.yaml and as an example to copy.

  train.parquet  every a+b with a, b in 0..99 outside the held-out split
  val.jsonl      200 held-out problems (JSON Lines: one row per line)
  tokenizer/     a byte-level BPE tokenizer.json (one token per byte, no merges)
                 with a chat template that writes the messages' contents

Columns (verl's): prompt (chat messages), data_source, ability,
reward_model {style, ground_truth}, extra_info {split, index, answer}. The
answer is a sloppy teacher's (it forgets to carry the one into the tens 60%
of the time), the demonstration of the SFT warm start; ground_truth is
always right. Deterministic: the same files on every run.

Run with the venv's python (pyarrow, tokenizers): scripts/setup.sh makes it.
"""
import json
import os
import random
import sys

import pyarrow as pa
import pyarrow.parquet as pq
from tokenizers import Tokenizer, decoders, models, pre_tokenizers

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "arithmetic")


def row(a, b, split, index, teacher):
    truth = a + b
    carries = a % 10 + b % 10 >= 10
    answer = truth - 10 if carries and teacher.random() < 0.6 else truth
    return {
        "data_source": "arithmetic",
        "prompt": [{"role": "user", "content": f"{a}+{b}="}],
        "ability": "math",
        "reward_model": {"style": "rule", "ground_truth": str(truth)},
        "extra_info": {"split": split, "index": index, "answer": str(answer)},
    }


def write_tokenizer(folder):
    os.makedirs(folder, exist_ok=True)
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {symbol: i for i, symbol in enumerate(sorted(alphabet))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(["<|endoftext|>", "<|pad|>"])
    tok.save(os.path.join(folder, "tokenizer.json"))
    config = {
        "eos_token": "<|endoftext|>",
        "pad_token": "<|pad|>",
        "chat_template": "{% for message in messages %}{{ message['content'] }}{% endfor %}",
    }
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")


def main():
    rng = random.Random(20261202)
    problems = [(a, b) for a in range(100) for b in range(100)]
    held_out = set(rng.sample(problems, 200))
    teacher = random.Random(7)
    val = [row(a, b, "val", i, teacher) for i, (a, b) in enumerate(sorted(held_out))]
    train = [row(a, b, "train", i, teacher) for i, (a, b) in enumerate(p for p in problems if p not in held_out)]
    os.makedirs(OUT, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(train), os.path.join(OUT, "train.parquet"))
    with open(os.path.join(OUT, "val.jsonl"), "w") as f:
        for r in val:
            f.write(json.dumps(r) + "\n")
    write_tokenizer(os.path.join(OUT, "tokenizer"))
    print(f"wrote {len(train)} training rows, {len(val)} held-out rows and the tokenizer to {OUT}")


if __name__ == "__main__":
    sys.exit(main())
