#!/usr/bin/env python3
"""Stores the editor's auto layout in experiment files.

For each file, runs rlwb-gui headless (xvfb-run), clicks Auto-layout, reads
the node positions from its state dump and rewrites only the file's
`layout:` block (everything else, comments included, stays as written). A
file that builds on another (`defaults: [base.yaml]`) keeps only the
positions that differ from its base's, and its `~` entries (a base's node it
does not have).

  scripts/layout-experiments.py [--gui build/app/rlwb-gui] experiments/*.yaml

Bases are handled before the files that build on them when both are given.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def laid_out_positions(gui, path):
    with tempfile.TemporaryDirectory(prefix="rlwb-layout-") as tmp:
        script = os.path.join(tmp, "layout.script")
        state = os.path.join(tmp, "state.json")
        with open(script, "w") as f:
            f.write("click @button/Auto-layout\nframes 2\n")
        cmd = ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", gui, "--db", os.path.join(tmp, "rlwb.db"),
               "--open", os.path.abspath(path), "--cli", "/nonexistent/rlwb", "--script", script,
               "--screenshot", os.path.join(tmp, "shot.png"), "--dump-state", state]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0 or not os.path.exists(state):
            sys.exit(f"{path}: rlwb-gui failed ({done.returncode}):\n{done.stdout}{done.stderr}")
        with open(state) as f:
            editor = json.load(f)["editor"]
        if not editor.get("loaded"):
            sys.exit(f"{path}: does not load: {editor.get('load_issues')}")
        # A trainer phase's node is stored under its canvas key, "<phase>/<id>".
        return [(n.get("key", n["id"]), int(n["x"]), int(n["y"])) for n in editor["nodes"]]


def bases_of(text):
    m = re.search(r"^defaults:\s*\[(.*)\]\s*$", text, re.M)
    return [b.strip() for b in m.group(1).split(",")] if m else []


def layout_block(lines):
    """(start, end) line indices of the top-level `layout:` block, or None."""
    for i, line in enumerate(lines):
        if line.rstrip() == "layout:":
            end = i + 1
            while end < len(lines) and (lines[end].startswith("  ") or not lines[end].strip()):
                end += 1
            return i, end
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gui", default=os.path.join(os.path.dirname(__file__), "..", "build", "app", "rlwb-gui"))
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    texts = {f: open(f).read() for f in args.files}
    order = sorted(args.files, key=lambda f: len(bases_of(texts[f])))  # bases first
    stored = {}  # file name -> {node: (x, y)} as written now
    for path in order:
        text = texts[path]
        positions = laid_out_positions(args.gui, path)
        inherited = {}
        for base in bases_of(text):
            inherited.update(stored.get(base, {}))
        lines = text.split("\n")
        block = layout_block(lines)
        nulls = []
        if block:
            nulls = [l for l in lines[block[0] + 1:block[1]] if re.match(r"^  [^ ].*:\s*~\s*$", l)]
        entries = [f"  {node}: {{x: {x}, y: {y}}}" for node, x, y in positions if inherited.get(node) != (x, y)]
        stored[os.path.basename(path)] = {**inherited, **{node: (x, y) for node, x, y in positions}}
        if not entries and not nulls and not block:
            print(f"{path}: inherits its base's layout")
            continue
        new_block = ["layout:"] + nulls + entries
        if block:
            tail = lines[block[1]:]
            lines = lines[:block[0]] + new_block + ([""] if tail and tail != [""] else []) + tail
        else:
            lines = (lines[:-1] if lines and lines[-1] == "" else lines) + new_block + [""]
        new_text = "\n".join(lines)
        if not new_text.endswith("\n"):
            new_text += "\n"
        with open(path, "w") as f:
            f.write(new_text)
        print(f"{path}: {len(entries)} positions")


if __name__ == "__main__":
    main()
