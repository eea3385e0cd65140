"""workspace_bound (mla_decode_workspace_bound): one workspace for every problem up to a largest
shape. Its argument checks are workspace_size's (the same status and message, raised as MlaError
naming the C function); without a GPU it raises NO_DEVICE; with one, the bound covers the
workspace_size of the largest shape and of smaller ones."""
import pytest

import mla_decode as mla

S = mla.Status


def shape(**changes):
    """Params of a shape and no arrays (what workspace_size and workspace_bound read)."""
    kw = dict(sm_scale=1 / 24, batch_size=64, total_q=128, num_heads=16, num_slots=1 << 20,
              max_q_len=2, max_kv_len=8192, kv_dtype="fp8_e4m3fn", kv_scale=0.5)
    kw.update(changes)
    return mla.Params(**kw)


def status_of(call):
    try:
        call()
    except mla.MlaError as e:
        return e
    return None


def gpu_present():
    e = status_of(lambda: mla.workspace_bound(shape()))
    assert e is None or e.status == S.NO_DEVICE, e
    return e is None


def test_exported_beside_workspace_size():
    assert "workspace_bound" in mla.__all__
    assert callable(mla.workspace_bound)


@pytest.mark.parametrize("changes, status, words", [
    (dict(sm_scale=-1.0), S.INVALID_VALUE, "sm_scale"),
    (dict(num_heads=12), S.UNSUPPORTED, "num_heads 12"),
    (dict(num_slots=-1), S.INVALID_SIZE, "num_slots"),
    (dict(max_q_len=200), S.INVALID_SIZE, "max_q_len"),
    (dict(batch_invariant=True, num_heads=24), S.UNSUPPORTED, "num_heads"),
])
def test_refuses_what_workspace_size_refuses(changes, status, words):
    p = shape(**changes)
    bound = status_of(lambda: mla.workspace_bound(p))
    size = status_of(lambda: mla.workspace_size(p))
    assert bound is not None and size is not None
    assert (bound.status, bound.message) == (size.status, size.message)
    assert bound.status == status and words in bound.message, bound
    assert bound.function == "mla_decode_workspace_bound"
    assert bound.status_name == "MLA_STATUS_" + status.name


def test_no_device():
    if gpu_present():
        pytest.skip("a GPU is present: test_covers_smaller_shapes runs instead")
    e = status_of(lambda: mla.workspace_bound(shape()))
    assert e.status == S.NO_DEVICE and e.function == "mla_decode_workspace_bound"


def test_covers_smaller_shapes():
    if not gpu_present():
        pytest.skip("no GPU: the bound needs the device's facts")
    for invariant in (False, True):
        bound = mla.workspace_bound(shape(batch_invariant=invariant))
        sizes = [mla.workspace_size(shape(batch_size=b, total_q=b * q, max_q_len=q,
                                          max_kv_len=kv, batch_invariant=invariant))
                 for b in (1, 3, 16, 64) for q in (1, 2) for kv in (0, 1000, 8192)]
        # Coverage only: how tight the bound is, the C++ test_plan checks over every batch and
        # a grid of lengths; this coarse sample misses the largest plans (on the H200 at batch
        # 52, 2880 tokens: 2x the sample's largest).
        assert max(sizes) <= bound, (invariant, bound, sizes)
