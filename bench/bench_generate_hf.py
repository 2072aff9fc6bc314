"""Reference for bench/bench_generate.cpp: HF transformers generate() on the
checkpoint and prompts RLWB wrote. Prints one JSON line last.
  bench_generate_hf.py CKPT_DIR MAX_NEW THREADS REPEATS
"""
import json
import sys
import time

import torch
import transformers
from safetensors.torch import load_file
from transformers import LlamaForCausalLM

ckpt, max_new, threads, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(threads)
model = LlamaForCausalLM.from_pretrained(ckpt, dtype=torch.float32).eval()
ids = load_file(ckpt + "/prompts.safetensors")["prompt_ids"]
mask = torch.ones_like(ids)
kwargs = dict(attention_mask=mask, do_sample=False, max_new_tokens=max_new, min_new_tokens=max_new,
              pad_token_id=0, eos_token_id=None, use_cache=True)
with torch.inference_mode():
    model.generate(ids, **kwargs)  # warm-up
    best = best_cpu = float("inf")
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = model.generate(ids, **kwargs)
        best_cpu = min(best_cpu, time.process_time() - c0)
        best = min(best, time.perf_counter() - t0)
new_tokens = out[:, ids.shape[1]:]
print(json.dumps({"version": transformers.__version__, "seconds": best, "cpu_seconds": best_cpu,
                  "tokens_per_s": new_tokens.numel() / best, "tokens": new_tokens[:1].tolist()}))
