"""The reference side of tokenizer_parity_test.cpp.

  tokenizer_corpus.py OUT

trains small byte-level BPE tokenizers offline with the Hugging Face
`tokenizers` package, in the styles of GPT-2, Qwen2 and Llama 3 (their
pre-tokenizer patterns, normalizers, decoders, post-processors and special
tokens) and two that exercise the rest of what RLWB supports (added-token
flags, every Split behavior, a Sequence normalizer), saves each as
OUT/<style>/tokenizer.json, and writes OUT/corpus.jsonl: one JSON object per
line of a corpus generated here deterministically (many scripts, emoji,
combining marks, digits of several scripts, white space of every kind,
special tokens inside text, contractions), with the ids and decodings each
tokenizer, reloaded from its file, gives for it.
"""
import importlib
import json
import os
import random
import sys
import unicodedata

# The pre-tokenizer patterns of the real tokenizer.json files.
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
                 r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
LLAMA3_PATTERN = QWEN2_PATTERN.replace(r"\p{N}|", r"\p{N}{1,3}|")

QWEN2_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
LLAMA3_SPECIALS = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
                   "<|eot_id|>", "<|reserved_special_token_0|>"]
FLAG_TOKENS = ["<mask>", "[SW]", "<rs>", "<both>", "café", "ﬁne", "<tool_call>"]

# ---------------------------------------------------------------------------
# The corpus

WORDS = {
    "latin": ["café", "naïve", "Ångström", "façade", "jalapeño", "Straße", "Größe", "über", "déjà", "vu",
              "crème", "brûlée", "Łódź", "Kraków", "żółw", "Dvořák", "Tiếng", "Việt", "phở", "Ærøskøbing",
              "smörgåsbord", "coöperate", "résumé", "São", "Paulo", "İstanbul", "ıi", "ŒUVRE", "œuvre",
              "fjörður", "Þingvellir", "hello", "world", "The", "quick", "brown", "fox"],
    "cyrillic": ["Привет", "мир", "ёжик", "Ёлка", "съешь", "ещё", "этих", "мягких", "французских", "булок",
                 "Україна", "їжак", "ґанок", "Србија", "Љубав", "Џеп"],
    "greek": ["Καλημέρα", "κόσμε", "ΑΒΓΔ", "ψυχή", "ἀρετή", "Ὀδυσσεύς", "ΐ", "ς", "σοφία", "ΣΟΦΟΣ"],
    "arabic": ["مرحبا", "بالعالم", "اللغة", "العربية", "كِتَابٌ", "سلامٌ", "عليكم", "فارسی", "اردو"],
    "hebrew": ["שלום", "עולם", "עִבְרִית", "ירושלים", "בְּרֵאשִׁית"],
    "devanagari": ["नमस्ते", "दुनिया", "हिन्दी", "संस्कृतम्", "क्षत्रिय", "ज्ञान", "मराठी"],
    "cjk": ["你好世界", "中文字符", "日本語のテキスト", "ひらがな", "カタカナ", "漢字かな交じり文", "東京都",
            "繁體中文", "简体中文", "ｶﾀｶﾅ", "〇一二三", "々", "北京大学"],
    "thai": ["สวัสดีครับ", "ภาษาไทย", "กรุงเทพมหานคร", "น้ำ", "ผู้หญิง"],
    "hangul": ["안녕하세요", "한국어", "세계", "대한민국", "훈민정음", "ㄱㄴㄷ"],
    "other": ["Հայերեն", "ქართული", "አማርኛ", "ᏣᎳᎩ", "ᠮᠣᠩᠭᠣᠯ", "བོད་ཡིག", "தமிழ்", "తెలుగు", "ಕನ್ನಡ",
              "മലയാളം", "বাংলা", "ਪੰਜਾਬੀ", "ગુજરાતી", "සිංහල", "ພາສາລາວ", "ភាសាខ្មែរ", "မြန်မာ"],
}
EMOJI = ["😀", "😂", "🙂", "👍", "👍🏽", "👋🏿", "👩‍💻", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇫🇷", "🇯🇵", "1️⃣", "❤️",
         "✨", "🧑🏾‍🚀", "☕", "🤷‍♀️", "🙋🏻‍♂️", "🐍", "🔥🔥🔥", "©", "™", "↔️"]
COMBINING = ["e\u0301", "a\u0308", "n\u0303", "o\u0302\u0323", "A\u030a", "c\u0327", "i\u0307\u0301",
             "\u1100\u1161\u11a8", "\u0915\u094d\u0937", "Z\u0351\u0352\u0353", "x\u20dd", "\u0301lone"]
DIGITS = ["0123456789", "12345", "3.14159", "1,000,000", "2024-05-17", "٠١٢٣٤٥٦٧٨٩", "۰۱۲۳۴۵۶۷۸۹",
          "०१२३४५६७८९", "০১২৩৪৫৬৭৮৯", "๐๑๒๓๔๕๖๗๘๙", "１２３４５", "²³¹", "½¾", "ⅫⅣ", "①②③", "𝟘𝟙𝟚",
          "0x1F600", "1e-9", "42", "7"]
