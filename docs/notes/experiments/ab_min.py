#!/usr/bin/env python3
"""The A/B table of mla_bench CSVs DIR/A1.csv, DIR/B1.csv, DIR/A2.csv, ... (the fifty-sixth
session's scripts): per (format, shape) the least median of the rounds of each side, the split
count, and B / A (B - A with --diff).
  python3 ab_min.py DIR [--diff]"""
import collections
import csv
import sys

d = sys.argv[1]
diff = "--diff" in sys.argv[2:]
t = collections.defaultdict(dict)
for side in "AB":
    for r in range(1, 10):
        try:
            rows = list(csv.DictReader(open(f"{d}/{side}{r}.csv")))
        except OSError:
            continue
        for x in rows:
            k = (x["kv_format"], int(x["bs"]), int(x["kv_len"]), int(x["heads"]), int(x["q_len"]))
            t[k].setdefault(side, []).append(float(x["median_us"]))
            t[k]["splits"] = x["splits"]
print(f"{'format':20} {'shape':>22} {'splits':>6} {'A':>9} {'B':>9} {'B-A' if diff else 'B/A':>7}"
      "  (us, least of the rounds)")
for k in sorted(t):
    a = min(t[k].get("A", [float("nan")]))
    b = min(t[k].get("B", [float("nan")]))
    last = b - a if diff else b / a
    print(f"{k[0]:20} {'bs%d kv%d h%d q%d' % k[1:]:>22} {t[k]['splits']:>6} {a:9.2f} {b:9.2f} "
          f"{last:7.3f}")
