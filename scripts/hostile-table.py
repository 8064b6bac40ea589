#!/usr/bin/env python3
"""Print the criterion `hostile` group as a markdown table: each shape's median throughput at
every input size, and the ratio of its 4 MiB throughput to its 1 KiB one (flat: about 1;
a quadratic step would read 1/4096).

Usage: scripts/hostile-table.py   (reads target/criterion/hostile/<shape>/<size>/new/)
"""
import json
import os

root = os.path.join(os.path.dirname(__file__), "..", "target", "criterion", "hostile")
sizes = ["1KiB", "64KiB", "1MiB", "4MiB"]
print("| shape | " + " | ".join(sizes) + " | 4 MiB ÷ 1 KiB |")
print("|---|" + "---|" * (len(sizes) + 1))
for shape in sorted(os.listdir(root)):
    if shape == "report" or not os.path.isdir(os.path.join(root, shape)):
        continue
    mbs = {}
    for size in sizes:
        new = os.path.join(root, shape, size, "new")
        try:
            est = json.load(open(os.path.join(new, "estimates.json")))
            bench = json.load(open(os.path.join(new, "benchmark.json")))
        except FileNotFoundError:
            continue
        nbytes = bench["throughput"]["Bytes"]
        mbs[size] = nbytes / est["median"]["point_estimate"] * 1e9 / 1e6
    cells = [f"{mbs[s]:.0f} MB/s" if s in mbs else "–" for s in sizes]
    ratio = f"{mbs['4MiB'] / mbs['1KiB']:.2f}×" if "4MiB" in mbs and "1KiB" in mbs else "–"
    print(f"| `{shape}` | " + " | ".join(cells) + f" | {ratio} |")
