#!/usr/bin/env python3
"""Draws bench_grpo_scaling's curves: one log-log PNG per axis, step time
against the axis value, RLWB beside TRL, each with its fitted exponent.

    plot_scaling.py scaling.csv OUT_DIR

matplotlib comes from scripts/python-requirements.txt.
"""
import csv
import math
import sys
from collections import defaultdict


def slope(xs, ys):
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y > 0]
    if len(pts) < 2:
        return float("nan")
    n = len(pts)
    sx = sum(a for a, _ in pts)
    sy = sum(b for _, b in pts)
    sxx = sum(a * a for a, _ in pts)
    sxy = sum(a * b for a, b in pts)
    d = n * sxx - sx * sx
    return (n * sxy - sx * sy) / d if d else float("nan")


LABELS = {
    "prompts": "prompts per step (x 8 samples)",
    "response": "response tokens at most",
    "hidden": "hidden size",
    "layers": "layers",
    "dp": "data-parallel ranks",
}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    rows = defaultdict(list)
    with open(sys.argv[1], newline="") as f:
        for r in csv.DictReader(f):
            rows[r["axis"]].append(r)
    for axis, points in rows.items():
        fig, ax = plt.subplots(figsize=(5, 3.6), dpi=110)
        for side, column, style in (("RLWB", "rlwb_step_s", "o-"), ("TRL", "trl_step_s", "s--")):
            got = [(float(p["x"]), float(p[column])) for p in points if p[column]]
            if not got:
                continue
            xs, ys = zip(*got)
            ax.plot(xs, [y * 1e3 for y in ys], style, label=f"{side} (exponent {slope(xs, ys):.2f})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        # The measured points as the x ticks, in plain numbers.
        ticks = sorted({float(p["x"]) for p in points})
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"{t:g}" if t >= 10 else f"{t:.3g}" for t in ticks])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.yaxis.set_minor_formatter(matplotlib.ticker.ScalarFormatter())
        ax.set_xlabel(LABELS.get(axis, axis))
        ax.set_ylabel("GRPO step, ms")
        ax.set_title(f"step time vs {axis}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(f"{sys.argv[2]}/scaling_{axis}.png")
        plt.close(fig)


if __name__ == "__main__":
    main()
