"""bench/compare_peers.py off the GPU: its report (medians, ratios, geometric means) on made-up
medians, and its MXFP4 quantizer against the decoder of oracle.py (torch on the CPU)."""
import os
import sys

import numpy as np
import pytest

from conftest import REPO_ROOT
from oracle import mxfp4_to_f64

sys.path.insert(0, os.path.join(REPO_ROOT, "bench"))
import compare_peers as cp  # noqa: E402


def test_report(capsys):
    shapes = cp.DEFAULT_SHAPES[:2] + [cp.Shape(64, 1, 4096, 128)]
    medians = {}
    for s, (torch_us, ours_us) in zip(shapes, [(100.0, 25.0), (400.0, 100.0), (90.0, 45.0)]):
        medians[(str(s), "torch", "bf16")] = torch_us
        medians[(str(s), "libmla_decode", "fp8_e4m3fn")] = ours_us
    cp.report(shapes, medians, ["fp8_e4m3fn", "mxfp4"], ["torch"])
    lines = capsys.readouterr().out.splitlines()
    assert lines.count("median us (libmla_decode: Plan.run)") == 1
    # competition geomeans: torch sqrt(100 * 400) = 200, ours sqrt(25 * 100) = 50, ratio 0.25
    medians_block = lines[lines.index("median us (libmla_decode: Plan.run)"):]
    competition = [l for l in medians_block if l.startswith("geomean, competition")]
    assert competition[0].split()[2:] == ["200.00", "50.00", "-"]
    assert competition[1].split()[2:] == ["0.25", "-"]
    every = [l for l in medians_block if l.startswith("geomean, all shapes")]
    assert every[1].split()[3] == "%.2f" % ((0.25 * 0.25 * 0.5) ** (1 / 3))


def test_mxfp4_quantizer():
    torch = pytest.importorskip("torch")
    x = torch.randn(64, 576, generator=torch.Generator().manual_seed(3)) * 0.02
    packed, scales = cp.quantize_mxfp4(torch, x)
    got = mxfp4_to_f64(packed.numpy(), scales.numpy())
    want = x.double().numpy()
    # per block of 32 the scale puts amax in [4, 8) (e2m1 steps): rounding to nearest is within
    # one step, 1 x scale, below 6; saturation at 6 within 2 x scale
    block_scale = np.repeat(2.0 ** (scales.numpy().astype(np.float64) - 127), 32, axis=1)
    err = np.abs(got - want)
    assert np.all(err <= 2 * block_scale) and np.all(err[np.abs(got) < 6 * block_scale]
                                                     <= block_scale[np.abs(got) < 6 * block_scale])
