#!/usr/bin/env python3
"""A/B of two builds or two settings of the library in one run: the way every speed change here is
judged (docs/notes/stage1_wgmma.md). Only figures from the same run on the same GPU compare (a
machine's clock and HBM drift by a few percent between runs), so this driver alternates the two
sides, round after round, over the same cases, and reports per case the median over rounds of
each side's median, the ratio B / A, and the geometric mean of the ratios; on a GPU also the
case's floor (the median of the cold reads every pass measured) and B over it, so that an A/B
doubles as the benchmark table. After every round
but the last it prints the table so far on stderr and writes it to --csv, so that a run cut
short (a timeout on the GPU machine) keeps the rounds it finished.

A side is a `mla_bench` binary with environment settings in front, as a shell would read them:
  'build-base/bench/mla_bench'                  (a build of the base commit)
  'MLA_DECODE_STAGE1=mma16 build/bench/mla_bench'
Everything after `--` goes to both binaries (the SPEC method is mla_bench's own: flush, events,
median of --mla_iters calls). Outputs are not checked here (--mla_no_check is passed); the GPU
tests do that.

  bench/ab.py --csv ab.csv --rounds 3 'build-base/bench/mla_bench' 'build/bench/mla_bench' -- \\
      --mla_formats=fp8_e4m3fn --mla_extra --mla_iters=20 '--benchmark_filter=h128'

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

KEY = ("bs", "q_len", "kv_len", "heads", "kv_format", "q_format", "page_size", "lengths",
       "q_lens")


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
    if d["page_size"] not in ("", "1"):
        s += " page%s" % d["page_size"]
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


def compare(passes_a, passes_b):
    """Per case present in every pass of both sides: (key, a_us, b_us, route_a, route_b,
    floor_us or None)."""
    keys = [k for k in passes_a[0] if all(k in p for p in passes_a + passes_b)]
    out = []
    for k in keys:
        a = statistics.median(float(p[k]["median_us"]) for p in passes_a)
        b = statistics.median(float(p[k]["median_us"]) for p in passes_b)
        out.append((k, a, b, route(passes_a[-1][k]), route(passes_b[-1][k]),
                    floor_of(passes_a + passes_b, k)))
    return out


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def report(opts, passes, out, when):
    """Prints the table of the passes so far to `out` and writes --csv; returns the cases."""
    cases = compare(*passes)
    if not cases:
        print("no case ran on both sides", file=out)
        return 0
    rounds = len(passes[0])
    print("A: %s\nB: %s\n%d round%s%s; medians over rounds of each pass's median, us" %
          (opts.a, opts.b, rounds, "" if rounds == 1 else "s", " (%s)" % when if when else ""),
          file=out)
    timing = {p[k].get("timing", "") for p in passes[0] + passes[1] for k in p}
    if "host_wall_clock" in timing:
        print("no GPU: these are host-reference times (one wall-clock call per case), not the "
              "library's kernels", file=out)
    width = max(len(label(c[0])) for c in cases)
    # The floor (the cold read of the case's bytes, measured by both sides in the same run) and
    # B over it: where every case has one, the A/B is also the benchmark table.
    floors = all(c[5] is not None for c in cases)
    fl = lambda text: (" %10s %9s" % text) if floors else ""
    print("%-*s %10s %10s %7s%s  %s" % (width, "case", "A", "B", "B / A", fl(("floor", "B x fl")),
                                        "A route -> B route"), file=out)
    for k, a, b, ra, rb, f in cases:
        print("%-*s %10.2f %10.2f %7.3f%s  %s%s" % (
            width, label(k), a, b, b / a,
            fl(("%.2f" % f, "%.2f" % (b / f))) if floors else "", ra,
            "" if ra == rb else " -> " + rb), file=out)
    geo_floor = fl(("%.2f" % geomean([c[5] for c in cases]),
                    "%.2f" % geomean([c[2] / c[5] for c in cases]))) if floors else ""
    print("%-*s %10.2f %10.2f %7.3f%s" % (width, "geomean", geomean([c[1] for c in cases]),
                                          geomean([c[2] for c in cases]),
                                          geomean([c[2] / c[1] for c in cases]), geo_floor),
          file=out)
    out.flush()
    if opts.csv:
        with open(opts.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(list(KEY) + ["a_us", "b_us", "b_over_a", "a_route", "b_route",
                                    "floor_us", "b_x_floor"])
            for k, a, b, ra, rb, fu in cases:
                w.writerow(list(k) + ["%.2f" % a, "%.2f" % b, "%.4f" % (b / a), ra, rb,
                                      "" if fu is None else "%.2f" % fu,
                                      "" if fu is None else "%.3f" % (b / fu)])
    return len(cases)


def main(argv):
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(
        usage="%(prog)s [--rounds N] [--csv PATH] A B [-- mla_bench arguments ...]",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", help="side A: 'NAME=VALUE ... BINARY'")
    parser.add_argument("b", help="side B: 'NAME=VALUE ... BINARY'")
    parser.add_argument("--rounds", type=int, default=3,
                        help="passes of each side (>= 1; default 3)")
    parser.add_argument("--csv", default="", help="where the per-case rows go")
    opts = parser.parse_args(argv[:split])
    bench_args = argv[split + 1:]
    if opts.rounds < 1:
        parser.error("--rounds must be >= 1")
    try:
        sides = [parse_side(opts.a), parse_side(opts.b)]
    except ValueError as e:
        parser.error(str(e))
    passes = ([], [])
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(opts.rounds):
            # A then B in even rounds, B then A in odd ones: drift within a round cancels.
            order = (0, 1) if r % 2 == 0 else (1, 0)
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
