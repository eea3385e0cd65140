"""libmla_decode from Python: decode-step Multi-head Latent Attention (DeepSeek-V2/V3/R1).

A ctypes binding of the C ABI (include/mla_decode.h), no compile step. The library is found
through MLA_DECODE_LIBRARY, next to this package, or on the loader path (see _abi), and must
be version 0.7.x with the same mla_decode_params layout.

    import mla_decode as mla
    p = mla.Params(q, kv_cache, qo_indptr, kv_indptr, o, lse, sm_scale=1 / 24,
                   max_q_len=1, max_kv_len=4096)            # torch CUDA tensors
    mla.fwd(p)                                               # on torch's current stream
    with mla.Plan(p) as plan:                                # or: plan once per step ...
        ws = torch.empty(plan.workspace_size, dtype=torch.uint8, device="cuda")
        plan.prepare(p, ws)
        plan.run(p, ws)                                      # ... run once per layer
    mla.reference(host_params)                               # the CPU reference, numpy arrays

With torch: ``mla_decode.decode(q, kv_cache, qo_indptr, kv_indptr, sm_scale, max_q_len,
max_kv_len, ...)`` -> (O, LSE), registered as the custom op ``torch.ops.mla_decode.decode``.
"""
from ._abi import (ABI_VERSION, FLAG_BATCH_INVARIANT, FLAG_FP8_MMA, HEAD_DIM_QK, HEAD_DIM_V,
                   KV_LORA_RANK, MXFP4_BLOCK_SIZE,
                   MXFP4_ROW_BYTES, MXFP4_ROW_SCALES, QK_ROPE_HEAD_DIM, DType, LibraryError,
                   Status, __version__, load_library, mla_decode_params)
from ._api import (MlaError, Params, Plan, backend, dtype, fwd, reference, version,
                   workspace_bound, workspace_size)

try:
    import torch  # noqa: F401  (only to know whether the op can be registered)
except ImportError:
    pass
else:
    from ._torch import decode

__all__ = ["ABI_VERSION", "FLAG_BATCH_INVARIANT", "FLAG_FP8_MMA", "HEAD_DIM_QK", "HEAD_DIM_V",
           "KV_LORA_RANK", "MXFP4_BLOCK_SIZE",
           "MXFP4_ROW_BYTES", "MXFP4_ROW_SCALES", "QK_ROPE_HEAD_DIM", "DType", "LibraryError",
           "MlaError", "Params", "Plan", "Status", "backend", "dtype", "fwd", "load_library",
           "mla_decode_params", "reference", "version", "workspace_bound", "workspace_size"]
if "decode" in globals():
    __all__.append("decode")
else:
    def __getattr__(name):
        if name == "decode":
            raise AttributeError("mla_decode.decode is the torch custom op and needs torch, which "
                                 "does not import here; without torch use Params with fwd / Plan "
                                 "(device arrays) or reference (numpy)")
        raise AttributeError("module 'mla_decode' has no attribute '%s'" % name)
