"""bench/ab.py off the GPU: two fake benchmark binaries (scripts that write mla_bench's CSV
columns with made-up medians, scaled by an environment variable) through the whole driver:
sides with settings, alternating rounds, medians over rounds, ratios, geomean, CSV."""
import csv
import os
import stat
import sys

import pytest

from conftest import REPO_ROOT

sys.path.insert(0, os.path.join(REPO_ROOT, "bench"))
import ab  # noqa: E402

# A fake mla_bench: two cases; median = base * FAKE_SCALE, plus the pass number (kept in a file)
# so that rounds differ and the median over rounds is the middle one.
FAKE = r'''#!/usr/bin/env python3
import os, sys
out = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--mla_csv=")][0]
assert "--mla_no_check" in sys.argv and "--extra_flag" in sys.argv
counter = os.environ["FAKE_COUNTER"]
n = int(open(counter).read()) if os.path.exists(counter) else 0
open(counter, "w").write(str(n + 1))
if os.environ.get("FAKE_FAIL_AT") == str(n):
    sys.exit(5)
scale = float(os.environ.get("FAKE_SCALE", "1"))
cols = "bs,q_len,kv_len,heads,kv_format,q_format,page_size,lengths,q_lens,median_us,variant,rows_per_cta,splits,fwd_median_us"
floor = os.environ.get("FAKE_FLOOR") == "1"  # mla_bench on a GPU: a cold-read floor per case
with open(out, "w") as f:
    f.write(cols + (",floor_read_us" if floor else "") + "\n")
    f.write("4,1,1024,16,fp8_e4m3fn,bf16,1,equal,equal,%.2f,mma16,16,16,%.2f" % (10 * scale + n, 1000 * scale + n) +
            (",%.2f" % (4 + n) if floor else "") + "\n")
    f.write("64,1,4096,128,fp8_e4m3fn,bf16,1,equal,equal,%.2f,wgmma,64,1,%.2f" % (100 * scale + n, 2000 * scale + n) +
            (",%.2f" % (40 + n) if floor else "") + "\n")
'''


@pytest.fixture
def fake_bench(tmp_path):
    path = tmp_path / "fake_bench"
    path.write_text(FAKE)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_parse_side():
    assert ab.parse_side("A=1 B=x=y ./bin") == ({"A": "1", "B": "x=y"}, "./bin")
    assert ab.parse_side("/abs/bin") == ({}, "/abs/bin")
    with pytest.raises(ValueError):
        ab.parse_side("A=1")
    with pytest.raises(ValueError):
        ab.parse_side("bin1 bin2")


def test_two_sides_three_rounds(fake_bench, tmp_path, capsys, monkeypatch):
    counter = tmp_path / "counter"
    monkeypatch.setenv("FAKE_COUNTER", str(counter))
    out = tmp_path / "ab.csv"
    rc = ab.main(["--rounds", "3", "--csv", str(out), "FAKE_SCALE=1 " + fake_bench,
                  "FAKE_SCALE=0.5 " + fake_bench, "--", "--extra_flag"])
    assert rc == 0
    assert counter.read_text() == "6"  # 3 rounds x 2 sides
    # Passes in order: r0 A(0) B(1), r1 B(2) A(3), r2 A(4) B(5).
    # A: 10 + {0, 3, 4} -> median 13; B: 5 + {1, 2, 5} -> 7. 128 heads: A 103, B 52.
    rows = list(csv.DictReader(open(out)))
    assert [(r["heads"], r["a_us"], r["b_us"]) for r in rows] == [
        ("16", "13.00", "7.00"), ("128", "103.00", "52.00")]
    assert float(rows[0]["b_over_a"]) == pytest.approx(7 / 13, abs=1e-4)
    assert rows[1]["a_route"] == "wgmma 64/1"
    text = capsys.readouterr().out
    geo = [l for l in text.splitlines() if l.startswith("geomean")][0].split()
    assert float(geo[3]) == pytest.approx(((7 / 13) * (52 / 103)) ** 0.5, abs=1e-3)


