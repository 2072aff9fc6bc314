"""The reference side of the SentencePiece half of tokenizer_parity_test.cpp.

  sentencepiece_corpus.py OUT

trains SentencePiece models offline with the `sentencepiece` package on the
training lines of tokenizer_corpus.py, each into OUT/<model>/ with the
tokenizer_config.json (and special_tokens_map.json) a checkpoint would have:

  llama_bpe   BPE with byte fallback, identity normalization, no white-space
              removal, split digits, user-defined and control symbols (the
              Llama 2 recipe); tokenizer_config.json as transformers saves it;
  t5_unigram  unigram with the default nmt_nfkc normalization and white-space
              removal, a user-defined and a control symbol, T5's pad/eos/unk
              ids; a hand-written transformers 4 style tokenizer_config.json
              with an added token past the model's pieces (rstrip) and a
              special_tokens_map.json;
  nfkc_bpe    BPE without byte fallback (unknown characters become <unk>),
              NFKC, no dummy prefix; no config files at all.

and writes OUT/sentencepiece_corpus.jsonl: for every line of the parity
corpus (tokenizer_corpus.py's edge cases and 10,000 generated lines, and
ADDED_TOKEN_LINES) and every model, the reference ids and decodings:

  spm_ids       the python sentencepiece model on the text between added
                tokens (cut leftmost-longest, rstrip honoured), each piece
                encoded alone, added tokens by their ids: what a Hugging Face
                tokenizer made from the model gives when it keeps the
                model's own segmentation;
  hf_ids        (llama_bpe only) HF `tokenizers`: the fast tokenizer
                transformers makes from this directory, with the normalizer
                of its LlamaConverter in legacy mode (Prepend + Replace, the
                one the Llama 2 tokenizer.json ships). Not for the others:
                transformers' T5 conversion splits on white space before the
                unigram model and fuses unknown characters, so its ids are
                not the model's (1,179 of these 10,071 lines differ; the
                default Metaspace of transformers' Llama conversion gives
                927), and nfkc_bpe has no transformers class;
  decoded, decoded_skip
                HF `tokenizers`' decoder of that kind of model on spm_ids,
                with and without special tokens;
  spm_decoded   (lines whose ids have no added or unknown token) the python
                sentencepiece decode, for the round trip.
"""
import json
import os
import re
import sys

# The pure-Python protobuf: sentencepiece 0.1.99's generated model_pb2 is older
# than the protobuf runtime transformers pulls in.
os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tokenizer_corpus  # noqa: E402

MODELS = ["llama_bpe", "t5_unigram", "nfkc_bpe"]
# The added tokens of these models in text (the corpus has those of the tokenizer.json styles).
ADDED_TOKEN_LINES = ["<s>hi</s>", "a<unk>b", "x<extra_id_1>   y", "<extra_id_0><mask> <mask>",
                     "\t<|im_start|>user\nHi<|im_end|>", "<tool_call>{}</tool_call>", " <extra_id_1>\n\nz",
                     "<pad><pad>"]


def train(name, d, training):
    import sentencepiece as spm
    common = dict(sentence_iterator=iter(training), model_prefix=os.path.join(d, "tokenizer"), minloglevel=2,
                  character_coverage=0.995, num_threads=2)
    if name == "llama_bpe":
        spm.SentencePieceTrainer.train(
            model_type="bpe", vocab_size=3000, byte_fallback=True, normalization_rule_name="identity",
            remove_extra_whitespaces=False, split_digits=True, allow_whitespace_only_pieces=True,
            user_defined_symbols=["<tool_call>", "</tool_call>"], control_symbols=["<|im_start|>", "<|im_end|>"],
            unk_id=0, bos_id=1, eos_id=2, pad_id=-1, **common)
    elif name == "t5_unigram":
        spm.SentencePieceTrainer.train(
            model_type="unigram", vocab_size=1500, user_defined_symbols=["<mask>"],
            control_symbols=["<extra_id_0>"], pad_id=0, eos_id=1, unk_id=2, bos_id=-1, **common)
    else:
        spm.SentencePieceTrainer.train(
            model_type="bpe", vocab_size=2000, normalization_rule_name="nfkc", add_dummy_prefix=False,
            unk_id=0, bos_id=1, eos_id=2, pad_id=3, **common)
    os.remove(os.path.join(d, "tokenizer.vocab"))  # a checkpoint has only the model


