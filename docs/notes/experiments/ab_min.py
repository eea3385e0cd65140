#!/usr/bin/env python3
"""The A/B table of mla_bench CSVs DIR/A1.csv, DIR/B1.csv, DIR/A2.csv, ... (the fifty-sixth
session's scripts): per (format, shape) the least median of the rounds of each side, the split
count, and B / A (B - A with --diff); --geomean prints only the geometric mean of B / A over
the cases (1 where there are none).
  python3 ab_min.py DIR [--diff | --geomean]"""
import collections
import csv
import math
import sys


def load(d, extra=None):
    """{(format, bs, kv_len, heads, q_len): {"A": [us, ...], "B": [...], "splits": ..., ...}}
    from d/A1.csv, d/B1.csv, ...; extra(t_k, side, csv_row) adds fields of its own."""
    t = collections.defaultdict(dict)
    for side in "AB":
        for r in range(1, 10):
            try:
                rows = list(csv.DictReader(open(f"{d}/{side}{r}.csv")))
            except OSError:
                continue
            for x in rows:
                k = (x["kv_format"], int(x["bs"]), int(x["kv_len"]), int(x["heads"]),
                     int(x["q_len"]))
                t[k].setdefault(side, []).append(float(x["median_us"]))
                t[k]["splits"] = x["splits"]
                if extra is not None:
                    extra(t[k], side, x)
    return t


def main():
    d = sys.argv[1]
    diff = "--diff" in sys.argv[2:]
    t = load(d)
    if "--geomean" in sys.argv[2:]:
        r = [min(v["B"]) / min(v["A"]) for v in t.values() if "A" in v and "B" in v]
        print(f"{math.exp(sum(map(math.log, r)) / len(r)):.4f}" if r else "1")
        return
    print(f"{'format':20} {'shape':>22} {'splits':>6} {'A':>9} {'B':>9} "
          f"{'B-A' if diff else 'B/A':>7}  (us, least of the rounds)")
    for k in sorted(t):
        a = min(t[k].get("A", [float("nan")]))
        b = min(t[k].get("B", [float("nan")]))
        last = b - a if diff else b / a
        print(f"{k[0]:20} {'bs%d kv%d h%d q%d' % k[1:]:>22} {t[k]['splits']:>6} {a:9.2f} "
              f"{b:9.2f} {last:7.3f}")


if __name__ == "__main__":
    main()
