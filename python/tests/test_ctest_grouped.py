"""tests/ctest_grouped.py off the GPU: a stand-in ctest (the JSON test list, and a run of the
other tests) and a stand-in GoogleTest binary whose cases pass, fail, skip, need an environment
setting, or crash the process; checks the grouping into processes, the per-case results, the
rerun of a crashed chunk's cases one by one, and the exit status."""
import json
import os
import stat
import sys

import pytest

from conftest import REPO_ROOT

sys.path.insert(0, os.path.join(REPO_ROOT, "tests"))
import ctest_grouped  # noqa: E402

GTEST = r'''#!/usr/bin/env python3
import json, os, sys
names = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--gtest_filter=")][0]
assert "--gtest_also_run_disabled_tests" in sys.argv
with open(os.environ["FAKE_PROCS"], "a") as f:
    f.write(names + "\n")
names = names.split(":")
print("[==========] Running %d tests from 1 test suite." % len(names))
for n in names:
    print("[ RUN      ] " + n)
    if n.endswith("crash"):
        sys.stdout.flush()
        os._exit(134)
    if n.endswith("skip"):
        print("[  SKIPPED ] %s (0 ms)" % n)
    elif n.endswith("fail") or (n.endswith("env") and os.environ.get("NEED") != "1"):
        print("[  FAILED  ] %s, where GetParam() = (x, 1) (3 ms)" % n)
    else:
        print("[       OK ] %s (1 ms)" % n)
print("[  PASSED  ] 1 test.")
report = [a.split(":", 1)[1] for a in sys.argv[1:] if a.startswith("--gtest_output=json:")]
if report and not os.environ.get("FAKE_NO_JSON"):  # the report a finished run writes
    suites = {}
    for n in names:
        suite, case = n.split(".", 1)
        result = {"name": case, "result": "SKIPPED" if n.endswith("skip") else "COMPLETED"}
        if n.endswith("fail") or (n.endswith("env") and os.environ.get("NEED") != "1"):
            result["failures"] = [{"failure": "x"}]
        suites.setdefault(suite, []).append(result)
    json.dump({"testsuites": [{"name": k, "testsuite": v} for k, v in suites.items()]},
              open(report[0], "w"))
if any(n.endswith("atexit") for n in names):
    sys.exit(66)  # every case passed, then the process fails (a sanitizer report at exit)
'''

CTEST = r'''#!/usr/bin/env python3
import json, os, re, sys
if "--show-only=json-v1" in sys.argv:
    print(open(os.environ["FAKE_LIST"]).read())
    sys.exit(0)
pattern = sys.argv[sys.argv.index("-R") + 1]
with open(os.path.join(os.path.dirname(os.environ["FAKE_LIST"]), "ctest_runs"), "a") as f:
    f.write(pattern + "\n")
names = [re.sub(r"\\(.)", r"\1", n) for n in re.split(r"(?<!\\)\|", pattern[2:-2])]
for i, name in enumerate(names):
    print("%d/9 Test  #%d: %s ....................   %s    0.01 sec" % (
        i + 1, i + 1, name, "***Failed" if name.endswith("fail") else "Passed"))
'''


