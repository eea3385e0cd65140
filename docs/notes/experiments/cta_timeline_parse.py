#!/usr/bin/env python3
"""Summary of exp_s56_cta_timeline.patch's CTL lines (one call of stage 1 and its reduce):
per event, the median and the largest time of stage-1 CTAs (ns from the earliest CTA's start,
and ns from the CTA's own start), the reduce's start, its wait and its end.
  python3 cta_timeline_parse.py LOG"""
import statistics
import sys

rows = {"s1": [], "rd": []}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 5 or f[0] != "CTL" or f[1] not in rows:
        continue
    gt0, gt1 = int(f[3]), int(f[4])
    if gt0 == 0:
        continue  # a CTA that recorded nothing (inactive, or no event 0)
    rows[f[1]].append((int(f[2]), gt0, gt1, [int(x) for x in f[5:]]))
s1, rd = rows["s1"], rows["rd"]
if not s1:
    sys.exit("no stage-1 records")
t0 = min(r[1] for r in s1)
# clock64 counts per ns: a CTA's last event over its globaltimer span
ratios = []
for b, g0, g1, ev in s1:
    last = max(e for e in ev if e >= 0) if any(e >= 0 for e in ev) else -1
    if last > 0 and g1 > g0:
        ratios.append(last / (g1 - g0))
k = statistics.median(ratios) if ratios else 1.755
names = {1: "indptrs read, barriers made", 2: "producer starts", 3: "Q^T written",
         4: "consumer 0 has tile 0", 5: "consumer 0 past its tiles", 6: "O stores issued",
         7: "thread 0's Q words landed", 8: "thread 0's Q^T stores",
         9: "both consumers past tiles", 10: "row outputs handed over"}
print(f"stage 1: {len(s1)} CTAs; clock {k:.3f} counts/ns; starts: median +"
      f"{statistics.median(r[1] - t0 for r in s1):.0f} ns, last +{max(r[1] - t0 for r in s1)} ns;"
      f" ends: median +{statistics.median(r[2] - t0 for r in s1):.0f} ns,"
      f" last +{max(r[2] - t0 for r in s1)} ns")
for e, name in names.items():
    v = [r[3][e - 1] / k for r in s1 if len(r[3]) >= e and r[3][e - 1] >= 0]
    if v:
        print(f"  ev{e} {name:28} from own start: median {statistics.median(v):7.0f} ns, "
              f"max {max(v):7.0f} ns ({len(v)} CTAs)")
if rd:
    s1_end = max(r[2] for r in s1)
    print(f"reduce: {len(rd)} CTAs; starts median +{statistics.median(r[1] - t0 for r in rd):.0f}"
          f" ns (first +{min(r[1] - t0 for r in rd)}); stage 1's last end +{s1_end - t0} ns")
    w = [r[3][0] / k for r in rd if r[3] and r[3][0] >= 0]
    if w:
        print(f"  its grid wait ends (own start +) median {statistics.median(w):.0f} ns,"
              f" max {max(w):.0f}")
    print(f"  ends: median +{statistics.median(r[2] - t0 for r in rd):.0f} ns, last "
          f"+{max(r[2] - t0 for r in rd)} ns after stage 1's first start")
