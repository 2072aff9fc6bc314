#!/usr/bin/env python3
"""Generates tests/rewards/math/compat_corpus.jsonl: (response, reference) cases in
the answer styles of GSM8K, MATH, NuminaMath and OpenThoughts, each labelled with
math-verify's own verdict. RLWB's math-verify-compatible mode
(MathCheckOptions::compat) is measured against these labels by
tests/rewards/math/math_compat_test.cpp and bench/bench_math.cpp.

    ~/.local/share/rlwb/venv/bin/python tests/rewards/math/make_compat_corpus.py [--seed 17] [--per-style 300]

Deterministic for a seed. Each line:
    {"id": "gsm8k-0003", "style": "gsm8k", "form": "commas", "response": "...",
     "reference": "$1200$", "verdict": 1}
The reference is written in $...$ so that math-verify reads it as LaTeX (RLWB
strips the delimiters); the response is given to math-verify as written:
verify(parse(reference), parse(response)) with its default settings, the call a
user of math-verify makes. "form" names how the response writes its answer.
"""
import argparse
import json
import os
import random
import sys
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))

FILLER = [
    "First we list what is given.", "Let us set up the equation.", "We simplify step by step.",
    "Substituting back confirms the value.", "Checking the arithmetic once more.",
    "This matches the constraints of the problem.", "Combining the two cases gives the result.",
]


def frac_tex(f, cmd="\\frac"):
    sign = "-" if f < 0 else ""
    f = abs(f)
    if f.denominator == 1:
        return sign + str(f.numerator)
    return f"{sign}{cmd}{{{f.numerator}}}{{{f.denominator}}}"


def decimal_text(f, places):
    return f"{float(f):.{places}f}"


def finite_decimal(f):
    d = f.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


