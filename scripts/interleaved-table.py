#!/usr/bin/env python3
"""Print a table of an interleaved bench group from its totals file.

TOTALS holds "passes P bytes_per_pass B <key> <ns> ..." (written by the bench). A side's
throughput is bytes over its summed time; its ratio to a baseline is the baseline's time
over its own (> 1: faster than the baseline). Sides are named NAME=key, or just key.

Usage:
  interleaved-table.py grid TOTALS BASE[,BASE...] SIDE...
      one row per SIDE, with a "× BASE" column for every BASE
  interleaved-table.py pairs TOTALS SIDE:BASE...
      one row per SIDE, with its own baseline beside it
"""
import sys


def load(path):
    try:
        w = open(path).read().split()
    except OSError:
        return None
    return dict(zip(w[0::2], map(int, w[1::2])))


def side(spec):
    name, _, key = spec.partition("=")
    return name, key or name


def main():
    mode, path, *rest = sys.argv[1:]
    d = load(path)
    if d is None:
        print("(not run)")
        return
    if d["passes"] == 0:
        print("(not run)")
        return
    total = d["bytes_per_pass"] * d["passes"]
    gbs = lambda key: f"{total / d[key]:.2f}"
    ratio = lambda key, base: f"{d[base] / d[key]:.2f}"
    if mode == "grid":
        bases = [side(b) for b in rest[0].split(",")]
        sides = [side(s) for s in rest[1:]]
        print("| implementation | GB/s | " + " | ".join(f"× {n}" for n, _ in bases) + " |")
        print("|---|---|" + "---|" * len(bases))
        for name, key in sides:
            cols = " | ".join(ratio(key, b) for _, b in bases)
            print(f"| {name} | {gbs(key)} | {cols} |")
    elif mode == "pairs":
        print("| implementation | GB/s | baseline | GB/s | × baseline |")
        print("|---|---|---|---|---|")
        for spec in rest:
            s, _, b = spec.partition(":")
            (name, key), (bname, bkey) = side(s), side(b)
            print(f"| {name} | {gbs(key)} | {bname} | {gbs(bkey)} | {ratio(key, bkey)} |")
    else:
        sys.exit(f"unknown mode {mode}")
    print()
    print(f"({d['passes']} passes over {d['bytes_per_pass'] / 1e6:.0f} MB each.)")


main()
