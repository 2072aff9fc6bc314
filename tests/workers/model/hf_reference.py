"""Hugging Face side of RLWB's model tests (tests/workers/model/hf_parity_test.cpp,
tests/workers/model/tokenizer_test.cpp). Run by the C++ tests with the RLWB venv's
python; every subcommand exits non-zero with a message on failure.

  models OUT              tiny random Llama and Qwen2 checkpoints + expected
                          logits and greedy continuations
  verify-export CKPT REF [CKPT REF ...]
                          load RLWB-exported checkpoints with transformers and
                          compare their outputs with REF (written by RLWB)
  tokenizers OUT          small byte-level BPE tokenizers (GPT-2 and Qwen2
                          pre-tokenizers) + expected encodings
"""
import json
import os
import sys


def fail(msg):
    print("hf_reference.py: " + msg, file=sys.stderr)
    sys.exit(1)


def randomize_(model, seed):
    """Norm weights and biases are 1 and 0 after init; randomize them so a
    mix-up in their loading cannot hide."""
    import torch
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight") or "layernorm" in name:
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith(".bias"):
                p.copy_(0.05 * torch.randn(p.shape, generator=g))


def make_models(out):
    import torch
    from safetensors.torch import save_file
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(1234)
    common = dict(vocab_size=96, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                  rms_norm_eps=1e-5, bos_token_id=None, eos_token_id=None, pad_token_id=0,
                  attn_implementation="sdpa")
    models = {
        "llama": LlamaForCausalLM(LlamaConfig(rope_theta=5000.0, tie_word_embeddings=False, **common)),
        "qwen2": Qwen2ForCausalLM(Qwen2Config(rope_theta=1000000.0, tie_word_embeddings=True, **common)),
    }
    for seed, (name, model) in enumerate(models.items()):
        randomize_(model, seed + 7)
        model.eval()
        model.save_pretrained(os.path.join(out, name))
        g = torch.Generator().manual_seed(99 + seed)
        ids = torch.randint(1, 96, (3, 17), generator=g)
        with torch.no_grad():
            logits = model(input_ids=ids).logits
        # Ragged prompts, left-padded, for greedy generation.
        lengths = [9, 5, 7]
        width = max(lengths)
        prompt = torch.zeros(len(lengths), width, dtype=torch.long)
        mask = torch.zeros_like(prompt)
        for r, n in enumerate(lengths):
            prompt[r, width - n:] = torch.randint(1, 96, (n,), generator=g)
            mask[r, width - n:] = 1
        with torch.no_grad():
            out_ids = model.generate(input_ids=prompt, attention_mask=mask, do_sample=False,
                                     max_new_tokens=12, min_new_tokens=12, pad_token_id=0,
                                     eos_token_id=None)
        save_file({"input_ids": ids, "logits": logits.contiguous(),
                   "prompt_ids": prompt, "prompt_mask": mask,
                   "greedy_tokens": out_ids[:, width:].contiguous()},
                  os.path.join(out, name + "_expected.safetensors"))
    print("transformers", __import__("transformers").__version__)


def verify_export(ckpt, ref_path):
    import torch
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSequenceClassification

    ref = load_file(ref_path)
    config = AutoConfig.from_pretrained(ckpt)
    arch = config.architectures[0]
    if arch.endswith("ForCausalLM"):
        model = AutoModelForCausalLM.from_pretrained(ckpt, dtype=torch.float32)
        with torch.no_grad():
            got = model(input_ids=ref["input_ids"], attention_mask=ref["attention_mask"]).logits
        want = ref["logits"]
    else:
        model = AutoModelForSequenceClassification.from_pretrained(ckpt, dtype=torch.float32)
        with torch.no_grad():
            got = model(input_ids=ref["input_ids"], attention_mask=ref["attention_mask"]).logits.squeeze(-1)
        want = ref["scores"]
    if type(model).__name__ != arch:
        fail(f"{ckpt}: loaded as {type(model).__name__}, expected {arch}")
    diff = (got.float() - want.float()).abs().max().item()
    print(f"{arch}: max abs diff {diff:.3g}")
    if not diff <= 1e-4:
        fail(f"{ckpt}: outputs differ from RLWB's by {diff} (> 1e-4)")


CORPUS = [
    "Hello world! The quick brown fox jumps over the lazy dog.",
    "It's 2024; we've got 12345 apples, they'll cost $3.50 each.",
    "def add(a, b):\n    return a + b\n\n\nprint(add(37, 48))\n",
    "Qwen and Llama use byte-level BPE. Ünïcödé wörds, 日本語のテキスト, emoji 🙂!",
    "  leading spaces, trailing spaces   \n\n tabs\tand\r\nnewlines",
    "37+48=85 12*7=84 100-1=99 <|endoftext|>",
] * 20

CASES = [
    "Hello world!",
    "It's 2024; we've got 12345 apples.",
    "37+48=",
    "  two leading spaces and   three inside",
    "line one\nline two\n\n  indented\r\n",
    "def f(x):\n    return x * 2\n",
    "Ünïcödé wörds and 日本語 🙂",
    "special <|endoftext|> in the middle<|im_start|>",
    "I'LL SHOUT, you'll whisper, 'quoted'",
    "",
]


def make_tokenizers(out):
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    qwen_pattern = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
                    r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
    llama3_pattern = qwen_pattern.replace(r"\p{N}|", r"\p{N}{1,3}|")
    styles = {
        "gpt2_style": pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        "qwen2_style": pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(qwen_pattern), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]),
        "llama3_style": pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(llama3_pattern), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]),
    }
    expected = {}
    for name, pre in styles.items():
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>", "<|im_start|>"],
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                      show_progress=False)
        tok.train_from_iterator(CORPUS, trainer=trainer)
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        tok.save(os.path.join(d, "tokenizer.json"))
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            json.dump({"eos_token": "<|endoftext|>", "pad_token": {"content": "<|endoftext|>"},
                       "bos_token": None}, f)
        expected[name] = {
            "vocab_size": tok.get_vocab_size(with_added_tokens=True),
            "cases": [{"text": t, "ids": tok.encode(t).ids,
                       "decoded": tok.decode(tok.encode(t).ids, skip_special_tokens=False)}
                      for t in CASES],
        }
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, ensure_ascii=False)
    print("tokenizers", __import__("tokenizers").__version__)


def main():
    if len(sys.argv) < 3:
        fail(__doc__)
    cmd = sys.argv[1]
    try:
        if cmd == "models":
            make_models(sys.argv[2])
        elif cmd == "verify-export":
            pairs = sys.argv[2:]
            if len(pairs) % 2:
                fail("verify-export needs CKPT REF pairs")
            for ckpt, ref in zip(pairs[::2], pairs[1::2]):
                verify_export(ckpt, ref)
        elif cmd == "tokenizers":
            make_tokenizers(sys.argv[2])
        else:
            fail("unknown command " + cmd)
    except ImportError as e:
        fail(f"cannot import {e.name}: install the pinned reference packages "
             f"(scripts/setup.sh, or pip install -r scripts/python-requirements.txt) [{e}]")


if __name__ == "__main__":
    main()