CONTRACTIONS = ["it's", "IT'S", "It'S", "we've", "WE'VE", "they'll", "THEY'LL", "I'm", "I'M", "you'd",
                "YOU'D", "we're", "WE'RE", "don't", "DON'T", "can't", "y'all", "'s", "'S", "'tis", "ma'am",
                "rock'n'roll", "it’s", "l'été", "O'Neil", "'ll", "x'ſ", "'Re", "'vE"]
PUNCT = [".", ",", "!", "?", "...", "—", "–", "«", "»", "„", "“", "”", "‘", "’", "¿", "¡", "、", "。", "！",
         "（", "）", "【", "】", "@", "#", "$", "%", "^", "&", "*", "(", ")", "[", "]", "{", "}", "<", ">",
         "/", "\\", "|", "~", "`", "+=", "->", "=>", "::", "!=", "<=", "§", "¶", "•", "…", "€", "£", "¥", "₹"]
SPACES = [" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\r", " \n", "\n ", "\u00a0", "\u3000",
          "\u2003", "\u2009", "\u202f", "\u0085", "\u2028", "\u000b", "\u000c", "\u180e", "\u200b", "\ufeff"]
CODE = ["def f(x):\n    return x * 2\n", "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}",
        "if x == 1:\n        pass\r\n", "SELECT * FROM t WHERE id = 42;", "https://example.com/a?b=c&d=e",
        "user@example.org", "#include <stdio.h>", "λx.x", "x_1 + y_2 = z__3", "__init__", "$HOME/.config",
        "<div class=\"a\">text</div>", "a\\nb", "\"quoted\" 'single'", "f'{x!r}'"]


def special_tokens_in_text(rng):
    tok = rng.choice(QWEN2_SPECIALS + LLAMA3_SPECIALS + FLAG_TOKENS + ["<|endoftext|", "<|im_sta", "<|"])
    return rng.choice(["", " ", "\n", "x"]) + tok + rng.choice(["", " ", "  ", "\n", "y"])


def fragment(rng):
    kind = rng.choice(["latin", "cyrillic", "greek", "arabic", "hebrew", "devanagari", "cjk", "thai", "hangul",
                       "other", "emoji", "combining", "digits", "contraction", "punct", "code", "special",
                       "latin", "mixed"])
    if kind in WORDS:
        return " ".join(rng.choice(WORDS[kind]) for _ in range(rng.randint(1, 5)))
    if kind == "emoji":
        return "".join(rng.choice(EMOJI) for _ in range(rng.randint(1, 4)))
    if kind == "combining":
        return rng.choice(COMBINING) + rng.choice(["", "s", " ", rng.choice(COMBINING)])
    if kind == "digits":
        return rng.choice(DIGITS) + rng.choice(["", " ", "%", "km", rng.choice(DIGITS)])
    if kind == "contraction":
        return rng.choice(CONTRACTIONS) + rng.choice(["", " ", "s", "!"])
    if kind == "punct":
        return "".join(rng.choice(PUNCT) for _ in range(rng.randint(1, 3)))
    if kind == "code":
        return rng.choice(CODE)
    if kind == "special":
        return special_tokens_in_text(rng)
    return rng.choice(WORDS["latin"]) + rng.choice(PUNCT) + rng.choice(WORDS[rng.choice(list(WORDS))])


def line(rng):
    parts = []
    for _ in range(rng.randint(1, 8)):
        parts.append(fragment(rng))
        parts.append(rng.choice(SPACES) if rng.random() < 0.35 else " ")
    text = "".join(parts[:-1])
    r = rng.random()
    if r < 0.05:
        text = " " * rng.randint(10, 80) + text  # a long leading run
    elif r < 0.10:
        text = text + " " * rng.randint(1, 30)  # trailing spaces
    elif r < 0.13:
        text = text + rng.choice(["\t" * rng.randint(2, 12), "\n" * rng.randint(2, 6), "\r\n\r\n"])
    elif r < 0.18:
        text = unicodedata.normalize("NFD", text)  # decomposed
    elif r < 0.20:
        text = unicodedata.normalize("NFKD", text)
    elif r < 0.23:
        text = text.upper()
    return text


EDGE_CASES = [
    "", " ", "  ", "\n", "\r\n", "\t", "a", "'", "''", "'s", " 's", "a's", "A'S", "\u00a0\u00a0x",
    " " * 300, "x" + " " * 257 + "y", "\n" * 40, "\t \t \n \r\n", "word   \n   word", "trailing   ",
    "<|endoftext|>", "<|endoftext|><|endoftext|>", "a<|endoftext|>b", " <|im_start|> ", "<|im_start|>user\nHi"
    "<|im_end|>\n<|im_start|>assistant\n", "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi"
    "<|eot_id|>", "<mask>", "  <mask>  ", "x<mask>", "[SW]", "a[SW]", "a [SW] b", "[SW]_", "é[SW]", "<rs>   x",
    "\t<both>\n y", "café", "cafe\u0301", "ﬁne", "fine", "ﬁne-tuning", "x<tool_call>y", "<|im_sta", "<|",
    "1234567890", "١٢٣٤٥", "12 345 678", "3.14", "९८७", "👨‍👩‍👧‍👦👨‍👩‍👧‍👦", "👍🏽👍🏾👍🏿", "🇫🇷🇩🇪🇯🇵",
    "e\u0301\u0301\u0301", "\u0301", "\u200d", "\ufeffBOM", "I'M HERE, YOU'RE THERE, WE'LL SEE, THEY'D GO",
    "Ｆｕｌｌｗｉｄｔｈ　ｔｅｘｔ", "ｶﾞｷﾞｸﾞ", "Ⅻ o'clock", "x²+y²=z²", "½ cup", "µ ÅΩ",
]