class Gen:
    def __init__(self, rng):
        self.r = rng

    def steps(self, n=2):
        return " ".join(self.r.sample(FILLER, n))

    # ---- GSM8K: word problems, integer answers, "#### N" -------------------
    def gsm8k(self):
        r = self.r
        a, b, c = r.randint(2, 60), r.randint(2, 30), r.randint(1, 400)
        answer = a * b + c
        work = (f"Each box holds {a} items and there are {b} boxes, so {a} * {b} = <<{a}*{b}={a*b}>>{a*b} items. "
                f"Adding the {c} loose ones gives {a*b} + {c} = <<{a*b}+{c}={answer}>>{answer}.")
        form = r.choice(["hashes", "hashes", "hashes_wrong", "answer_is", "answer_is_wrong", "last_number",
                         "last_number_wrong", "dollars", "commas", "commas_wrong", "sentence_units",
                         "boxed", "intermediate_last", "decimal_zero"])
        big = answer * (1000 if form.startswith("commas") else 1)
        wrong = answer + r.choice([-10, -2, -1, 1, 3, 7, 100])
        ref = big
        if form == "hashes":
            resp = f"{work}\n#### {answer}"
        elif form == "hashes_wrong":
            resp = f"{work}\n#### {wrong}"
        elif form == "answer_is":
            resp = f"{work} The answer is {answer}."
        elif form == "answer_is_wrong":
            resp = f"{work} The answer is {wrong}."
        elif form == "last_number":
            resp = f"{work} So in total there are {answer} items."
        elif form == "last_number_wrong":
            resp = f"{work} So in total there are {wrong} items."
        elif form == "dollars":
            resp = f"{work} She pays ${answer} in total.\n#### ${answer}"
        elif form == "commas":
            resp = f"{work} Times 1000 that is {big:,}.\n#### {big:,}"
        elif form == "commas_wrong":
            resp = f"{work} Times 1000 that is {big + 1000:,}.\n#### {big + 1000:,}"
        elif form == "sentence_units":
            resp = f"{work} Therefore, the farmer has {answer} apples left."
        elif form == "boxed":
            resp = f"{work} The answer is $\\boxed{{{answer}}}$."
        elif form == "intermediate_last":
            resp = f"{work} That is {answer} items, and {a} of them are red."
        else:  # decimal_zero
            resp = f"{work}\n#### {answer}.00"
        return form, resp, str(ref)

    # ---- MATH: Minerva-style "Final Answer: The final answer is $X$." ------
    def math_value(self):
        """(reference LaTeX, list of (form, equivalent text), list of (form, wrong text))."""
        r = self.r
        kind = r.choice(["fraction", "fraction", "integer", "sqrt", "pi", "interval", "tuple", "poly",
                         "decimal", "text", "negative"])
        if kind in ("fraction", "negative"):
            f = Fraction(r.randint(1, 40), r.randint(2, 24))
            if f.denominator == 1:
                f += Fraction(1, 2)
            if kind == "negative":
                f = -f
            k = r.randint(2, 4)
            eq = [("dfrac", frac_tex(f, "\\dfrac")),
                  ("unreduced", f"{'-' if f < 0 else ''}\\frac{{{abs(f.numerator) * k}}}{{{f.denominator * k}}}"),
                  ("slash", f"{f.numerator}/{f.denominator}")]
            if finite_decimal(f):
                eq.append(("decimal", str(float(f))))
            else:
                eq.append(("decimal6", decimal_text(f, 6)))
                eq.append(("decimal2", decimal_text(f, 2)))
            wrong = [("off_by_one", frac_tex(f + 1)), ("reciprocal", frac_tex(1 / f)), ("sign", frac_tex(-f))]
            return frac_tex(f), eq, wrong
        if kind == "integer":
            n = r.randint(-50, 999)
            eq = [("same", str(n)), ("trailing_zero", f"{n}.0"), ("text_unit", f"{n}\\text{{ units}}")]
            if n > 1:
                eq.append(("power_written", f"{n}^{{1}}"))
            return str(n), eq, [("off_by_one", str(n + 1)), ("digits_swapped", str(n)[::-1] + "1")]
        if kind == "sqrt":
            a, b = r.randint(2, 9), r.choice([2, 3, 5, 6, 7, 10, 11])
            eq = [("same", f"{a}\\sqrt{{{b}}}"), ("unsimplified", f"\\sqrt{{{a * a * b}}}"),
                  ("no_braces", f"{a}\\sqrt{b}"), ("decimal6", f"{a * b ** 0.5:.6f}")]
            return f"{a}\\sqrt{{{b}}}", eq, [("other_root", f"{a}\\sqrt{{{b + 1}}}"),
                                             ("decimal2", f"{a * b ** 0.5:.2f}")]
        if kind == "pi":
            f = Fraction(r.randint(1, 9), r.choice([1, 2, 3, 4, 6]))
            ref = (frac_tex(f).replace("}{", "\\pi}{", 1) if f.denominator > 1 else
                   ("" if f == 1 else str(f.numerator)) + "\\pi")
            eq = [("same", ref), ("product", f"{frac_tex(f)}\\pi" if f.denominator > 1 else ref),
                  ("decimal6", f"{float(f) * 3.141592653589793:.6f}")]
            return ref, eq, [("decimal2", f"{float(f) * 3.141592653589793:.2f}"),
                             ("double", frac_tex(2 * f) + "\\pi")]
        if kind == "interval":
            lo, hi = sorted(r.sample(range(-9, 10), 2))
            lb, rb = r.choice("[("), r.choice("])")
            ref = f"{lb}{lo},{hi}{rb}"
            eq = [("same", ref), ("spaced", f"\\left{lb} {lo}, {hi} \\right{rb}")]
            flip = ("(" if lb == "[" else "[") + f"{lo},{hi}{rb}"
            return ref, eq, [("other_bracket", flip), ("shifted", f"{lb}{lo},{hi + 1}{rb}")]
        if kind == "tuple":
            xs = [r.randint(-9, 9) for _ in range(r.choice([2, 3]))]
            ref = "(" + ",".join(map(str, xs)) + ")"
            eq = [("same", ref), ("spaced", "\\left(" + ", ".join(map(str, xs)) + "\\right)")]
            wrong = [("changed", "(" + ",".join(map(str, xs[:-1] + [xs[-1] + 1])) + ")")]
            if xs[0] != xs[1]:
                wrong.append(("reordered", "(" + ",".join(map(str, [xs[1], xs[0]] + xs[2:])) + ")"))
            return ref, eq, wrong
        if kind == "poly":
            a, b = r.randint(1, 6), r.randint(1, 9)
            ref = f"x^2+{a + b}x+{a * b}"
            eq = [("same", ref), ("factored", f"(x+{a})(x+{b})"), ("reordered", f"{a * b}+{a + b}x+x^2")]
            return ref, eq, [("changed", f"x^2+{a + b}x+{a * b + 1}"), ("factored_wrong", f"(x+{a})(x-{b})")]
        if kind == "decimal":
            v = r.randint(1, 999) / 100
            return str(v), [("same", str(v)), ("fraction", frac_tex(Fraction(str(v))))], \
                [("changed", str(round(v + 0.01, 2)))]
        words = ["\\text{Tuesday}", "\\text{(B)}", "\\text{even}"]
        ref = r.choice(words)
        return ref, [("same", ref)], [("other", r.choice([w for w in words if w != ref]))]

    def math(self):
        ref, eq, wrong = self.math_value()
        form, ans = self.r.choice(eq) if self.r.random() < 0.6 else self.r.choice(wrong)
        resp = f"{self.steps()}\nFinal Answer: The final answer is ${ans}$. I hope it is correct."
        return "minerva_" + form + ("" if (form, ans) in eq else "_wrong"), resp, ref

    # ---- NuminaMath: a worked solution ending in \boxed{} -----------------
    def numina(self):
        r = self.r
        if r.random() < 0.55:
            ref, eq, wrong = self.math_value()
            pick_eq = r.random() < 0.6
            form, ans = r.choice(eq) if pick_eq else r.choice(wrong)
            ending = r.choice(["Thus, the answer is $\\boxed{%s}$.", "$$\\boxed{%s}$$", "Hence \\boxed{%s}."])
            return "boxed_" + form + ("" if pick_eq else "_wrong"), f"{self.steps(3)}\n" + ending % ans, ref
        kind = r.choice(["choice", "matrix", "set", "assignment", "inequality", "percent", "no_box"])
        if kind == "choice":
            letter = r.choice("ABCD")
            ans = r.choice([letter, f"\\text{{{letter}}}", f"\\textbf{{({letter})}}", f"({letter})",
                            r.choice([c for c in "ABCD" if c != letter])])
            return "choice", f"{self.steps(2)} The correct option is $\\boxed{{{ans}}}$", f"\\text{{{letter}}}"
        if kind == "matrix":
            m = [[r.randint(-5, 9) for _ in range(2)] for _ in range(2)]
            body = lambda rows: "\\\\".join("&".join(map(str, row)) for row in rows)
            ref = f"\\begin{{pmatrix}}{body(m)}\\end{{pmatrix}}"
            style = r.choice(["pmatrix", "bmatrix", "array", "changed"])
            if style == "pmatrix":
                ans = ref
            elif style == "bmatrix":
                ans = f"\\begin{{bmatrix}}{body(m)}\\end{{bmatrix}}"
            elif style == "array":
                ans = f"\\left[\\begin{{array}}{{cc}}{body(m)}\\end{{array}}\\right]"
            else:
                m2 = [row[:] for row in m]
                m2[1][1] += 1
                ans = f"\\begin{{pmatrix}}{body(m2)}\\end{{pmatrix}}"
            return "matrix_" + style, f"{self.steps(2)}\n$$\\boxed{{{ans}}}$$", ref
        if kind == "set":
            xs = sorted(r.sample(range(-9, 10), r.choice([2, 3])))
            ref = "\\{" + ",".join(map(str, xs)) + "\\}"
            style = r.choice(["same", "reordered", "bare", "missing"])
            ys = {"same": xs, "reordered": xs[::-1], "bare": xs, "missing": xs[:-1]}[style]
            ans = ", ".join(map(str, ys)) if style == "bare" else "\\{" + ", ".join(map(str, ys)) + "\\}"
            return "set_" + style, f"{self.steps(2)} The solutions are $\\boxed{{{ans}}}$.", ref
        if kind == "assignment":
            v = r.randint(-20, 20)
            var = r.choice("xyn")
            style = r.choice(["same", "wrong"])
            ans = f"{var} = {v if style == 'same' else v + 2}"
            return "assignment_" + style, f"{self.steps(2)} Solving, $\\boxed{{{ans}}}$.", str(v)
        if kind == "inequality":
            c = r.randint(-9, 9)
            op, bracket = r.choice([(">", "("), ("\\geq", "[")])
            ref = f"{bracket}{c},\\infty)"
            style = r.choice(["interval", "inequality", "wrong"])
            ans = {"interval": ref, "inequality": f"x {op} {c}", "wrong": f"({c + 1},\\infty)"}[style]
            return "inequality_" + style, f"{self.steps(2)} Therefore $\\boxed{{{ans}}}$.", ref
        if kind == "percent":
            p = r.randint(1, 99)
            style = r.choice(["same", "sign", "fraction"])
            ans = {"same": str(p), "sign": f"{p}\\%", "fraction": str(p / 100)}[style]
            return "percent_" + style, f"{self.steps(2)} The rate is $\\boxed{{{ans}}}$.", str(p)
        f = Fraction(r.randint(1, 30), r.randint(2, 12))
        style = r.choice(["last_latex", "last_latex_wrong", "last_number"])
        if style == "last_latex":
            resp = f"{self.steps(2)} Dividing, we get $x = 2$ and finally the ratio is ${frac_tex(f)}$."
        elif style == "last_latex_wrong":
            resp = f"{self.steps(2)} The ratio is ${frac_tex(f)}$, which we double to ${frac_tex(2 * f)}$."
        else:
            n = r.randint(10, 99)
            resp = f"{self.steps(2)} Counting the cases, there are {n} of them."
            return "no_box_last_number", resp, str(n)
        return "no_box_" + style, resp, frac_tex(f)

    # ---- OpenThoughts: <think> ... </think> then **Final Answer** ----------
    def openthoughts(self):
        r = self.r
        think = f"<think>\nOkay, let me see. {self.steps(3)} Wait, let me double-check that. {self.steps(2)}\n</think>\n\n"
        kind = r.choice(["plain", "plain", "several_boxes", "or_union", "labelled", "unevaluated", "unevaluated",
                         "tuple_assignment"])
        if kind == "plain":
            ref, eq, wrong = self.math_value()
            pick_eq = r.random() < 0.6
            form, ans = r.choice(eq) if pick_eq else r.choice(wrong)
            return "final_" + form + ("" if pick_eq else "_wrong"), \
                f"{think}**Final Answer**\n\\[\n\\boxed{{{ans}}}\n\\]", ref
        if kind == "several_boxes":
            xs = sorted(r.sample(range(-9, 12), 2))
            style = r.choice(["both", "one_wrong", "only_one"])
            ys = {"both": xs, "one_wrong": [xs[0], xs[1] + 1], "only_one": xs[:1]}[style]
            boxes = " and ".join(f"\\boxed{{{y}}}" for y in ys)
            return "boxes_" + style, f"{think}**Final Answer**\nThe solutions are {boxes}.", \
                ", ".join(map(str, xs))
        if kind == "or_union":
            xs = sorted(r.sample(range(-9, 12), 2))
            style = r.choice(["or", "and", "wrong"])
            if style == "wrong":
                ans = f"x = {xs[0]} \\text{{ or }} x = {xs[1] + 1}"
            else:
                ans = f"x = {xs[0]} \\text{{ {style} }} x = {xs[1]}"
            return "union_" + style, f"{think}**Final Answer**\n$\\boxed{{{ans}}}$", ", ".join(map(str, xs))
        if kind == "labelled":
            xs = [r.randint(-9, 9) for _ in range(2)]
            style = r.choice(["same", "wrong"])
            ys = xs if style == "same" else [xs[0], xs[1] + 1]
            ans = f"a = {ys[0]}, b = {ys[1]}"
            return "labelled_" + style, f"{think}**Final Answer**\n\\boxed{{{ans}}}", \
                "(" + ", ".join(map(str, xs)) + ")"
        if kind == "tuple_assignment":
            xs = [r.randint(-9, 9) for _ in range(2)]
            style = r.choice(["same", "wrong"])
            ys = xs if style == "same" else [xs[0] + 1, xs[1]]
            return "tuple_assignment_" + style, \
                f"{think}**Final Answer**\n\\boxed{{(x, y) = ({ys[0]}, {ys[1]})}}", f"({xs[0]},{xs[1]})"
        exprs = [("2^{%d}" % k, 2 ** k) for k in range(3, 13)] + \
                [("%d!" % k, [1, 1, 2, 6, 24, 120, 720, 5040][k]) for k in range(3, 8)] + \
                [("\\binom{%d}{%d}" % (n, k), __import__("math").comb(n, k)) for n in range(4, 10) for k in (2, 3)] + \
                [("\\log_2 %d" % (2 ** k), k) for k in range(2, 8)] + \
                [("\\log_{3} %d" % (3 ** k), k) for k in range(2, 5)] + \
                [("%d \\cdot %d" % (a, b), a * b) for a, b in [(6, 7), (12, 11), (8, 9)]]
        text, value = r.choice(exprs)
        style = r.choice(["equal", "equal", "wrong"])
        ref = str(value if style == "equal" else value + 1)
        return "unevaluated_" + style, f"{think}**Final Answer**\n\\[\n\\boxed{{{text}}}\n\\]", ref