def test_metric_fwd_compares_the_one_shot_column(fake_bench, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_COUNTER", str(tmp_path / "counter"))
    out = tmp_path / "ab.csv"
    rc = ab.main(["--rounds", "1", "--csv", str(out), "--metric", "fwd_median_us",
                  "FAKE_SCALE=1 " + fake_bench, "FAKE_SCALE=0.5 " + fake_bench, "--",
                  "--extra_flag"])
    assert rc == 0
    rows = list(csv.DictReader(open(out)))
    # Pass 0 is A (fwd 1000 + 0, 2000 + 0), pass 1 is B (500 + 1, 1000 + 1).
    assert [(r["a_us"], r["b_us"]) for r in rows] == [("1000.00", "501.00"),
                                                      ("2000.00", "1001.00")]
    with pytest.raises(SystemExit):
        ab.main(["--metric", "nope", "A", "B"])


def test_a_failing_side_raises(tmp_path):
    bad = tmp_path / "bad"
    bad.write_text("#!/bin/sh\necho broken\nexit 3\n")
    bad.chmod(bad.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(RuntimeError, match="exited with 3"):
        ab.main([str(bad), str(bad)])


def test_a_malformed_side_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        ab.main(["A=1", "./bin"])
    assert info.value.code == 2
    assert "a side is 'NAME=VALUE ... BINARY'" in capsys.readouterr().err


def test_each_round_reports_so_that_a_cut_run_keeps_its_rounds(fake_bench, tmp_path, capsys,
                                                                monkeypatch):
    # Pass 4 (round 3's first) fails, as a timeout would stop it: rounds 1 and 2 were reported
    # on stderr and are in the CSV.
    monkeypatch.setenv("FAKE_COUNTER", str(tmp_path / "counter"))
    monkeypatch.setenv("FAKE_FAIL_AT", "4")
    out = tmp_path / "ab.csv"
    with pytest.raises(RuntimeError, match="exited with 5"):
        ab.main(["--rounds", "3", "--csv", str(out), "FAKE_SCALE=1 " + fake_bench,
                 "FAKE_SCALE=0.5 " + fake_bench, "--", "--extra_flag"])
    err = capsys.readouterr().err
    assert "1 round (after round 1 of 3)" in err
    assert "2 rounds (after round 2 of 3)" in err
    # After 2 rounds: A passes 0 and 3 -> 10 + {0, 3}, median 11.5; B passes 1 and 2 -> 6.5.
    rows = list(csv.DictReader(open(out)))
    assert [(r["heads"], r["a_us"], r["b_us"]) for r in rows] == [
        ("16", "11.50", "6.50"), ("128", "101.50", "51.50")]


def test_floors_of_every_pass_make_the_benchmark_table(fake_bench, tmp_path, capsys,
                                                       monkeypatch):
    monkeypatch.setenv("FAKE_COUNTER", str(tmp_path / "counter"))
    monkeypatch.setenv("FAKE_FLOOR", "1")
    out = tmp_path / "ab.csv"
    assert ab.main(["--rounds", "3", "--csv", str(out), "FAKE_SCALE=1 " + fake_bench,
                    "FAKE_SCALE=0.5 " + fake_bench, "--", "--extra_flag"]) == 0
    # Floors of passes 0..5: 4 + n and 40 + n -> medians 6.5 and 42.5; B as above, 7 and 52.
    rows = list(csv.DictReader(open(out)))
    assert [(r["floor_us"], r["b_x_floor"]) for r in rows] == [
        ("6.50", "%.3f" % (7 / 6.5)), ("42.50", "%.3f" % (52 / 42.5))]
    text = capsys.readouterr().out
    assert "B x fl" in text.splitlines()[3]
    geo = [l for l in text.splitlines() if l.startswith("geomean")][0].split()
    assert float(geo[4]) == pytest.approx((6.5 * 42.5) ** 0.5, abs=1e-2)
    assert float(geo[5]) == pytest.approx(((7 / 6.5) * (52 / 42.5)) ** 0.5, abs=1e-2)


def test_no_floor_columns_without_floors(fake_bench, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_COUNTER", str(tmp_path / "counter"))
    out = tmp_path / "ab.csv"
    assert ab.main(["--rounds", "1", "--csv", str(out), fake_bench, fake_bench, "--",
                    "--extra_flag"]) == 0
    assert all(r["floor_us"] == "" for r in csv.DictReader(open(out)))
    assert "B x fl" not in capsys.readouterr().out  # (the tmp path holds "floor")


def test_three_sides_rotate_and_compare_with_a(fake_bench, tmp_path, capsys, monkeypatch):
    counter = tmp_path / "counter"
    monkeypatch.setenv("FAKE_COUNTER", str(counter))
    monkeypatch.setenv("FAKE_FLOOR", "1")
    out = tmp_path / "ab.csv"
    rc = ab.main(["--rounds", "3", "--csv", str(out), "FAKE_SCALE=1 " + fake_bench,
                  "FAKE_SCALE=0.5 " + fake_bench, "FAKE_SCALE=2 " + fake_bench, "--",
                  "--extra_flag"])
    assert rc == 0
    assert counter.read_text() == "9"  # 3 rounds x 3 sides
    # Passes in order: r0 A(0) B(1) C(2), r1 B(3) C(4) A(5), r2 C(6) A(7) B(8).
    # A: 10 + {0, 5, 7} -> 15; B: 5 + {1, 3, 8} -> 8; C: 20 + {2, 4, 6} -> 24.
    # 128 heads: A 105, B 53, C 204. Floors: 4 + median(0..8) = 8 and 44.
    rows = list(csv.DictReader(open(out)))
    assert [(r["a_us"], r["b_us"], r["c_us"]) for r in rows] == [
        ("15.00", "8.00", "24.00"), ("105.00", "53.00", "204.00")]
    assert float(rows[0]["c_over_a"]) == pytest.approx(24 / 15, abs=1e-4)
    assert [(r["floor_us"], r["b_x_floor"], r["c_x_floor"]) for r in rows] == [
        ("8.00", "%.3f" % (8 / 8), "%.3f" % (24 / 8)), ("44.00", "%.3f" % (53 / 44),
                                                      "%.3f" % (204 / 44))]
    assert rows[1]["c_route"] == "wgmma 64/1"
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0].startswith("A: ") and lines[2].startswith("C: ")
    assert "C / A" in lines[4] and "C x fl" in lines[4]
    geo = [l for l in lines if l.startswith("geomean")][0].split()
    # geomean A, B, B / A, C, C / A, floor, B x fl, C x fl
    assert float(geo[5]) == pytest.approx(((24 / 15) * (204 / 105)) ** 0.5, abs=1e-3)
    assert float(geo[6]) == pytest.approx((8 * 44) ** 0.5, abs=1e-2)


def test_one_side_is_a_usage_error(fake_bench, capsys):
    with pytest.raises(SystemExit) as info:
        ab.main([fake_bench])
    assert info.value.code == 2
    assert "2 to 26 sides" in capsys.readouterr().err


def test_one_token_pages_and_a_contiguous_cache_are_two_cases():
    # mla_bench writes page_size 1 for both; the "cache" column tells them apart.
    def key(page_size, cache):
        d = {"bs": "4", "q_len": "1", "kv_len": "8192", "heads": "16", "kv_format": "fp8_e4m3fn",
             "q_format": "bf16", "page_size": page_size, "cache": cache, "lengths": "equal",
             "q_lens": "equal"}
        return tuple(d[k] for k in ab.KEY)
    assert key("1", "paged") != key("1", "contiguous")
    assert ab.label(key("1", "contiguous")) == "fp8_e4m3fn bs4 kv8192 H16 q1"
    assert ab.label(key("1", "paged")) == "fp8_e4m3fn bs4 kv8192 H16 q1 page1"
    assert ab.label(key("16", "paged")) == "fp8_e4m3fn bs4 kv8192 H16 q1 page16"
    assert key("1", "paged_ordered") != key("1", "paged")
    assert ab.label(key("1", "paged_ordered")) == "fp8_e4m3fn bs4 kv8192 H16 q1 page1 ordered"
    assert ab.label(key("", "")) == "fp8_e4m3fn bs4 kv8192 H16 q1"