def corpus(seed, n):
    rng = random.Random(seed)
    return [line(rng) for _ in range(n)]


def training_lines():
    """What the tokenizers are trained on (sentencepiece_corpus.py trains on it too)."""
    return corpus(seed=1, n=4000)


def parity_lines():
    """The lines the parity tests compare: the edge cases, then 10,000 generated lines."""
    return EDGE_CASES + corpus(seed=17, n=10000)


# ---------------------------------------------------------------------------
# The tokenizers

def build(style, training):
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers
    from tokenizers import processors, trainers

    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    specials = ["<|endoftext|>"]
    model = models.BPE()
    tok = None
    if style == "gpt2":
        tok = Tokenizer(model)
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    elif style == "qwen2":
        tok = Tokenizer(model)
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False), byte_level])
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
        specials = QWEN2_SPECIALS
    elif style == "llama3":
        tok = Tokenizer(models.BPE(ignore_merges=True))
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False), byte_level])
        specials = LLAMA3_SPECIALS
    elif style == "flags":  # RoBERTa-like prefix space, NFKC, added tokens with every flag
        tok = Tokenizer(model)
        tok.normalizer = normalizers.NFKC()
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=True)
        specials = ["<|endoftext|>", AddedToken("<mask>", lstrip=True, special=True),
                    AddedToken("<both>", lstrip=True, rstrip=True, special=True)]
    elif style == "behaviors":  # every Split behavior, a String pattern, a Sequence normalizer
        tok = Tokenizer(model)
        tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.NFC()])
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(r"\s+"), behavior="merged_with_next"),
            pre_tokenizers.Split(Regex(r"\p{P}"), behavior="contiguous"),
            pre_tokenizers.Split(Regex(r"\p{N}"), behavior="merged_with_previous"),
            pre_tokenizers.Split("--", behavior="removed"),
            pre_tokenizers.Split(Regex(r"\w+"), behavior="isolated", invert=True),
            pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=3000, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(training, trainer=trainer)
    if style == "llama3":
        bos = tok.token_to_id("<|begin_of_text|>")
        tok.post_processor = processors.TemplateProcessing(
            single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B",
            special_tokens=[("<|begin_of_text|>", bos)])
    if style == "qwen2":
        tok.add_tokens([AddedToken("<tool_call>", normalized=False, special=False)])
    if style == "flags":
        tok.add_tokens([AddedToken("[SW]", single_word=True), AddedToken("<rs>", rstrip=True),
                        AddedToken("café", normalized=True), AddedToken("ﬁne", normalized=True),
                        AddedToken("<tool_call>", normalized=False, special=False)])
    return tok


def output_dir_and_packages(doc, *names):
    """The OUT argument and the reference packages named, imported; exits saying what to do otherwise."""
    if len(sys.argv) != 2:
        sys.exit(doc)
    try:
        modules = [importlib.import_module(n) for n in names]
    except ImportError as e:
        sys.exit(f"cannot import {' / '.join(names)}: install the pinned reference packages "
                 f"(scripts/setup.sh, or pip install -r scripts/python-requirements.txt) [{e}]")
    return sys.argv[1], modules


def main():
    out, _ = output_dir_and_packages(__doc__, "tokenizers")
    from tokenizers import Tokenizer
    training = training_lines()
    texts = parity_lines()
    styles = ["gpt2", "qwen2", "llama3", "flags", "behaviors"]
    rows = [{"text": t} for t in texts]
    for style in styles:
        d = os.path.join(out, style)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "tokenizer.json")
        build(style, training).save(path)
        tok = Tokenizer.from_file(path)  # what the file says, as RLWB reads it
        encodings = tok.encode_batch(texts, add_special_tokens=False)
        ids = [e.ids for e in encodings]
        kept = tok.decode_batch(ids, skip_special_tokens=False)
        skipped = tok.decode_batch(ids, skip_special_tokens=True)
        for row, i, k, s in zip(rows, ids, kept, skipped):
            row[style] = {"ids": i, "decoded": k, "decoded_skip": s}
    with open(os.path.join(out, "corpus.jsonl"), "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    import tokenizers
    print(f"tokenizers {tokenizers.__version__}: {len(texts)} lines, styles {' '.join(styles)}")


if __name__ == "__main__":
    main()
