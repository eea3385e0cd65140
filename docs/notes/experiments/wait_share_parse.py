#!/usr/bin/env python3
"""The 64-row seesaw's sections and waits per round (exp_s61_wait_share.patch): reads the CTL
lines of an mla_bench log (tag s1; events 1 + 9 w + k of consumer w, each the clock64 sum + 1)
and prints, per consumer, the mean over CTAs of each sum per round (two tiles) and as a share
of the consumer's time in its tile loop.
  python3 wait_share_parse.py LOG [TILES_PER_CTA]"""
import sys

NAMES = ["total", "S (incl. full wait)", "full-stage waits", "m_full wait (C1: C0's maxima)",
         "p_empty wait", "softmax section (incl. m_full, p_empty)",
         "p_full wait, other's P^T", "p_full wait, own P^T", "value section (incl. p_full)"]


def main():
    rows = []
    for line in open(sys.argv[1]):
        f = line.split()
        if len(f) < 5 + 18 or f[0] != "CTL" or f[1] != "s1":
            continue
        ev = [int(v) for v in f[5:]]
        if min(ev[:18]) <= 0:
            continue  # a CTA that recorded nothing (or not the seesaw)
        rows.append([v - 1 for v in ev[:18]])
    if not rows:
        print("no CTL s1 records with 18 events")
        return
    tiles = int(sys.argv[2]) if len(sys.argv) > 2 else None
    print("%d CTAs" % len(rows))
    for w in range(2):
        tot = sum(r[9 * w] for r in rows) / len(rows)
        rounds = (tiles + 1) // 2 if tiles else None
        print("consumer %d: %.0f cycles in the loop%s" % (
            w, tot, " (%.0f a round of 2 tiles)" % (tot / rounds) if rounds else ""))
        for k in range(1, 9):
            v = sum(r[9 * w + k] for r in rows) / len(rows)
            per = " %7.0f a round" % (v / rounds) if rounds else ""
            print("  %-42s %5.1f %%%s" % (NAMES[k], 100.0 * v / tot, per))


if __name__ == "__main__":
    main()