def write_configs(name, d):
    """The config files of the directory, and the added tokens they and the model define."""
    if name == "llama_bpe":
        from transformers import LlamaTokenizer
        LlamaTokenizer.from_pretrained(d).save_pretrained(d)
        os.remove(os.path.join(d, "tokenizer.json"))  # so that RLWB reads tokenizer.model
    elif name == "t5_unigram":
        config = {
            "tokenizer_class": "T5Tokenizer", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
            "extra_ids": 0,
            "added_tokens_decoder": {
                "0": {"content": "<pad>", "special": True, "lstrip": False, "rstrip": False, "normalized": False,
                      "single_word": False},
                "1500": {"content": "<extra_id_1>", "special": True, "lstrip": False, "rstrip": True,
                         "normalized": False, "single_word": False},
            },
        }
        with open(os.path.join(d, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump(config, f, indent=2)
        with open(os.path.join(d, "special_tokens_map.json"), "w", encoding="utf-8") as f:
            json.dump({"additional_special_tokens": ["<extra_id_0>", "<extra_id_1>"]}, f, indent=2)


def added_tokens(name, sp):
    """(content, id, special, rstrip) of every added token: the model's control, unknown and user-defined
    pieces (as transformers' converter adds them), then the config's."""
    out = {}
    for i in range(sp.get_piece_size()):
        if sp.is_control(i) or sp.is_unknown(i):
            out[i] = (sp.id_to_piece(i), i, True, False)
    proto = model_proto(sp)
    for i, p in enumerate(proto.pieces):
        if p.type == p.USER_DEFINED:
            out[i] = (p.piece, i, False, False)
    if name == "llama_bpe":  # transformers saves the user-defined symbols among the special tokens
        for i, (c, _, _, r) in list(out.items()):
            out[i] = (c, i, True, r)
    if name == "t5_unigram":
        out[1500] = ("<extra_id_1>", 1500, True, True)
    return list(out.values())


def model_proto(sp):
    from sentencepiece import sentencepiece_model_pb2
    m = sentencepiece_model_pb2.ModelProto()
    m.ParseFromString(sp.serialized_model_proto())
    return m


def spm_ids(sp, tokens, text):
    """The text cut at the added tokens (leftmost, then longest), each piece between encoded alone."""
    if not tokens:
        return sp.encode(text)
    by_length = sorted(tokens, key=lambda t: -len(t[0]))
    pattern = re.compile("|".join(re.escape(t[0]) for t in by_length))
    info = {t[0]: t for t in tokens}
    ids, pos = [], 0
    for m in pattern.finditer(text):
        if m.start() < pos:  # inside white space an rstrip token took
            continue
        if m.start() > pos:
            ids += sp.encode(text[pos:m.start()])
        content, token_id, _, rstrip = info[m.group()]
        ids.append(token_id)
        pos = m.end()
        if rstrip:
            while pos < len(text) and is_white_space(text[pos]):
                pos += 1
    if pos < len(text):
        ids += sp.encode(text[pos:])
    return ids


def is_white_space(c):
    # Rust's char::is_whitespace (Unicode White_Space); Python's isspace() adds U+001C..U+001F.
    return c.isspace() and c not in "\x1c\x1d\x1e\x1f"


def hf_tokenizer(name, d, sp, tokens):
    """The HF `tokenizers` object whose decoder (and, for llama_bpe, ids) the references use."""
    from tokenizers import AddedToken, decoders, normalizers
    if name == "llama_bpe":
        from transformers import LlamaTokenizer
        tok = LlamaTokenizer.from_pretrained(d).backend_tokenizer
        # LlamaConverter.normalizer with legacy=True: every piece of text gets the dummy prefix, as in the model.
        tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
        tok.pre_tokenizer = None
        return tok
    if name == "t5_unigram":
        from transformers import T5Tokenizer
        tok = T5Tokenizer.from_pretrained(d, extra_ids=0).backend_tokenizer
        assert tok.token_to_id("<extra_id_1>") == 1500, "transformers did not read added_tokens_decoder"
        return tok
    # nfkc_bpe: no transformers class; a tokenizers object with the model's pieces and the decoder of a
    # SentencePiece BPE without dummy prefix (LlamaConverter's, less the Strip).
    from tokenizers import Tokenizer, models
    vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    tok.add_special_tokens([AddedToken(c, normalized=False, special=True) for c, _, s, _ in tokens if s])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    return tok


def main():
    out, (spm, tokenizers, transformers) = tokenizer_corpus.output_dir_and_packages(
        __doc__, "sentencepiece", "tokenizers", "transformers")
    training = tokenizer_corpus.training_lines()
    texts = tokenizer_corpus.parity_lines() + ADDED_TOKEN_LINES
    rows = [{"text": t} for t in texts]
    for name in MODELS:
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        train(name, d, training)
        write_configs(name, d)
        sp = spm.SentencePieceProcessor(model_file=os.path.join(d, "tokenizer.model"))
        tokens = added_tokens(name, sp)
        hf = hf_tokenizer(name, d, sp, tokens)
        added_ids = {t[1] for t in tokens}
        for row in rows:
            ids = spm_ids(sp, tokens, row["text"])
            ref = {"spm_ids": ids, "decoded": hf.decode(ids, skip_special_tokens=False),
                   "decoded_skip": hf.decode(ids, skip_special_tokens=True)}
            if name == "llama_bpe":
                ref["hf_ids"] = hf.encode(row["text"], add_special_tokens=False).ids
            if not any(i in added_ids for i in ids):
                ref["spm_decoded"] = sp.decode(ids)
            row[name] = ref
    with open(os.path.join(out, "sentencepiece_corpus.jsonl"), "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"sentencepiece {spm.__version__}, tokenizers {tokenizers.__version__}, transformers "
          f"{transformers.__version__}: {len(texts)} lines, models {' '.join(MODELS)}")


if __name__ == "__main__":
    main()
