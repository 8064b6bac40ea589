#!/usr/bin/env python3
"""Print the table of an interleaved bench group from its totals file.

Usage: interleaved-table.py TOTALS CHUNK BASELINE=key [NAME=key ...]
TOTALS holds "passes P bytes_per_pass B <key> <ns> ..." (written by the bench); each NAME's
throughput is bytes over its summed time, and its ratio is the baseline's time over its own.
"""
import sys

path, chunk, *cols = sys.argv[1:]
try:
    w = open(path).read().split()
except OSError:
    print("(not run)")
    sys.exit(0)
d = dict(zip(w[0::2], map(int, w[1::2])))
total = d["bytes_per_pass"] * d["passes"]
names = [c.split("=", 1) for c in cols]
base_name, base_key = names[0]
print(f"| chunk | implementation | GB/s | × {base_name} |")
print("|---|---|---|---|")
for name, key in names:
    print(f"| {chunk} | {name} | {total / d[key]:.2f} | {d[base_key] / d[key]:.2f} |")
print()
print(f"({d['passes']} passes over {d['bytes_per_pass'] / 1e6:.0f} MB each.)")
