#!/usr/bin/env python3
"""Regenerates the table of current figures at the top of bench/RESULTS.md.

Reads the JSON lines the benchmarks append through bench/bench_record.h
(bench/results.jsonl holds every recorded round), keeps the latest line of
each figure key and writes one Markdown row per key between the markers

    <!-- bench-table:begin -->  ...  <!-- bench-table:end -->

in RESULTS.md; everything outside the markers is left as it is. Usage:

    scripts/bench_table.py [--results bench/results.jsonl] [--doc bench/RESULTS.md] [--check]

--check exits 1 when the table in the file differs from what the results
give (so a stale table can fail a check) and writes nothing.
"""
import argparse
import json
import sys
from pathlib import Path

BEGIN = "<!-- bench-table:begin -->"
END = "<!-- bench-table:end -->"
HEADER = (
    "| figure | RLWB | peer or floor | ratio per pair: min / median / max (pairs) | goal | met | host "
    "| date, commit |\n|---|---:|---|---:|---|---|---|---|\n"
)


def number(v):
    """A figure as a person reads it: 3 significant digits, thousands apart."""
    if v is None:
        return "-"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def ratio_cell(line):
    r = line.get("ratio")
    if not r:
        return "-"
    pairs = len(r.get("pairs", []))

    def x(v):
        return f"{v:,.0f}x" if abs(v) >= 100 else f"{v:.2f}x"

    if pairs == 1:
        return f"{x(r['median'])} (1)"
    return f"{x(r['min'])} / {x(r['median'])} / {x(r['max'])} ({pairs})"


def met_cell(line):
    met = line.get("met")
    if met is None:
        return "-"
    return "yes" if met else "**no**"


def host_cell(line):
    cpu = line.get("host_cpu", "?")
    cores = line.get("cores", "?")
    load = line.get("load")
    load_text = f", load {load:.1f}" if isinstance(load, (int, float)) else ""
    return f"{cpu}, cores {cores}{load_text}"


def row(line):
    unit = line.get("unit", "")
    peer = line.get("peer") or "-"
    if line.get("peer_value") is not None:
        peer = f"{peer}: {number(line['peer_value'])} {unit}".strip()
    cells = [
        line.get("title") or line["figure"],
        f"{number(line.get('value'))} {unit}".strip(),
        peer,
        ratio_cell(line),
        line.get("goal") or "-",
        met_cell(line),
        host_cell(line),
        f"{line.get('date', '?')[:10]}, {line.get('commit') or '?'}",
    ]
    return "| " + " | ".join(c.replace("|", "/") for c in cells) + " |\n"


def latest_by_figure(results_path):
    latest = {}
    order = []
    with open(results_path, encoding="utf-8") as f:
        for number_, text in enumerate(f, 1):
            text = text.strip()
            if not text:
                continue
            try:
                line = json.loads(text)
            except json.JSONDecodeError as e:
                sys.exit(f"bench_table: {results_path}:{number_}: not JSON ({e}); fix or remove that line")
            key = line.get("figure")
            if not key:
                sys.exit(f"bench_table: {results_path}:{number_}: no 'figure' key")
            if key not in latest:
                order.append(key)
            latest[key] = line
    return [latest[k] for k in sorted(order)]


def table(results_path):
    lines = latest_by_figure(results_path)
    return HEADER + "".join(row(line) for line in lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="bench/results.jsonl")
    parser.add_argument("--doc", default="bench/RESULTS.md")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    doc = Path(args.doc)
    text = doc.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text or text.index(BEGIN) > text.index(END):
        sys.exit(f"bench_table: {doc} has no '{BEGIN}' ... '{END}' block; add the two markers where the table goes")
    before, rest = text.split(BEGIN, 1)
    _, after = rest.split(END, 1)
    new = before + BEGIN + "\n" + table(args.results) + END + after
    if args.check:
        sys.exit(0 if new == text else 1)
    doc.write_text(new, encoding="utf-8")


if __name__ == "__main__":
    main()
