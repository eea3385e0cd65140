#!/usr/bin/env python3
"""A/B of two builds or settings of the library in one run (or A/B/C... of more): the way every
speed change here is judged (docs/notes/stage1_wgmma.md). Only figures from the same run on the
same GPU compare (a machine's clock and HBM drift by a few percent between runs), so this driver
alternates the sides, round after round (the order rotates by one side a round), over the same
cases, and reports per case the median over rounds of each side's median, each side's ratio to A,
and the geometric mean of the ratios; on a GPU also the case's floor (the median of the cold
reads every pass measured) and each side over it, so that an A/B doubles as the benchmark table.
Several variants against one base in one run cost less device time than an A/B each (the base
runs once a round, not once per pair). After every round but the last it prints the table so far
on stderr and writes it to --csv, so that a run cut short (a timeout on the GPU machine) keeps
the rounds it finished.

A side is a `mla_bench` binary with environment settings in front, as a shell would read them:
  'build-base/bench/mla_bench'                  (a build of the base commit)
  'MLA_DECODE_STAGE1=mma16 build/bench/mla_bench'
Everything after `--` goes to every binary (the SPEC method is mla_bench's own: flush, events,
median of --mla_iters calls). Outputs are not checked here (--mla_no_check is passed); the GPU
tests do that.

  bench/ab.py --csv ab.csv --rounds 3 'build-base/bench/mla_bench' 'build/bench/mla_bench' -- \\
      --mla_formats=fp8_e4m3fn --mla_extra --mla_iters=20 '--benchmark_filter=h128'

--metric fwd_median_us compares the one-shot mla_decode_fwd (plan cache and everything the call
queues) instead of mla_decode_plan_run (median_us, the default).

A base build of a commit, beside the working tree's build (the benchmark's sources are the
commit's own):
  git worktree add /tmp/base <commit>
  cmake -S /tmp/base -B build-base -G Ninja -DCMAKE_BUILD_TYPE=Release -DMLA_BACKEND=cuda
  cmake --build build-base --target mla_bench

Without a GPU mla_bench times the host reference: the driver works the same (slowly; it says
so), which is how the CPU tests run it (python/tests/test_ab.py, with a stand-in binary).
"""
import argparse
import csv
import math
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

# "cache" (paged, paged_ordered or contiguous) too: page_size is 1 for both a contiguous cache
# and 1-token pages.
KEY = ("bs", "q_len", "kv_len", "heads", "kv_format", "q_format", "page_size", "cache",
       "lengths", "q_lens")


def parse_side(text):
    """'K=V K2=V2 binary' -> (env dict, binary)."""
    words = shlex.split(text)
    env = {}
    while words and "=" in words[0] and not words[0].startswith(("/", ".")):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    if len(words) != 1:
        raise ValueError("a side is 'NAME=VALUE ... BINARY' (got %r)" % text)
    return env, words[0]


def run_side(env, binary, args, csv_path):
    """Runs one pass of a side; returns {case key: row} of the cases that ran."""
    full_env = dict(os.environ)
    full_env.update(env)
    cmd = [binary, "--mla_no_check", "--mla_csv=" + csv_path] + list(args)
    done = subprocess.run(cmd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:])
        raise RuntimeError("%s exited with %d" % (" ".join(cmd), done.returncode))
    rows = {}
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            if row.get("median_us"):
                rows[tuple(row.get(k, "") for k in KEY)] = row
    return rows


def label(key):
    d = dict(zip(KEY, key))
    s = "%s bs%s kv%s H%s q%s" % (d["kv_format"], d["bs"], d["kv_len"], d["heads"], d["q_len"])
    if d["page_size"] not in ("", "1") or d["cache"].startswith("paged"):
        s += " page%s" % d["page_size"]
        if d["cache"] == "paged_ordered":
            s += " ordered"
    if d["lengths"] not in ("", "equal"):
        s += " " + d["lengths"]
    if d["q_lens"] not in ("", "equal"):
        s += " q " + d["q_lens"]
    return s


def route(row):
    return "%s %s/%s" % (row.get("variant", ""), row.get("rows_per_cta", ""),
                         row.get("splits", ""))


def floor_of(passes, k):
    """The case's cold-read floor: the median of every pass's floor_read_us (mla_bench measures
    it in each GPU case, after the same flush); None where no pass has one (host mode)."""
    values = []
    for p in passes:
        try:
            v = float(p[k].get("floor_read_us") or 0)
        except ValueError:
            v = 0
        if v > 0:
            values.append(v)
    return statistics.median(values) if values else None


def compare(passes, metric="median_us"):
    """Per case present in every pass of every side: (key, [us per side], [route per side],
    floor_us or None); passes[s] is side s's list of passes; `metric` the CSV column timed."""
    every = [p for side in passes for p in side]
    keys = [k for k in passes[0][0] if all(k in p and p[k].get(metric) for p in every)]
    out = []
    for k in keys:
        us = [statistics.median(float(p[k][metric]) for p in side) for side in passes]
        out.append((k, us, [route(side[-1][k]) for side in passes], floor_of(every, k)))
    return out


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def letter(s):
    return chr(ord("A") + s)


