"""bench/ncu_sass_summary.py off the GPU: a hand-made source-page CSV in ncu's shape (a kernel
line, a header, one row per SASS instruction) through the whole summary: stall totals,
segments at landmarks (a try-wait's spin branch on its own), top instructions, --range."""
import io
import os
import sys

import pytest

from conftest import REPO_ROOT

sys.path.insert(0, os.path.join(REPO_ROOT, "bench"))
import ncu_sass_summary as ns  # noqa: E402

HEADER = ["Address", "Source", "Warp Stall Sampling (All Samples)",
          "Warp Stall Sampling (Not-issued Samples)", "Instructions Executed", "stall_long_sb",
          "stall_barrier", "stall_math", "stall_long_sb (Not Issued)"]
# (source, samples, executed, long_sb, barrier, math)
ROWS = [
    ("LDC R1, c[0x0][0x28]", 2, 10, 0, 0, 2),
    ("SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R2", 1, 40, 1, 0, 0),
    ("@!P0  BRA 0x10", 50, 40, 50, 0, 0),
    ("HGMMA.64x64x16.F32 R24, R184, gdesc[UR16], RZ", 5, 20, 0, 0, 5),
    ("WARPGROUP.DEPBAR.LE gsb0, 0x0", 30, 20, 0, 30, 0),
    ("FMUL R2, R3, R4", 10, 80, 0, 0, 10),
    ("EXIT", 2, 10, 0, 0, 2),
]


def write_csv(path):
    def q(cells):
        return ",".join('"%s"' % c for c in cells)
    lines = [q(["Kernel Name", "void k<64>(Params)"]) + ",", q(HEADER)]
    for i, (src, s, e, lsb, bar, math) in enumerate(ROWS):
        lines.append(q(["0x%x" % (16 * i), "      " + src, s, s, e, lsb, bar, math, lsb]))
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def run(path, *args):
    out = io.StringIO()
    ns.summarize(path, *args, out=out)
    return out.getvalue()


def test_totals_segments_and_top(tmp_path):
    text = run(write_csv(tmp_path / "sass.csv"), 2, 0.0)
    assert "kernel: void k<64>(Params)" in text
    assert "instructions: 7, samples: 100" in text
    # Not-issued columns are not counted twice; shares of all samples.
    assert "long_sb                           51  51.0%" in text
    assert "barrier                           30  30.0%" in text
    # Segments: up to the try-wait, its spin branch alone, up to the MMA wait, then to the exit.
    assert "      0-    1       3   3.0% exec         50 | SYNCS.PHASECHK" in text
    assert "      2-    2      50  50.0% exec         40 | @!P0  BRA 0x10" in text
    assert "      3-    4      35  35.0% exec         40 | WARPGROUP.DEPBAR.LE gsb0, 0x0" in text
    assert "      5-    6      12  12.0% exec         90 | EXIT" in text
    # The two instructions with the most samples, in program order, with their reasons.
    top = text.split("top 2 instructions by samples:")[1].strip().splitlines()
    assert len(top) == 2
    assert top[0].split()[0] == "2" and "long_sb 50" in top[0]
    assert top[1].split()[0] == "4" and "barrier 30" in top[1]


def test_min_share_and_range(tmp_path):
    path = write_csv(tmp_path / "sass.csv")
    text = run(path, 1, 40.0)
    seg = text.split("segments")[1].split("top")[0]
    assert "BRA 0x10" in seg and "DEPBAR" not in seg  # 35 % < 40 %
    # Instructions 3..5 only: indices stay those of the whole kernel.
    text = run(path, 1, 0.0, (3, 6))
    assert "instructions: 3, samples: 45 (instructions 3..5)" in text
    assert "      3-    4      35  77.8%" in text


def test_not_a_source_page(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text('"ID","Kernel Name"\n"0","k"\n')
    with pytest.raises(ValueError, match="no ncu source-page header"):
        ns.read(str(bad))
