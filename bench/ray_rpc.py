"""Peer for bench_rpc: the same empty call through Ray actors (what verl uses).

Prints one JSON line: {"1": {"p50_us": .., "p99_us": ..}, "8": {...}}.
Usage: python ray_rpc.py ITERS
"""
import json
import sys
import time

import ray


@ray.remote(num_cpus=0)
class Echo:
    def ping(self, x=None):
        return x


def measure(actors, iters):
    for _ in range(100):  # warm-up
        ray.get([a.ping.remote() for a in actors])
    samples = []
    for _ in range(iters):
        t = time.perf_counter()
        ray.get([a.ping.remote() for a in actors])
        samples.append((time.perf_counter() - t) * 1e6)
    samples.sort()
    return {"p50_us": samples[len(samples) // 2], "p99_us": samples[min(len(samples) - 1, len(samples) * 99 // 100)]}


def main():
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    result = {}
    for n in (1, 8):
        actors = [Echo.remote() for _ in range(n)]
        ray.get([a.ping.remote() for a in actors])
        result[str(n)] = measure(actors, iters)
        for a in actors:
            ray.kill(a)
    print(json.dumps(result), flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main()