def label(reference, response):
    from math_verify import parse, verify
    try:
        return 1 if verify(parse(reference), parse(response)) else 0
    except Exception:  # as a reward would: a crash is "not equal"
        return 0


def main():
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--seed", type=int, default=17)
    args.add_argument("--per-style", type=int, default=300)
    args.add_argument("--out", default=os.path.join(HERE, "compat_corpus.jsonl"))
    opts = args.parse_args()
    try:
        import math_verify  # noqa: F401
    except ImportError:
        sys.exit("make_compat_corpus.py: math-verify is not installed in this interpreter; run it with "
                 "~/.local/share/rlwb/venv/bin/python (pip install -r scripts/python-requirements.txt)")
    gen = Gen(random.Random(opts.seed))
    styles = [("gsm8k", gen.gsm8k), ("math", gen.math), ("numina", gen.numina), ("openthoughts", gen.openthoughts)]
    seen = set()
    rows = []
    for style, make in styles:
        made = 0
        while made < opts.per_style:
            form, response, reference = make()
            key = (response, reference)
            if key in seen:
                continue
            seen.add(key)
            reference = f"${reference}$"
            rows.append({"id": f"{style}-{made:04d}", "style": style, "form": form, "response": response,
                         "reference": reference, "verdict": label(reference, response)})
            made += 1
    with open(opts.out, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    accepted = sum(r["verdict"] for r in rows)
    print(f"wrote {len(rows)} cases ({accepted} accepted by math-verify) to {opts.out}")


if __name__ == "__main__":
    main()
