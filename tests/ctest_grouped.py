#!/usr/bin/env python3
"""Runs a build's CTest tests with one process per GoogleTest executable, environment and chunk
of tests, not one process per test: the same tests, far less process and GPU start-up.

Why: `ctest` runs every discovered GoogleTest case in a process of its own. On the H200 a
trivial GPU case takes ~1.5 s that way (process, CUDA context, the library's first call), and
the whole suite ~290 s of device time at -j12, most of it start-up. This driver reads the test
list from CTest itself (`ctest --show-only=json-v1`, with -R / -E as ctest takes them), groups
the GoogleTest cases by (executable, arguments, ENVIRONMENT, WORKING_DIRECTORY), runs each group
in chunks of --chunk cases through one --gtest_filter, and takes each case's result from
GoogleTest's JSON report (from its text, tracked case by case, where the process died before
writing one). A process that exits non-zero with no failed case (a fault at exit, a sanitizer
report) fails its cases, as ctest would. Failed cases and those without a result (a crash, a
timeout) are rerun one per process, so that every failure is pinned on its case; one that fails
or crashes only beside others (an earlier case's sticky CUDA error, say) stays a failure and is
reported as such. Only cases with no CTest property beyond an environment, a working directory,
gtest_discover_tests' skip expression and records without effect on a run (DEF_SOURCE_LINE,
LABELS) are grouped; every other test (the C API, install and Python package tests with their
fixtures and timeouts, or a case with WILL_FAIL, TIMEOUT, ...) goes to `ctest -R` with the same
-E (in runs of names that one regular expression holds), in parallel with the groups, and the
reasons are counted on the first lines of the output; DISABLED tests are not run (nor does ctest
run them). Cases now share a process: a case that depends on the library
reading an environment variable for the first time (the switches are read once per process)
passes under ctest and may not here (it is then reported as failing only beside others).

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
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

FILTER = "--gtest_filter="
DEFAULT_SKIP = ["\\[  SKIPPED \\]"]  # gtest_discover_tests' SKIP_REGULAR_EXPRESSION
GROUPABLE = {"ENVIRONMENT", "WORKING_DIRECTORY", "SKIP_REGULAR_EXPRESSION",
             "DEF_SOURCE_LINE", "LABELS"}  # the last two: records for IDEs and -L, no effect
REGEX_CHARS = 4000  # names per ctest -R run: CMake's regular expressions have a size limit
RUN = re.compile(r"^\[ RUN      \] (\S+)")
RESULT = re.compile(r"^\[\s+(OK|FAILED|SKIPPED)\s+\] (\S+?)(?:, where .*)?(?: \(\d+ ms\))?$")
CTEST_LINE = re.compile(r"Test +#\d+: (.+?) \.+\s*(.*?)\s+[\d.]+ sec")
# Results: OK and SKIPPED pass; every other one is a failure.
PASSING = ("OK", "SKIPPED")


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


LAUNCH_DEFS = {"TEST_EXECUTABLE", "TEST_EXECUTOR", "TEST_FILTER", "TEST_XML_OUTPUT",
               "TEST_EXTRA_ARGS"}


def direct_command(cmd):
    """The GoogleTest command line of a registration: CMake 4.3+ registers discovered cases as
    `cmake -D TEST_EXECUTABLE=... -D TEST_FILTER=... -D TEST_EXTRA_ARGS=... -P LaunchTest.cmake`,
    which runs `exe --gtest_filter=F --gtest_also_run_disabled_tests extra...`; that line is
    returned. None (the case goes to ctest) for anything a group cannot reproduce exactly: an
    executor, an XML report, a setting this driver does not know, or extra arguments whose CMake
    list expansion needs more than splitting at ';' (escapes, brackets)."""
    if len(cmd) < 3 or cmd[-2] != "-P" or not cmd[-1].endswith("LaunchTest.cmake"):
        return cmd
    middle = cmd[1:-2]
    if len(middle) % 2 or any(flag != "-D" for flag in middle[0::2]):
        return None
    defs = {}
    for value in middle[1::2]:
        name, _, text = value.partition("=")
        if name not in LAUNCH_DEFS:
            return None
        defs[name] = text
    extra_text = defs.get("TEST_EXTRA_ARGS", "")
    if (defs.get("TEST_EXECUTOR") or defs.get("TEST_XML_OUTPUT") or
            "TEST_EXECUTABLE" not in defs or any(c in extra_text for c in "\\[]")):
        return None
    extra = extra_text.split(";") if extra_text else []
    return [defs["TEST_EXECUTABLE"], FILTER + defs.get("TEST_FILTER", ""),
            "--gtest_also_run_disabled_tests"] + extra


def split(tests):
    """(groups, singles, disabled, why): groups maps (exe, other args, env, cwd) to [(ctest name,
    gtest name)]: the single GoogleTest cases with no CTest property beyond an environment, a
    working directory and gtest_discover_tests' skip expression. Every other test (fixtures,
    timeouts, WILL_FAIL, patterns, names a joined filter cannot hold) goes to ctest itself;
    DISABLED ones are not run, as ctest does not run them."""
    groups, singles, disabled = {}, [], []
    why = {}  # reason -> count of tests sent to ctest, printed so a new CMake's change shows
    for t in tests:
        p = properties(t)
        if p.get("DISABLED"):
            disabled.append(t["name"])
            continue
        cmd = direct_command(t.get("command") or []) or []
        filters = [a for a in cmd[1:] if a.startswith(FILTER)]
        gname = filters[0][len(FILTER):] if len(filters) == 1 else ""
        plain = gname and not any(c in gname for c in "*?:-")  # '-' starts a filter's negatives
        skip = p.get("SKIP_REGULAR_EXPRESSION", DEFAULT_SKIP)
        reasons = (([] if plain else ["not one plain --gtest_filter name"]) +
                   sorted(set(p) - GROUPABLE) +
                   ([] if list(skip) == DEFAULT_SKIP or skip == DEFAULT_SKIP[0]
                    else ["SKIP_REGULAR_EXPRESSION=%r" % (skip,)]))
        if reasons:
            singles.append(t["name"])
            for r in reasons:
                why[r] = why.get(r, 0) + 1
            continue
        key = (cmd[0], tuple(a for a in cmd[1:] if not a.startswith(FILTER)),
               tuple(p.get("ENVIRONMENT", [])), p.get("WORKING_DIRECTORY", ""))
        groups.setdefault(key, []).append((t["name"], gname))
    return groups, singles, disabled, why


def run_gtest(key, gnames, timeout, tmp):
    """One process over `gnames`. Returns (results, output, crashed): results maps a gtest name
    to OK / FAILED / SKIPPED as GoogleTest's JSON report gives them (its text where the process
    did not get to write one); crashed is the case that was running when the process died or
    timed out (None when it ended normally), and a process that exits non-zero with no case
    failed makes every case of it FAILED (a fault at exit, a sanitizer report: ctest fails
    those too)."""
    exe, args, env_list, cwd = key
    env = dict(os.environ)
    for item in env_list:
        name, _, value = item.partition("=")
        env[name] = value
    report = os.path.join(tmp, "%d.json" % threading.get_ident())
    if os.path.exists(report):
        os.remove(report)
    cmd = [exe, FILTER + ":".join(gnames)] + list(args) + [
        "--gtest_color=no", "--gtest_brief=0", "--gtest_repeat=1", "--gtest_output=json:" + report]
    rc, timed_out = None, False
    try:
        done = subprocess.run(cmd, env=env, cwd=cwd or None, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout)
        out, rc = done.stdout.decode(errors="replace"), done.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        out += "\n[ctest_grouped] timed out after %d s\n" % timeout
        timed_out = True
    except OSError as e:  # no such executable, a filter too long for one argument
        return {}, "[ctest_grouped] %s: %s\n" % (exe, e), None
    results, running = {}, None
    for line in out.splitlines():
        m = RUN.match(line)
        if m:
            running = m.group(1)
            continue
        m = RESULT.match(line.rstrip())
        if m and m.group(2) == running:
            results[running] = m.group(1)
            running = None
    crashed = running if (timed_out or rc != 0) else None
    if not timed_out and rc is not None:
        try:
            with open(report) as f:
                doc = json.load(f)
            results = {}
            for suite in doc.get("testsuites", []):
                for case in suite.get("testsuite", []):
                    name = "%s.%s" % (suite["name"], case["name"])
                    results[name] = ("FAILED" if case.get("failures") else
                                     "SKIPPED" if case.get("result") == "SKIPPED" else "OK")
        except (OSError, ValueError, KeyError):
            pass  # no report (the process died): the text's results stand
        if rc != 0 and crashed is None and not any(r == "FAILED" for r in results.values()):
            results = {g: "FAILED" for g in results}  # it failed after its cases
    return results, out, crashed


def run_chunk(key, chunk, timeout, tmp, log):
    """A chunk of one group. Cases without a result and failed ones are rerun one per process,
    so that a failure is pinned on its case; a case that failed or crashed only beside others
    (an earlier case's sticky CUDA error, say) stays a failure and is reported as such."""
    gnames = [g for _, g in chunk]
    results, out, crashed = run_gtest(key, gnames, timeout, tmp)
    log.append(out)
    again = [g for g in gnames if results.get(g, "FAILED") == "FAILED"]
    # Only where GoogleTest got going (a binary that does not start fails every case alike).
    if again and len(gnames) > 1 and "[==========] Running" in out:
        for g in again:
            one, out1, _ = run_gtest(key, [g], timeout, tmp)
            log.append(out1)
            alone = one.get(g, "NO RESULT")
            if g == crashed and alone in PASSING:
                alone = "CRASHED ONLY BESIDE OTHERS"
            elif results.get(g) == "FAILED" and alone in PASSING:
                alone = "FAILED ONLY BESIDE OTHERS"
            results[g] = alone
    return [(name, results.get(g, "NO RESULT")) for name, g in chunk]


def run_singles(ctest, build, names, exclude, jobs, timeout, log):
    """The tests that are not plain GoogleTest cases, through ctest (fixtures, timeouts and
    the rest of their properties as ctest applies them; the same -E, so that no fixture it
    leaves out comes back). The names go to -R in runs of at most REGEX_CHARS characters."""
    batches, batch, size = [], [], 0
    for n in names:
        e = re.escape(n)
        if batch and size + len(e) + 1 > REGEX_CHARS:
            batches.append(batch)
            batch, size = [], 0
        batch.append(e)
        size += len(e) + 1
    if batch:
        batches.append(batch)
    seen = {}
    for batch in batches:
        cmd = [ctest, "--test-dir", build, "-R", "^(" + "|".join(batch) + ")$", "-j", str(jobs),
               "--timeout", str(timeout)]
        if exclude:
            cmd += ["-E", exclude]
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              errors="replace", text=True)
        log.append(done.stdout)
        for line in done.stdout.splitlines():
            m = CTEST_LINE.search(line)
            if m:
                status = m.group(2)
                seen[m.group(1)] = ("OK" if status == "Passed" else
                                    "SKIPPED" if "Skipped" in status else "FAILED")
    return [(n, seen.get(n, "NO RESULT")) for n in names]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build", help="the CTest build directory")
    parser.add_argument("-R", dest="include", default="", help="ctest -R: names to run")
    parser.add_argument("-E", dest="exclude", default="", help="ctest -E: names to leave out")
    parser.add_argument("-j", dest="jobs", type=int, default=os.cpu_count() or 2,
                        help="processes at once")
    parser.add_argument("--chunk", type=int, default=16,
                        help="at most this many GoogleTest cases per process")
    parser.add_argument("--timeout", type=int, default=900,
                        help="seconds per process (a chunk, or the ctest run of the rest)")
    parser.add_argument("--log-dir", default="", help="where each process's output goes")
    parser.add_argument("--ctest", default="ctest", help=argparse.SUPPRESS)  # tests: a stand-in
    opts = parser.parse_args(argv)
    if opts.jobs < 1 or opts.chunk < 1:
        parser.error("-j and --chunk must be >= 1")
    start = time.time()
    tests = list_tests(opts.ctest, opts.build, opts.include, opts.exclude)
    groups, singles, disabled, why = split(tests)
    for reason, count in sorted(why.items()):
        print("to ctest: %d tests (%s)" % (count, reason))
    work = []
    for key, cases in groups.items():
        # Dealt round-robin: neighbours in the list (the same test for each format, often the
        # slow ones together) land in different processes, so no chunk collects the slow cases.
        n = -(-len(cases) // opts.chunk)
        for i in range(n):
            work.append((key, cases[i::n]))
    logs = [[] for _ in range(len(work) + 1)]
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        rest = pool.submit(run_singles, opts.ctest, opts.build, singles, opts.exclude,
                           max(1, opts.jobs // 4), opts.timeout, logs[-1])
        futures = [pool.submit(run_chunk, key, chunk, opts.timeout, tmp, logs[i])
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
    bad = [(n, r) for n, r in results if r not in PASSING]
    print("%d tests in %d processes (+ ctest for %d): %d passed, %d skipped, %d failed, "
          "%d without a result%s; %.0f s" % (
              len(results), len(work), len(singles), counts.get("OK", 0),
              counts.get("SKIPPED", 0),
              sum(v for k, v in counts.items() if k not in PASSING and k != "NO RESULT"),
              counts.get("NO RESULT", 0),
              ", %d disabled (not run)" % len(disabled) if disabled else "",
              time.time() - start))
    for n, r in bad:
        print("  %s: %s" % (r, n))
    return 1 if bad or not results else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
