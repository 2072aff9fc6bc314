"""Reference for bench/bench_train_step.cpp: one training step (forward,
next-token cross-entropy, backward, AdamW) in PyTorch eager, on the
checkpoint and batch RLWB wrote, for (a) a hand-written PyTorch module of
the same architecture and (b) HF transformers' LlamaForCausalLM. Each model
is timed with torch's two fast AdamW implementations on CPU, fused and
foreach, and reports the faster (its name under "<model>_adamw"): the
reference at its best: each AdamW runs STEPS steps and the faster is kept.
Then it serves: it prints one JSON line when ready (versions, the AdamW
chosen per model), and for each request line on stdin ("torch" or "hf")
runs one step of that model and prints its times as one JSON line (wall
and CPU seconds, and apart the forward + backward and the optimizer step);
"quit" or the end of stdin ends it. The benchmark alternates the sides
step by step, so that every pair sees the host in the same state.
  bench_train_step_torch.py CKPT_DIR THREADS STEPS
"""
import json
import sys
import time

import torch
import torch.nn.functional as F
import transformers
from safetensors.torch import load_file
from torch import nn
from transformers import LlamaForCausalLM


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, self.h, self.kv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
        self.hd = c["head_dim"]
        self.attn_norm = RMSNorm(d, c["rms_norm_eps"])
        self.wq = nn.Linear(d, self.h * self.hd, bias=False)
        self.wk = nn.Linear(d, self.kv * self.hd, bias=False)
        self.wv = nn.Linear(d, self.kv * self.hd, bias=False)
        self.wo = nn.Linear(self.h * self.hd, d, bias=False)
        self.ffn_norm = RMSNorm(d, c["rms_norm_eps"])
        self.ffn_gate = nn.Linear(d, c["intermediate_size"], bias=False)
        self.ffn_up = nn.Linear(d, c["intermediate_size"], bias=False)
        self.ffn_down = nn.Linear(c["intermediate_size"], d, bias=False)

    @staticmethod
    def rope(x, cos, sin):
        x1, x2 = x.chunk(2, dim=-1)
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        h = self.attn_norm(x)
        q = self.wq(h).view(b, t, self.h, self.hd).transpose(1, 2)
        k = self.wk(h).view(b, t, self.kv, self.hd).transpose(1, 2)
        v = self.wv(h).view(b, t, self.kv, self.hd).transpose(1, 2)
        q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.wo(a.transpose(1, 2).reshape(b, t, self.h * self.hd))
        h = self.ffn_norm(x)
        return x + self.ffn_down(F.silu(self.ffn_gate(h)) * self.ffn_up(h))


class Llama(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tok_embeddings = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList(Block(c) for _ in range(c["num_hidden_layers"]))
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        theta = c.get("rope_theta", 10000.0)
        inv = 1.0 / theta ** (torch.arange(0, c["head_dim"], 2).float() / c["head_dim"])
        ang = torch.outer(torch.arange(c["max_position_embeddings"]).float(), inv)
        emb = torch.cat((ang, ang), dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)

    def forward(self, ids):
        t = ids.shape[1]
        cos, sin = self.cos[:t], self.sin[:t]
        x = self.tok_embeddings(ids)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.lm_head(self.norm(x))


HF_NAMES = {"attn_norm": "input_layernorm", "wq": "self_attn.q_proj", "wk": "self_attn.k_proj",
            "wv": "self_attn.v_proj", "wo": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm",
            "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}


def hf_name(name):
    if name == "tok_embeddings.weight":
        return "model.embed_tokens.weight"
    if name == "norm.weight":
        return "model.norm.weight"
    if name.startswith("layers."):
        _, i, part, leaf = name.split(".")
        return f"model.layers.{i}.{HF_NAMES[part]}.{leaf}"
    return name


class Stepper:
    """One model with its AdamW (`adamw`: fused | foreach); step() runs one
    training step and times it: wall and CPU seconds, and apart the forward +
    backward and the optimizer step (wall)."""

    def __init__(self, model, ids, adamw):
        self.model, self.ids = model, ids
        self.opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01, eps=1e-8,
                                     **{adamw: True})
        self.targets = ids[:, 1:].reshape(-1)
        for _ in range(2):  # warm-up: optimizer state allocated
            self.step()

    def forward_backward(self):
        self.opt.zero_grad()
        out = self.model(self.ids)
        logits = out.logits if hasattr(out, "logits") else out
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), self.targets)
        loss.backward()
        return loss.item()

    def step(self):
        t0, c0 = time.perf_counter(), time.process_time()
        self.forward_backward()
        t1 = time.perf_counter()
        self.opt.step()
        t2 = time.perf_counter()
        return {"wall": t2 - t0, "cpu": time.process_time() - c0, "forward_backward": t1 - t0,
                "optimizer": t2 - t1}


def best_adamw(make_model, ids, steps):
    """The faster AdamW for this model (fewer wall seconds over `steps`
    steps each): its name, and each one's fastest step."""
    walls = {}
    for adamw in ("fused", "foreach"):
        stepper = Stepper(make_model(), ids, adamw)
        walls[adamw] = min(stepper.step()["wall"] for _ in range(steps))
    return min(walls, key=walls.get), walls


def main():
    ckpt, threads, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(threads)
    ids = load_file(ckpt + "/batch.safetensors")["input_ids"]
    config = json.load(open(ckpt + "/config.json"))
    weights = load_file(ckpt + "/model.safetensors")

    def make_plain():
        plain = Llama(config)
        plain.load_state_dict({n: weights[hf_name(n)] for n, _ in plain.named_parameters()}, strict=True)
        return plain.train()

    def make_hf():
        return LlamaForCausalLM.from_pretrained(ckpt, dtype=torch.float32, attn_implementation="sdpa").train()

    ready = {"ready": True, "torch_version": torch.__version__,
             "transformers_version": transformers.__version__}
    steppers = {}
    for key, make in (("torch", make_plain), ("hf", make_hf)):
        adamw, walls = best_adamw(make, ids, steps)
        steppers[key] = Stepper(make(), ids, adamw)
        ready[key + "_adamw"] = adamw
        ready[key + "_adamw_walls"] = walls
    print(json.dumps(ready), flush=True)
    # One step per request, so that the benchmark can alternate the sides
    # step by step: "torch" or "hf" -> that model's step's times.
    for line in sys.stdin:
        key = line.strip()
        if key == "quit":
            break
        if key not in steppers:
            print(json.dumps({"error": f"unknown request {key!r}: expected torch, hf or quit"}), flush=True)
            continue
        print(json.dumps(steppers[key].step()), flush=True)


if __name__ == "__main__":
    main()