def make_exe(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def gtest_case(name, exe, env=None):
    props = [{"name": "WORKING_DIRECTORY", "value": "/"}]
    if env:
        props.append({"name": "ENVIRONMENT", "value": env})
    return {"name": name + "  # GetParam() = 1" + (".env" if env else ""),
            "command": [exe, "--gtest_filter=" + name, "--gtest_also_run_disabled_tests"],
            "properties": props}


@pytest.fixture
def fakes(tmp_path, monkeypatch):
    gtest = make_exe(tmp_path / "fake_gtest", GTEST)
    ctest = make_exe(tmp_path / "fake_ctest", CTEST)
    monkeypatch.setenv("FAKE_PROCS", str(tmp_path / "procs"))
    monkeypatch.setenv("FAKE_LIST", str(tmp_path / "list.json"))
    monkeypatch.delenv("NEED", raising=False)

    def write_list(tests):
        (tmp_path / "list.json").write_text(json.dumps({"tests": tests}))

    return gtest, ctest, write_list, tmp_path


def test_groups_by_executable_and_environment_in_chunks(fakes, capsys):
    gtest, ctest, write_list, tmp = fakes
    names = ["S.a_pass", "S.b_skip", "P/S.c_pass/1", "S.d_pass", "S.e_pass"]
    write_list([gtest_case(n, gtest) for n in names] +
               [gtest_case("S.f_env", gtest, ["NEED=1"]), gtest_case("S.g_env", gtest)] +
               [{"name": "single_pass", "command": ["/bin/true"], "properties": []}])
    rc = ctest_grouped.main(["--ctest", ctest, "--build", str(tmp), "-j", "3", "--chunk", "2"])
    assert rc == 1  # S.g_env runs without NEED=1 and fails
    procs = (tmp / "procs").read_text().split()
    # 5 plain cases and S.g_env (the same executable, arguments and environment) dealt
    # round-robin into 3 chunks of at most 2, the NEED=1 case alone; S.g_env failed in its
    # chunk, so it runs once more alone.
    assert sorted(procs) == sorted(["S.a_pass:S.d_pass", "S.b_skip:S.e_pass",
                                    "P/S.c_pass/1:S.g_env", "S.f_env", "S.g_env"])
    out = capsys.readouterr().out
    assert "8 tests in 4 processes (+ ctest for 1): 6 passed, 1 skipped, 1 failed" in out
    assert "FAILED: S.g_env  # GetParam() = 1" in out


def test_a_crashed_chunk_is_rerun_case_by_case(fakes, capsys):
    gtest, ctest, write_list, tmp = fakes
    write_list([gtest_case(n, gtest) for n in ["S.a_pass", "S.b_crash", "S.c_pass"]])
    rc = ctest_grouped.main(["--ctest", ctest, "--build", str(tmp), "--chunk", "8"])
    assert rc == 1
    procs = (tmp / "procs").read_text().split()
    assert procs == ["S.a_pass:S.b_crash:S.c_pass", "S.b_crash", "S.c_pass"]
    out = capsys.readouterr().out
    assert "3 tests in 1 processes (+ ctest for 0): 2 passed, 0 skipped, 0 failed, " \
           "1 without a result" in out
    assert "NO RESULT: S.b_crash" in out


def test_singles_go_to_ctest_and_count_in_the_exit_status(fakes, capsys):
    gtest, ctest, write_list, tmp = fakes
    write_list([gtest_case("S.a_pass", gtest),
                {"name": "install_fail", "command": ["/bin/false"], "properties": []},
                {"name": "c_api_pass", "command": ["/bin/true"], "properties": []}])
    assert ctest_grouped.main(["--ctest", ctest, "--build", str(tmp), "-E", "install_"]) == 1
    assert "FAILED: install_fail" in capsys.readouterr().out
    write_list([gtest_case("S.a_pass", gtest),
                {"name": "c_api_pass", "command": ["/bin/true"], "properties": []}])
    assert ctest_grouped.main(["--ctest", ctest, "--build", str(tmp)]) == 0
    assert "2 tests in 1 processes (+ ctest for 1): 2 passed" in capsys.readouterr().out


def test_a_case_that_fails_only_beside_others_is_told_apart(fakes, capsys, monkeypatch):
    # S.b_env fails in the chunk (NEED unset there) and passes alone (the stand-in sets NEED
    # for single-case runs), as a case hit by an earlier case's sticky error.
    gtest, ctest, write_list, tmp = fakes
    make_exe(tmp / "fake_gtest", GTEST.replace(
        'names = names.split(":")',
        'names = names.split(":")\nif len(names) == 1: os.environ["NEED"] = "1"'))
    write_list([gtest_case(n, gtest) for n in ["S.a_pass", "S.b_env", "S.c_fail"]])
    assert ctest_grouped.main(["--ctest", ctest, "--build", str(tmp)]) == 1
    procs = (tmp / "procs").read_text().split()
    assert procs == ["S.a_pass:S.b_env:S.c_fail", "S.b_env", "S.c_fail"]
    out = capsys.readouterr().out
    assert "3 tests in 1 processes (+ ctest for 0): 1 passed, 0 skipped, 2 failed" in out
    assert "FAILED ONLY BESIDE OTHERS: S.b_env" in out
    assert "FAILED: S.c_fail" in out


def test_a_process_that_fails_after_its_cases_fails_them(fakes, capsys, monkeypatch):
    gtest, ctest, write_list, tmp = fakes
    write_list([gtest_case(n, gtest) for n in ["S.a_pass", "S.b_atexit"]])
    assert ctest_grouped.main(["--ctest", ctest, "--build", str(tmp)]) == 1
    out = capsys.readouterr().out
    # Alone, S.a_pass passes (its chunk's failure stays on it) and S.b_atexit fails again.
    assert "FAILED ONLY BESIDE OTHERS: S.a_pass" in out
    assert "FAILED: S.b_atexit" in out


def test_the_text_stands_in_for_a_missing_report(fakes, capsys, monkeypatch):
    gtest, ctest, write_list, tmp = fakes
    monkeypatch.setenv("FAKE_NO_JSON", "1")
    write_list([gtest_case(n, gtest) for n in ["S.a_pass", "P/S.b/2_skip", "S.c_fail"]])
    assert ctest_grouped.main(["--ctest", ctest, "--build", str(tmp)]) == 1
    assert "3 tests in 1 processes (+ ctest for 0): 1 passed, 1 skipped, 1 failed" in \
        capsys.readouterr().out


def test_properties_beyond_the_plain_ones_go_to_ctest_and_disabled_ones_do_not_run(fakes, capsys):
    gtest, ctest, write_list, tmp = fakes
    timed = gtest_case("S.t_pass", gtest)
    timed["properties"].append({"name": "TIMEOUT", "value": 5.0})
    off = gtest_case("S.d_fail", gtest)
    off["properties"].append({"name": "DISABLED", "value": True})
    dash = gtest_case("S.x-y_pass", gtest)
    write_list([gtest_case("S.a_pass", gtest), timed, off, dash])
    assert ctest_grouped.main(["--ctest", ctest, "--build", str(tmp)]) == 0
    procs = (tmp / "procs").read_text().split()
    assert procs == ["S.a_pass"]  # the others: through the stand-in ctest, or not at all
    assert "3 tests in 1 processes (+ ctest for 2): 3 passed, 0 skipped, 0 failed, 0 without " \
        "a result, 1 disabled (not run)" in capsys.readouterr().out


def test_records_without_effect_group_and_other_properties_are_counted(fakes, capsys):
    gtest, ctest, write_list, tmp = fakes
    lined = gtest_case("S.a_pass", gtest)
    lined["properties"].append({"name": "DEF_SOURCE_LINE", "value": "/x/test.cpp:12"})
    odd = gtest_case("S.b_pass", gtest)
    odd["properties"].append({"name": "RUN_SERIAL", "value": True})
    write_list([lined, odd])
    assert ctest_grouped.main(["--ctest", ctest, "--build", str(tmp)]) == 0
    assert (tmp / "procs").read_text().split() == ["S.a_pass"]
    out = capsys.readouterr().out
    assert "to ctest: 1 tests (RUN_SERIAL)" in out
    assert "2 tests in 1 processes (+ ctest for 1): 2 passed" in out


def test_many_singles_go_to_ctest_in_runs_a_regular_expression_holds(fakes, capsys):
    gtest, ctest, write_list, tmp = fakes
    names = ["single_%03d_with_a_long_name_pass" % i for i in range(400)]
    names[123] = names[123][:-4] + "fail"
    write_list([{"name": n, "command": ["/bin/true"], "properties": []} for n in names])
    assert ctest_grouped.main(["--ctest", ctest, "--build", str(tmp)]) == 1
    runs = (tmp / "ctest_runs").read_text().split()
    assert len(runs) >= 3 and max(len(r) for r in runs) <= ctest_grouped.REGEX_CHARS + 4
    out = capsys.readouterr().out
    assert "400 tests in 0 processes (+ ctest for 400): 399 passed, 0 skipped, 1 failed" in out
    assert "FAILED: single_123_with_a_long_name_fail" in out


def test_cmake_4_launch_script_registrations_group_like_direct_ones(fakes, capsys):
    gtest, ctest, write_list, tmp = fakes

    def launched(name, executor=""):
        case = gtest_case(name, gtest)
        case["command"] = ["/usr/bin/cmake", "-D", "TEST_EXECUTABLE=" + gtest, "-D",
                           "TEST_EXECUTOR=" + executor, "-D", "TEST_FILTER=" + name, "-D",
                           "TEST_XML_OUTPUT=", "-D", "TEST_EXTRA_ARGS=", "-P",
                           "/usr/share/cmake-4.4/Modules/GoogleTest/LaunchTest.cmake"]
        return case

    write_list([launched("S.a_pass"), launched("S.b_fail"), gtest_case("S.c_pass", gtest),
                launched("S.d_pass", executor="valgrind")])
    assert ctest_grouped.main(["--ctest", ctest, "--build", str(tmp)]) == 1
    # one process for the three (launch script or not), S.b_fail again alone; the executor's
    # case goes to ctest
    assert (tmp / "procs").read_text().split() == ["S.a_pass:S.b_fail:S.c_pass", "S.b_fail"]
    out = capsys.readouterr().out
    assert "to ctest: 1 tests (not one plain --gtest_filter name)" in out
    assert "4 tests in 1 processes (+ ctest for 1): 3 passed, 0 skipped, 1 failed" in out


def test_launch_script_forms_a_group_cannot_reproduce_go_to_ctest():
    exe, script = "/b/t", "/usr/share/cmake-4.4/Modules/GoogleTest/LaunchTest.cmake"

    def launch(*defs):
        cmd = ["/usr/bin/cmake"]
        for d in defs:
            cmd += ["-D", d]
        return cmd + ["-P", script]

    plain = launch("TEST_EXECUTABLE=" + exe, "TEST_FILTER=S.a", "TEST_EXTRA_ARGS=--x;--y=1")
    assert ctest_grouped.direct_command(plain) == [
        exe, "--gtest_filter=S.a", "--gtest_also_run_disabled_tests", "--x", "--y=1"]
    for bad in (launch("TEST_EXECUTABLE=" + exe, "TEST_FILTER=S.a", "TEST_EXTRA_ARGS=--a\\;b"),
                launch("TEST_EXECUTABLE=" + exe, "TEST_FILTER=S.a", "TEST_EXTRA_ARGS=--c=[1;2]"),
                launch("TEST_EXECUTABLE=" + exe, "TEST_FILTER=S.a", "TEST_NEW_SETTING=1"),
                launch("TEST_EXECUTABLE=" + exe, "TEST_FILTER=S.a", "TEST_XML_OUTPUT=/x.xml"),
                ["/usr/bin/cmake", "-DTEST_EXECUTOR=valgrind", "-D", "TEST_EXECUTABLE=" + exe,
                 "-D", "TEST_FILTER=S.a", "-P", script]):
        assert ctest_grouped.direct_command(bad) is None, bad


def test_no_jobs_or_chunk_is_a_usage_error(capsys):
    for bad in (["-j", "0"], ["--chunk", "0"]):
        with pytest.raises(SystemExit) as info:
            ctest_grouped.main(["--build", "/nonexistent"] + bad)
        assert info.value.code == 2
        assert "-j and --chunk must be >= 1" in capsys.readouterr().err
