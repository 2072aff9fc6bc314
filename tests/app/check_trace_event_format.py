"""Checks that a file is a Chrome trace in the Trace Event Format's JSON
object form, as `rlwb profile export --format chrome` writes it: parsed by
Python's own json module (no NaN or Infinity, which the format forbids),
every event with the fields its phase needs, ts and dur in microseconds
(numbers, dur >= 0), metadata events of the known kinds, and complete
events on one thread nested (trace viewers drop or misdraw the others).
Exits 0 and prints a summary, or exits 1 naming the first bad event.
Used by tests/app/profile_cli_test.cpp (Perfetto's trace_processor needs a
binary download that a machine without network cannot make)."""
import json
import sys
from collections import defaultdict

METADATA = {"process_name", "process_sort_index", "thread_name", "thread_sort_index"}


def reject(constant):
    raise ValueError("not JSON: " + constant)


def fail(message, event=None):
    print(message + ("" if event is None else ": " + json.dumps(event)), file=sys.stderr)
    sys.exit(1)


def main(path):
    with open(path, encoding="utf-8") as f:
        trace = json.load(f, parse_constant=reject)
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        fail("the top level must be an object with a traceEvents list")
    spans = defaultdict(list)
    names = set()
    for event in trace["traceEvents"]:
        if not isinstance(event, dict):
            fail("an event is not an object", event)
        for field, kind in (("name", str), ("ph", str), ("pid", int), ("tid", int)):
            if not isinstance(event.get(field), kind) or isinstance(event.get(field), bool):
                fail("event field '%s' must be a %s" % (field, kind.__name__), event)
        if event["ph"] == "X":
            for field in ("ts", "dur"):
                value = event.get(field)
                if not isinstance(value, (int, float)) or isinstance(value, bool):
                    fail("complete event field '%s' must be a number of microseconds" % field, event)
            if event["dur"] < 0:
                fail("negative duration", event)
            if not isinstance(event.get("args", {}), dict):
                fail("args must be an object", event)
            spans[(event["pid"], event["tid"])].append((event["ts"], event["ts"] + event["dur"]))
        elif event["ph"] == "M":
            if event["name"] not in METADATA or not isinstance(event.get("args"), dict):
                fail("unknown metadata event", event)
            if event["name"].endswith("_name"):
                names.add((event["name"], event["pid"], event["tid"] if event["name"] == "thread_name" else 0))
        else:
            fail("unexpected phase", event)
    for (pid, tid), intervals in spans.items():
        if ("thread_name", pid, tid) not in names:
            fail("thread %d/%d has events but no name" % (pid, tid))
        if ("process_name", pid, 0) not in names:
            fail("process %d has events but no name" % pid)
        intervals.sort()
        for (start, end), (next_start, next_end) in zip(intervals, intervals[1:]):
            if next_start < end - 1e-3 and next_end > end + 1e-3:
                fail("events overlap without nesting on thread %d/%d at ts %s" % (pid, tid, next_start))
    print("valid: %d events on %d threads" % (len(trace["traceEvents"]), len(spans)))


if __name__ == "__main__":
    main(sys.argv[1])
