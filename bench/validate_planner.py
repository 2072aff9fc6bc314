"""The planner's simulated step against the step measured on this machine.

For the default (grpo) and the ppo experiment, plans the models on 2, 3
and 4 CPU worker processes with this machine's calibrated profile
(`rlwb plan --calibrate` first), writes several of the plans with
`rlwb plan --write --pick K`, runs each for a few steps with `rlwb run`
(no warm start, no evaluation), and prints simulated vs measured step time
(the median of `perf/time_per_step` after the first step) with the error
of each, then Spearman's rank correlation over each experiment's runs and
over all. By default the plans run for a device count are spread over the
planner's ranking, best to worst (--choose spread): the cost model's job is
to order placements that differ; its best few on 2-4 CPU workers are
near-ties whose measured order is the runs' noise (--choose top runs them). The plans run in interleaved rounds (--rounds, default 3) and
each plan's figure is the median of its rounds. Results are numbers to put in bench/RESULTS.md; the machine's
load during the runs changes them (printed with them).

  python3 bench/validate_planner.py --rlwb build/app/rlwb [--profile this-host | --calibrate]
      [--steps 5] [--plans-per-count 3] [--experiments grpo.yaml,ppo.yaml]
"""
import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXPERIMENTS = os.path.join(HERE, "..", "experiments")


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2.0
        i = j + 1
    return out


def spearman(xs, ys):
    if len(xs) < 2:
        return float("nan")
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return num / den if den else float("nan")


def chosen_plans(count, wanted, how):
    """Which of the planner's ranked plans (1-based) to run: the first
    `wanted` (top), or `wanted` spread evenly from the best to the worst
    (spread)."""
    if count <= wanted:
        return list(range(1, count + 1))
    if how == "top" or wanted == 1:
        return list(range(1, wanted + 1))
    return sorted({1 + round(i * (count - 1) / (wanted - 1)) for i in range(wanted)})


def run(cmd, **kw):
    result = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), result.stdout[-2000:], result.stderr[-2000:]))
    return result.stdout


def measured_step(db, skip_first=True):
    con = sqlite3.connect(db)
    row = con.execute("SELECT max(id) FROM runs").fetchone()
    values = [v for (s, v) in con.execute(
        "SELECT step, value FROM metrics WHERE run_id = ? AND key = 'perf/time_per_step' ORDER BY step",
        (row[0],))]
    con.close()
    if skip_first and len(values) > 1:
        values = values[1:]
    return statistics.median(values), len(values)


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rlwb", default=os.path.join(HERE, "..", "build", "app", "rlwb"))
    ap.add_argument("--profile", default="this-host")
    ap.add_argument("--calibrate", action="store_true",
                    help="first calibrate each experiment into a profile of its own (validate-<name>): the "
                         "matmul rate at its model's shapes and what its calls cost whatever their rows")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--plans-per-count", type=int, default=3)
    ap.add_argument("--choose", choices=["spread", "top"], default="spread",
                    help="which plans to run for each device count: spread from the planner's best to its worst "
                         "(a ranking is tested over placements that differ), or its best ones only (near-ties "
                         "on this machine, whose order is the runs' noise)")
    ap.add_argument("--counts", default="2,3,4")
    ap.add_argument("--experiments", default="grpo.yaml,ppo.yaml")
    ap.add_argument("--rounds", type=int, default=3,
                    help="each plan runs once a round, the rounds interleaved; its figure is the median")
    args = ap.parse_args()
    args.rlwb = os.path.abspath(args.rlwb)
    overrides = ["~trainer.warm_start", "~trainer.eval", "trainer.steps=%d" % args.steps]
    work = tempfile.mkdtemp(prefix="rlwb-plan-validate-")
    rows = []
    for experiment in args.experiments.split(","):
        path = os.path.join(EXPERIMENTS, experiment)
        profile = args.profile
        if args.calibrate:
            profile = "validate-" + experiment[:-5]
            run([args.rlwb, "plan", "--calibrate", path, "--device-profile", profile])
        for count in [int(c) for c in args.counts.split(",")]:
            base = [args.rlwb, "plan", path] + overrides + [
                "--devices", str(count), "--device-profile", profile]
            listing = json.loads(run(base + ["--top", "1000", "--json"]))
            for pick in chosen_plans(len(listing["plans"]), args.plans_per_count, args.choose):
                plan = listing["plans"][pick - 1]
                graph = os.path.join(work, "%s-%d-%d.yaml" % (experiment[:-5], count, pick))
                run(base + ["--top", str(pick), "--pick", str(pick), "--write", graph, "--json"])
                rows.append({"experiment": experiment, "devices": count, "placement": plan["placement"],
                             "layouts": {name: "dp%d tp%d" % (m["dp"], m["tp"])
                                         for s in plan["sets"] for name, m in s["models"].items()},
                             "simulated": plan["step_seconds"], "graph": graph, "runs": [], "loads": []})
    # Interleaved rounds: a change of the machine's load hits every plan alike.
    for round_index in range(args.rounds):
        for r in rows:
            db = os.path.join(work, "runs.db")
            load_before = loadavg()
            done = subprocess.run([args.rlwb, "run", r["graph"], "--db", db], cwd=work, capture_output=True,
                                  text=True)
            if done.returncode != 0:  # e.g. workers starved of CPU past their heartbeat deadline
                print("round %d  %s: the run failed, left out: %s" % (
                    round_index + 1, r["graph"], done.stderr.strip().splitlines()[-1:]), flush=True)
                continue
            r["runs"].append(measured_step(db)[0])
            r["loads"].append((load_before + loadavg()) / 2)
            print("round %d  %-10s %d  %-32s sim %7.3f s  meas %7.3f s  (load %.1f)" % (
                round_index + 1, r["experiment"], r["devices"], r["placement"], r["simulated"], r["runs"][-1],
                r["loads"][-1]), flush=True)
    rows = [r for r in rows if r["runs"]]
    for r in rows:
        r["measured"] = statistics.median(r["runs"])
        r["load"] = statistics.mean(r["loads"])
    print()
    print("| experiment | workers | placement | layouts | simulated (s) | measured (s) | error | load |")
    print("|---|---:|---|---|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %d | %s | %s | %.3f | %.3f | %+.1f%% | %.1f |" % (
            r["experiment"], r["devices"], r["placement"], ", ".join("%s %s" % kv for kv in sorted(r["layouts"].items())),
            r["simulated"], r["measured"], 100 * (r["simulated"] - r["measured"]) / r["measured"], r["load"]))
    print()
    for experiment in args.experiments.split(",") + ["all"]:
        sel = [r for r in rows if experiment in ("all", r["experiment"])]
        errors = [abs(r["simulated"] - r["measured"]) / r["measured"] for r in sel]
        print("%s: %d runs, Spearman rank correlation %.2f, median |error| %.1f%%" % (
            experiment, len(sel), spearman([r["simulated"] for r in sel], [r["measured"] for r in sel]),
            100 * statistics.median(errors) if errors else float("nan")))
    print("(files and the runs' database in %s)" % work)


if __name__ == "__main__":
    main()
