#!/usr/bin/env python3
"""The reference side of bench/bench_math.cpp: Hugging Face math-verify on the
math checker's corpus (tests/rewards/math/math_corpus.jsonl).

    python bench/math_verify_ref.py CORPUS.jsonl [--passes N] [--as-written]

Prints one JSON object on stdout:
    {"checks": ..., "seconds": ..., "checks_per_second": ..., "cpu_seconds": ...,
     "checks_per_cpu_second": ..., "version": "...",
     "verdicts": [0 or 1 per corpus line, in order]}

Each check is what a user of math-verify runs: verify(parse(reference), parse(response)),
with math-verify's default settings. A text without math delimiters or a box is
wrapped in $...$ first, which is how math-verify finds a bare answer such as
"x^2+2x+1" (unwrapped, its parser finds nothing in it); --as-written passes the
responses unchanged (the math-verify-mode corpus, tests/rewards/math/compat_corpus.jsonl,
whose labels were made that way). An untimed pass over the
first 20 cases warms sympy up; then the corpus is checked --passes times (default 1) and the time of
the parse+verify calls alone is reported, with and without the cases that took
over a second (math-verify's 5 s parsing timeout). Needs: pip install math-verify (see
scripts/python-requirements.txt).
"""
import argparse
import json
import sys
import time


def as_math_verify_input(text):
    markers = ("$", "\\(", "\\[", "\\boxed", "\\fbox")
    return text if any(m in text for m in markers) else "$" + text + "$"


def main():
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("corpus")
    args.add_argument("--passes", type=int, default=1)
    args.add_argument("--as-written", action="store_true", help="do not wrap responses in $...$")
    opts = args.parse_args()
    try:
        import math_verify
        from math_verify import parse, verify
    except ImportError:
        sys.exit("math_verify_ref.py: math-verify is not installed; "
                 "run: pip install -r scripts/python-requirements.txt")
    cases = []
    with open(opts.corpus, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                c = json.loads(line)
                response = c["response"] if opts.as_written else as_math_verify_input(c["response"])
                cases.append((as_math_verify_input(c["reference"]), response))

    def check(reference, response):
        try:
            return 1 if verify(parse(reference), parse(response)) else 0
        except Exception:  # a crash on a case counts as "not equal", as a reward would
            return 0

    for r, p in cases[:20]:  # warm-up: imports, sympy's first calls
        check(r, p)
    verdicts = [0] * len(cases)
    slowest = [0.0] * len(cases)
    start = time.perf_counter()
    cpu_start = time.process_time()
    for _ in range(opts.passes):
        for i, (r, p) in enumerate(cases):
            t0 = time.perf_counter()
            verdicts[i] = check(r, p)
            slowest[i] = max(slowest[i], time.perf_counter() - t0)
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start
    checks = opts.passes * len(cases)
    # Cases that ran into math-verify's own timeouts (5 s) dominate its total;
    # report the rate without them too.
    slow = [i for i, t in enumerate(slowest) if t > 1.0]
    slow_seconds = sum(slowest[i] for i in slow) * opts.passes
    fast_checks = checks - len(slow) * opts.passes
    try:
        from importlib.metadata import version
        mv_version = version("math-verify")
    except Exception:
        mv_version = "unknown"
    json.dump({"checks": checks, "seconds": seconds, "checks_per_second": checks / seconds,
               "cpu_seconds": cpu_seconds, "checks_per_cpu_second": checks / cpu_seconds,
               "slow_cases": slow,
               "checks_per_second_without_slow": fast_checks / max(seconds - slow_seconds, 1e-9),
               "version": mv_version, "verdicts": verdicts}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
