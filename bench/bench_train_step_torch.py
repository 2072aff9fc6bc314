"""Reference for bench/bench_train_step.cpp: one training step (forward,
next-token cross-entropy, backward, AdamW) in PyTorch eager, on the
checkpoint and batch RLWB wrote, for (a) a hand-written PyTorch module of
the same architecture and (b) HF transformers' LlamaForCausalLM. Each model
is timed with torch's two fast AdamW implementations on CPU, fused and
foreach, and reports the faster (its name under "<model>_adamw"): the
reference at its best. Prints one JSON line last: for each model the
fastest step's wall and CPU seconds, and apart the fastest forward +
backward and the fastest optimizer step (wall).
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


def time_steps(model, ids, steps, adamw):
    """Fastest step (wall, CPU) and, apart, fastest forward+backward and
    optimizer step, with AdamW's `adamw` implementation (fused | foreach)."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01, eps=1e-8,
                            **{adamw: True})
    targets = ids[:, 1:].reshape(-1)

    def forward_backward():
        opt.zero_grad()
        out = model(ids)
        logits = out.logits if hasattr(out, "logits") else out
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), targets)
        loss.backward()
        return loss.item()

    for _ in range(2):  # warm-up: optimizer state allocated
        forward_backward()
        opt.step()
    wall, cpu, fb, op = [], [], [], []
    for _ in range(steps):
        t0, c0 = time.perf_counter(), time.process_time()
        forward_backward()
        t1 = time.perf_counter()
        opt.step()
        t2 = time.perf_counter()
        cpu.append(time.process_time() - c0)
        wall.append(t2 - t0)
        fb.append(t1 - t0)
        op.append(t2 - t1)
    return {"wall": min(wall), "cpu": min(cpu), "forward_backward": min(fb), "optimizer": min(op)}


def best_adamw(make_model, ids, steps):
    """The model timed with each fast AdamW; the faster one's figures."""
    results = {}
    for adamw in ("fused", "foreach"):
        results[adamw] = time_steps(make_model(), ids, steps, adamw)
    name = min(results, key=lambda k: results[k]["wall"])
    return dict(results[name], adamw=name, others={k: v["wall"] for k, v in results.items()})


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

    result = {"torch_version": torch.__version__, "transformers_version": transformers.__version__}
    for key, make in (("torch", make_plain), ("hf", make_hf)):
        r = best_adamw(make, ids, steps)
        result[key] = r["wall"]
        result[key + "_cpu"] = r["cpu"]
        result[key + "_forward_backward"] = r["forward_backward"]
        result[key + "_optimizer"] = r["optimizer"]
        result[key + "_adamw"] = r["adamw"]
        result[key + "_adamw_walls"] = r["others"]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
