#!/usr/bin/env python3
"""Where a kernel's warps wait, by SASS line: a summary of Nsight Compute's source page.

The stage-1 notes (docs/notes/stage1_wgmma.md) attribute a kernel's time from ncu's warp-state
samples per SASS instruction. This script does that step. Its input is the CSV that

  ncu --kernel-name regex:stage1_wgmma --launch-skip 1 --launch-count 1 --set full \\
      --import-source no -o r64 build/bench/mla_bench --mla_formats=fp8_e4m3fn --mla_extra \\
      --mla_iters=2 --mla_no_check '--benchmark_filter=fp8_e4m3fn/bs64/kv4096/h128/q1/'
  ncu -i r64.ncu-rep --page source --csv --print-source sass > r64_sass.csv

writes. Benchmark names end in /iterations:N/manual_time, so a filter ends in `q1/`, not `q1$`.
The script prints:
  * the totals of each stall reason, as shares of all samples;
  * the code cut into segments, each ending at a landmark: an mbarrier instruction (SYNCS) and
    the branch of a try-wait's spin loop right after it, a barrier (BAR), a warpgroup MMA wait
    (WARPGROUP.DEPBAR) or an exit. Only segments above --min-share are printed, each with its
    samples, share and executed warp instructions.
  * the --top instructions by samples, with their three largest stall reasons.

  bench/ncu_sass_summary.py r64_sass.csv [--top 30] [--min-share 0.5] [--range A:B]

--range A:B restricts everything to instructions A..B-1 (indices as printed), e.g. one role's
code. Only the standard library is needed.
"""
import argparse
import csv
import re
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"
SOURCE = "Source"
LANDMARK = re.compile(r"\bSYNCS\.|\bBAR\.|WARPGROUP\.DEPBAR|\bEXIT\b")


def read(path):
    """(kernel name, [row dicts]) from ncu's source-page CSV: a kernel line, then a header."""
    with open(path, newline="") as f:
        lines = list(csv.reader(f))
    kernel = ""
    start = 0
    for i, row in enumerate(lines):
        if row and row[0] == "Kernel Name":
            kernel = row[1] if len(row) > 1 else ""
        if SOURCE in row and SAMPLES in row:
            start = i
            break
    else:
        raise ValueError("%s: no ncu source-page header (%r and %r)" % (path, SOURCE, SAMPLES))
    header = lines[start]
    rows = [dict(zip(header, r)) for r in lines[start + 1:] if len(r) == len(header)]
    return kernel, header, rows


def number(text):
    try:
        return int(float(text))
    except (TypeError, ValueError):
        return 0


def stall_columns(header):
    return [h for h in header if h.startswith("stall_") and "Not Issued" not in h]


def segments(rows):
    """[(first, last, samples, executed, landmark text)], each ending at a landmark."""
    out = []
    first = samples = executed = 0
    for i, r in enumerate(rows):
        samples += number(r.get(SAMPLES))
        executed += number(r.get(EXECUTED))
        src = r.get(SOURCE, "").strip()
        # A branch within two instructions after an mbarrier try-wait is its spin loop: a
        # segment of its own.
        spin = "BRA" in src and any("PHASECHK" in rows[j].get(SOURCE, "")
                                    for j in range(max(0, i - 2), i))
        if LANDMARK.search(src) or spin or i == len(rows) - 1:
            out.append((first, i, samples, executed, src))
            first, samples, executed = i + 1, 0, 0
    return out


def summarize(path, top=30, min_share=0.5, index_range=None, out=sys.stdout):
    kernel, header, rows = read(path)
    base = 0
    if index_range is not None:
        base = index_range[0]
        rows = rows[index_range[0]:index_range[1]]
    total = sum(number(r.get(SAMPLES)) for r in rows)
    stalls = stall_columns(header)
    print("kernel: %s" % kernel, file=out)
    print("instructions: %d, samples: %d%s" % (
        len(rows), total,
        "" if index_range is None else " (instructions %d..%d)" % (base, base + len(rows) - 1)),
        file=out)
    if total == 0:
        print("no samples (was the report taken with --set full?)", file=out)
        return
    share = lambda v: 100.0 * v / total  # noqa: E731
    print("\nstall reasons (share of samples):", file=out)
    sums = {s: sum(number(r.get(s)) for r in rows) for s in stalls}
    for s, v in sorted(sums.items(), key=lambda kv: -kv[1]):
        if v:
            print("  %-28s %7d %5.1f%%" % (s[len("stall_"):], v, share(v)), file=out)
    print("\nsegments ending at a landmark, %.1f%% of samples or more:" % min_share, file=out)
    for first, last, samples, executed, src in segments(rows):
        if share(samples) >= min_share:
            print("  %5d-%5d %7d %5.1f%% exec %10d | %s" % (
                base + first, base + last, samples, share(samples), executed, src[:72]), file=out)
    print("\ntop %d instructions by samples:" % top, file=out)
    order = sorted(range(len(rows)), key=lambda i: -number(rows[i].get(SAMPLES)))[:top]
    for i in sorted(order):
        r = rows[i]
        reasons = sorted(((number(r.get(s)), s[len("stall_"):]) for s in stalls), reverse=True)
        reasons = ", ".join("%s %d" % (name, v) for v, name in reasons[:3] if v)
        print("  %5d %7d %5.1f%% exec %9d | %-56s | %s" % (
            base + i, number(r.get(SAMPLES)), share(number(r.get(SAMPLES))),
            number(r.get(EXECUTED)), r.get(SOURCE, "").strip()[:56], reasons), file=out)


def parse_range(text):
    a, b = text.split(":", 1)
    return int(a), int(b)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", help="ncu --page source --csv --print-source sass output")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--min-share", type=float, default=0.5,
                        help="print segments with at least this %% of samples")
    parser.add_argument("--range", type=parse_range, default=None, metavar="A:B",
                        help="only instructions A..B-1")
    args = parser.parse_args(argv)
    summarize(args.csv, args.top, args.min_share, args.range)
    return 0


if __name__ == "__main__":
    sys.exit(main())
