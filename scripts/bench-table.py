#!/usr/bin/env python3
"""Print criterion results as markdown tables of throughput and ratios.

Usage: scripts/bench-table.py [--mb] GROUP BASELINE [BASELINE...]
Reads target/criterion/GROUP/<function>/<parameter>/new/{estimates,benchmark}.json and prints,
for every parameter (chunk size), each function's median throughput and its ratio to each
baseline function measured in the same run. With --mb, throughput in MB/s and ratios with
more digits (for groups where one side is thousands of times slower than the other).
"""
import json
import os
import sys

root = os.path.join(os.path.dirname(__file__), "..", "target", "criterion")


def load(group):
    out = {}  # param -> function -> bytes/s
    gdir = os.path.join(root, group)
    for func in sorted(os.listdir(gdir)):
        fdir = os.path.join(gdir, func)
        if not os.path.isdir(fdir) or func == "report":
            continue
        for param in sorted(os.listdir(fdir)):
            new = os.path.join(fdir, param, "new")
            if not os.path.isfile(os.path.join(new, "estimates.json")):
                continue
            est = json.load(open(os.path.join(new, "estimates.json")))
            bench = json.load(open(os.path.join(new, "benchmark.json")))
            nbytes = (bench.get("throughput") or {}).get("Bytes")
            if not nbytes:
                continue
            ns = est["median"]["point_estimate"]
            out.setdefault(param, {})[bench["function_id"]] = nbytes / ns  # GB/s
    return out


def main():
    args = sys.argv[1:]
    mb = args[:1] == ["--mb"]
    if mb:
        args = args[1:]
    group, baselines = args[0], args[1:]
    data = load(group)
    funcs = sorted({f for p in data.values() for f in p})
    unit, scale = ("MB/s", 1000.0) if mb else ("GB/s", 1.0)
    head = f"| chunk | implementation | {unit} | " + " | ".join(f"× {b}" for b in baselines) + " |"
    print(head)
    print("|" + "---|" * (3 + len(baselines)))
    order = ["whole", "64KiB", "16KiB", "4KiB", "1KiB", "64B", "16B", "7B", "1B",
             "string-1KiB", "string-64KiB", "string-1MiB", "edits-64KiB", "edits-1MiB"]
    for param in sorted(data, key=lambda p: order.index(p) if p in order else 99):
        row = data[param]
        for f in funcs:
            if f not in row:
                continue
            ratios = []
            for b in baselines:
                r = row[f] / row[b] if b in row else None
                ratios.append("–" if r is None else f"{r:.4f}" if mb and r < 0.01 else f"{r:.2f}")
            print(f"| {param} | {f} | {row[f] * scale:.2f} | " + " | ".join(ratios) + " |")


main()
