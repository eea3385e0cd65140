#!/usr/bin/env python3
"""Runs a build's CTest tests with one process per GoogleTest executable, environment and chunk
of tests, not one process per test: the same tests, far less process and GPU start-up.

Why: `ctest` runs every discovered GoogleTest case in a process of its own. On the H200 a
trivial GPU case takes ~1.5 s that way (process, CUDA context, the library's first call), and
the whole suite ~290 s of device time at -j12, most of it start-up. This driver reads the test
list from CTest itself (`ctest --show-only=json-v1`, with -R / -E as ctest takes them), groups
the GoogleTest cases by (executable, arguments, ENVIRONMENT, WORKING_DIRECTORY), runs each group
in chunks of --chunk cases through one --gtest_filter, and reads each case's result from
GoogleTest's output ([       OK ], [  FAILED  ], [  SKIPPED ]). A chunk's cases that end
without a result (a crash, a timeout) or failed are rerun one per process, so that every failure
is pinned on its case, and one that fails only beside others (an earlier case's sticky CUDA
error, say) is reported as such. Tests that are not single GoogleTest
cases (the C API, install and Python package tests, with their fixtures and timeouts) go to one
`ctest -R` run of their own, in parallel with the groups.

  tests/ctest_grouped.py --build build -j 12 -E 'install_' --log-dir /tmp/ctest_logs

Exit status 0 when every selected test passed or was skipped; 1 otherwise (each failure and
each test without a result is listed). ctest stays the reference: the driver is a faster way to
run the same registrations (tests/CMakeLists.txt), and `ctest` remains what CI runs.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

FILTER = "--gtest_filter="
RESULT = re.compile(r"^\[\s+(OK|FAILED|SKIPPED)\s+\] (\S+?)(?:, where .*)?(?: \(\d+ ms\))?$")
CTEST_RESULT = re.compile(
    r"Test +#\d+: (\S+) \.+\s*(?:\*\*\*)?(Passed|Failed|Skipped|Not Run|Timeout|Exception)")


def list_tests(ctest, build, include, exclude):
    cmd = [ctest, "--test-dir", build, "--show-only=json-v1"]
    if include:
        cmd += ["-R", include]
    if exclude:
        cmd += ["-E", exclude]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(cmd), done.stderr.strip()))
    return json.loads(done.stdout).get("tests", [])


def properties(test):
    return {p["name"]: p["value"] for p in test.get("properties", [])}


def split(tests):
    """(groups, singles): groups maps (exe, other args, env, cwd) to [(ctest name, gtest name)];
    singles are the ctest names of everything else."""
    groups, singles = {}, []
    for t in tests:
        cmd = t.get("command") or []
        filters = [a for a in cmd[1:] if a.startswith(FILTER)]
        gname = filters[0][len(FILTER):] if len(filters) == 1 else ""
        if not gname or gname.startswith("-") or any(c in gname for c in "*?:"):  # a pattern
            singles.append(t["name"])
            continue
        p = properties(t)
        key = (cmd[0], tuple(a for a in cmd[1:] if not a.startswith(FILTER)),
               tuple(p.get("ENVIRONMENT", [])), p.get("WORKING_DIRECTORY", ""))
        groups.setdefault(key, []).append((t["name"], gname))
    return groups, singles


def run_gtest(key, gnames, timeout):
    """Runs one process over `gnames`; returns ({gtest name: OK/FAILED/SKIPPED}, output)."""
    exe, args, env_list, cwd = key
    env = dict(os.environ)
    for item in env_list:
        name, _, value = item.partition("=")
        env[name] = value
    cmd = [exe, FILTER + ":".join(gnames)] + list(args)
    try:
        done = subprocess.run(cmd, env=env, cwd=cwd or None, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, errors="replace",
                              timeout=timeout)
        out = done.stdout
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (
            e.stdout or "")
        out += "\n[ctest_grouped] timed out after %d s\n" % timeout
    results = {}
    for line in out.splitlines():
        m = RESULT.match(line.rstrip())
        if m and m.group(2) not in results:
            results[m.group(2)] = m.group(1)
    return results, out


def run_chunk(key, chunk, timeout, log):
    """A chunk of one group. Cases without a result, and failed ones, are rerun one per process:
    a crash is pinned on its case, and a case that fails only beside others (an earlier case's
    sticky error, say) is told apart from one that fails alone; both count as failures."""
    gnames = [g for _, g in chunk]
    results, out = run_gtest(key, gnames, timeout)
    log.append(out)
    again = [g for g in gnames if results.get(g, "FAILED") == "FAILED"]
    # Only where GoogleTest got going (a binary that does not start fails every case alike).
    if again and len(gnames) > 1 and "[==========] Running" in out:
        for g in again:
            one, out1 = run_gtest(key, [g], timeout)
            log.append(out1)
            if g in results and one.get(g) == "OK":
                one[g] = "FAILED ONLY BESIDE OTHERS"
            results[g] = one.get(g, "NO RESULT")
    return [(name, results.get(g, "NO RESULT")) for name, g in chunk]


def run_singles(ctest, build, names, jobs, timeout, log):
    if not names:
        return []
    pattern = "^(" + "|".join(re.escape(n) for n in names) + ")$"
    cmd = [ctest, "--test-dir", build, "-R", pattern, "-j", str(jobs), "--timeout",
           str(timeout)]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace")
    log.append(done.stdout)
    seen = {}
    for line in done.stdout.splitlines():
        m = CTEST_RESULT.search(line)
        if m:
            seen[m.group(1)] = {"Passed": "OK", "Skipped": "SKIPPED"}.get(m.group(2), "FAILED")
    return [(n, seen.get(n, "NO RESULT")) for n in names]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build", help="the CTest build directory")
    parser.add_argument("-R", dest="include", default="", help="ctest -R: names to run")
    parser.add_argument("-E", dest="exclude", default="", help="ctest -E: names to leave out")
    parser.add_argument("-j", dest="jobs", type=int, default=os.cpu_count() or 2,
                        help="processes at once")
    parser.add_argument("--chunk", type=int, default=64, help="GoogleTest cases per process")
    parser.add_argument("--timeout", type=int, default=900,
                        help="seconds per process (a chunk, or the ctest run of the rest)")
    parser.add_argument("--log-dir", default="", help="where each process's output goes")
    parser.add_argument("--ctest", default="ctest", help=argparse.SUPPRESS)  # tests: a stand-in
    opts = parser.parse_args(argv)
    if opts.jobs < 1 or opts.chunk < 1:
        parser.error("-j and --chunk must be >= 1")
    start = time.time()
    tests = list_tests(opts.ctest, opts.build, opts.include, opts.exclude)
    groups, singles = split(tests)
    work = []
    for key, cases in groups.items():
        for i in range(0, len(cases), opts.chunk):
            work.append((key, cases[i:i + opts.chunk]))
    logs = [[] for _ in range(len(work) + 1)]
    with ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        rest = pool.submit(run_singles, opts.ctest, opts.build, singles,
                           max(1, opts.jobs // 4), opts.timeout, logs[-1])
        futures = [pool.submit(run_chunk, key, chunk, opts.timeout, logs[i])
                   for i, (key, chunk) in enumerate(work)]
        results = [r for f in futures for r in f.result()] + rest.result()
    if opts.log_dir:
        os.makedirs(opts.log_dir, exist_ok=True)
        for i, chunks in enumerate(logs):
            with open(os.path.join(opts.log_dir, "%03d.log" % i), "w") as f:
                f.write("\n".join(chunks))
    counts = {}
    for _, r in results:
        counts[r] = counts.get(r, 0) + 1
    bad = [(n, r) for n, r in results if r not in ("OK", "SKIPPED")]
    print("%d tests in %d processes (+ ctest for %d): %d passed, %d skipped, %d failed, "
          "%d without a result; %.0f s" % (
              len(results), len(work), len(singles), counts.get("OK", 0),
              counts.get("SKIPPED", 0),
              counts.get("FAILED", 0) + counts.get("FAILED ONLY BESIDE OTHERS", 0),
              counts.get("NO RESULT", 0), time.time() - start))
    for n, r in bad:
        print("  %s: %s" % (r, n))
    return 1 if bad or not results else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