def report(opts, passes, out, when):
    """Prints the table of the passes so far to `out` and writes --csv; returns the cases."""
    cases = compare(passes, opts.metric)
    if not cases:
        print("no case ran on every side", file=out)
        return 0
    n = len(passes)
    rounds = len(passes[0])
    for s in range(n):
        print("%s: %s" % (letter(s), opts.sides[s]), file=out)
    print("%d round%s%s; medians over rounds of each pass's median (%s), us" %
          (rounds, "" if rounds == 1 else "s", " (%s)" % when if when else "", opts.metric),
          file=out)
    timing = {p[k].get("timing", "") for side in passes for p in side for k in p}
    if "host_wall_clock" in timing:
        print("no GPU: these are host-reference times (one wall-clock call per case), not the "
              "library's kernels", file=out)
    width = max(len(label(c[0])) for c in cases)
    # The floor (the cold read of the case's bytes, measured by every side in the same run) and
    # each side over it: where every case has one, the A/B is also the benchmark table.
    floors = all(c[3] is not None for c in cases)
    others = range(1, n)
    head = "%-*s %10s" % (width, "case", "A")
    for s in others:
        head += " %10s %7s" % (letter(s), "%s / A" % letter(s))
    if floors:
        head += " %10s" % "floor" + "".join(" %9s" % ("%s x fl" % letter(s)) for s in others)
    print(head + "  A route -> other routes", file=out)
    for k, us, routes, f in cases:
        line = "%-*s %10.2f" % (width, label(k), us[0])
        for s in others:
            line += " %10.2f %7.3f" % (us[s], us[s] / us[0])
        if floors:
            line += " %10.2f" % f + "".join(" %9.2f" % (us[s] / f) for s in others)
        line += "  " + routes[0] + "".join(
            " -> %s%s" % ("" if n == 2 else letter(s) + ": ", routes[s])
            for s in others if routes[s] != routes[0])
        print(line, file=out)
    line = "%-*s %10.2f" % (width, "geomean", geomean([c[1][0] for c in cases]))
    for s in others:
        line += " %10.2f %7.3f" % (geomean([c[1][s] for c in cases]),
                                   geomean([c[1][s] / c[1][0] for c in cases]))
    if floors:
        line += " %10.2f" % geomean([c[3] for c in cases]) + "".join(
            " %9.2f" % geomean([c[1][s] / c[3] for c in cases]) for s in others)
    print(line, file=out)
    out.flush()
    if opts.csv:
        with open(opts.csv, "w", newline="") as f:
            w = csv.writer(f)
            # Two sides: the columns of the original A/B; each further side appends its own.
            extra = [letter(s).lower() for s in range(2, n)]
            w.writerow(list(KEY) + ["a_us", "b_us", "b_over_a", "a_route", "b_route",
                                    "floor_us", "b_x_floor"] +
                       [c + suffix for c in extra
                        for suffix in ("_us", "_over_a", "_route", "_x_floor")])
            for k, us, routes, fu in cases:
                x_floor = lambda v: "" if fu is None else "%.3f" % (v / fu)
                row = list(k) + ["%.2f" % us[0], "%.2f" % us[1], "%.4f" % (us[1] / us[0]),
                                 routes[0], routes[1], "" if fu is None else "%.2f" % fu,
                                 x_floor(us[1])]
                for s in range(2, n):
                    row += ["%.2f" % us[s], "%.4f" % (us[s] / us[0]), routes[s], x_floor(us[s])]
                w.writerow(row)
    return len(cases)


def main(argv):
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(
        usage="%(prog)s [--rounds N] [--csv PATH] [--metric COLUMN] A B [C ...] "
              "[-- mla_bench arguments ...]",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sides", nargs="+", metavar="SIDE",
                        help="A, B, ...: 'NAME=VALUE ... BINARY' each; every other side is "
                             "compared with A")
    parser.add_argument("--rounds", type=int, default=3,
                        help="passes of each side (>= 1; default 3)")
    parser.add_argument("--csv", default="", help="where the per-case rows go")
    parser.add_argument("--metric", default="median_us", choices=("median_us", "fwd_median_us"),
                        help="the CSV column compared: mla_decode_plan_run (median_us, the "
                             "default) or the one-shot mla_decode_fwd (fwd_median_us)")
    opts = parser.parse_args(argv[:split])
    bench_args = argv[split + 1:]
    if opts.rounds < 1:
        parser.error("--rounds must be >= 1")
    if len(opts.sides) < 2 or len(opts.sides) > 26:
        parser.error("2 to 26 sides (got %d)" % len(opts.sides))
    try:
        sides = [parse_side(text) for text in opts.sides]
    except ValueError as e:
        parser.error(str(e))
    n = len(sides)
    passes = tuple([] for _ in range(n))
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(opts.rounds):
            # The order rotates by one side each round (two sides: A B, then B A), so that every
            # side runs in every position of a round and drift within a round cancels.
            order = [(r + i) % n for i in range(n)]
            for s in order:
                env, binary = sides[s]
                passes[s].append(run_side(env, binary, bench_args,
                                          os.path.join(tmp, "%d_%d.csv" % (s, r))))
            if r + 1 < opts.rounds:
                # What the rounds so far give, on stderr and in the CSV, so that a run cut short
                # (a timeout) keeps them; the last round's report replaces both.
                report(opts, passes, sys.stderr, "after round %d of %d" % (r + 1, opts.rounds))
    if report(opts, passes, sys.stdout, "") == 0:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
