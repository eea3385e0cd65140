#!/usr/bin/env python3
"""Summarise the stage-1 wgmma timeline printed by exp_timeline.patch or exp_timeline_s36.patch
(lines "TL role ev idx clk").

Roles 0 / 1: consumer warpgroups (warp 0, lane 0), 2: producer (warp 0, lane 0), 3 (s36 patch,
long CTAs): consumer 2. Solo consumers (s36) stamp a subset of the seesaw's events per own tile
(idx: the consumer's round), in their order 0 1 2 3 10 12 6 13. Prints, per role,
the mean cycles between consecutive events (labelled), over rounds past the first two, and the
mean round (consumers) or tile (producer) period, plus the raw stream of a few middle rounds.
"""
import collections
import sys

NAMES = {0: "round", 1: "own full", 2: "S done", 3: "tmax bar", 4: "max of c0", 10: "softmax",
         5: "p_empty", 6: "published", 11: "P tile0 in", 12: "rescale0", 13: "O tile0",
         14: "P tile1 in", 15: "rescale1", 16: "O tile1", 20: "loop end", 21: "epilogue",
         30: "start", 24: "empty ok", 25: "issued", 7: "slow bar"}
NAMES.update({40 + c: f"S chunk {c}" for c in range(9)})  # exp_timeline_chunks.patch


def main(path):
    recs = collections.defaultdict(list)
    hdr = ""
    for line in open(path, errors="replace"):
        if line.startswith("TLHDR"):
            hdr = line.strip()
        elif line.startswith("TL "):
            _, r, ev, idx, clk = line.split()
            recs[int(r)].append((int(ev), int(idx), int(clk)))
    print(hdr)
    t0 = min(c for r in recs.values() for _, _, c in r)
    for role in sorted(recs):
        rs = recs[role]
        seg = collections.defaultdict(list)
        for (e0, i0, c0), (e1, i1, c1) in zip(rs, rs[1:]):
            if i0 >= 2 or e0 in (20, 21):
                seg[(e0, e1)].append((c1 - c0) & 0xffffffff)
        print(f"role {role}: {len(rs)} events, first {rs[0][2] - t0}, last {rs[-1][2] - t0}")
        period_ev = 24 if role == 2 else 0
        ts = [c for e, i, c in rs if e == period_ev]
        if len(ts) > 4:
            d = [(b - a) & 0xffffffff for a, b in zip(ts[2:], ts[3:])]
            print(f"  period ({NAMES[period_ev]} to next): mean {sum(d) / len(d):.0f}, "
                  f"min {min(d)}, max {max(d)}")
        order = sorted(seg, key=lambda k: min(idx for idx, x in enumerate(rs) if x[0] == k[0]))
        for k in order:
            v = seg[k]
            print(f"  {NAMES.get(k[0], k[0]):>11} -> {NAMES.get(k[1], k[1]):<11} n={len(v):3d} "
                  f"mean {sum(v) / len(v):7.0f} min {min(v):6d} max {max(v):6d}")
    print("raw, rounds 10-11 (cycles from the earliest event):")
    for role in sorted(recs):
        for e, i, c in recs[role]:
            if (role != 2 and i in (10, 11)) or (role == 2 and 20 <= i <= 23):
                print(f"  r{role} {NAMES.get(e, e):>11} i={i:3d} {c - t0:8d}")


if __name__ == "__main__":
    main(sys.argv[1])
