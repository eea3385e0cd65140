"""The decode as a torch operator: ``torch.ops.mla_decode.decode`` (imported when torch is).

A functional custom op (torch.library.custom_op, torch >= 2.4) with a fake implementation, so
torch.compile and graph capture see one opaque op whose outputs have known shapes: O
(total_q, num_heads, 512) bf16 and LSE (total_q, num_heads) float32, new tensors on q's
device. It runs the one-shot mla_decode_fwd on torch's current stream of that device, with a
workspace from torch's allocator. With an older torch, ``decode`` is the same function, not
registered as an op.
"""
from typing import Optional, Tuple

import torch

from ._abi import HEAD_DIM_V
from ._api import Params, fwd

_OP_NAME = "mla_decode::decode"


def _decode(q: torch.Tensor, kv_cache: torch.Tensor, qo_indptr: torch.Tensor,
            kv_indptr: torch.Tensor, sm_scale: float, max_q_len: int, max_kv_len: int,
            kv_dtype: str = "", kv_scale: float = 1.0, q_dtype: str = "", q_scale: float = 1.0,
            kv_block_scales: Optional[torch.Tensor] = None,
            v_cache: Optional[torch.Tensor] = None, v_dtype: str = "", v_scale: float = 1.0,
            kv_page_indptr: Optional[torch.Tensor] = None,
            kv_page_indices: Optional[torch.Tensor] = None,
            page_size: int = 0, q_pe: Optional[torch.Tensor] = None,
            kpe_cache: Optional[torch.Tensor] = None,
            kpe_dtype: str = "") -> Tuple[torch.Tensor, torch.Tensor]:
    """(O, LSE) of one decode step. Arguments as Params' (empty dtype strings and page_size 0
    mean "from the tensors"); q, the caches and the indptrs are device tensors. With q_pe, q is
    q_nope (the split Q form); with kpe_cache, kv_cache holds the latent rows (the split cache
    form)."""
    total_q, heads = q.shape[0], q.shape[1]
    o = torch.empty(total_q, heads, HEAD_DIM_V, dtype=torch.bfloat16, device=q.device)
    lse = torch.empty(total_q, heads, dtype=torch.float32, device=q.device)
    params = Params(q, kv_cache, qo_indptr, kv_indptr, o, lse, sm_scale=sm_scale,
                    max_q_len=max_q_len, max_kv_len=max_kv_len, q_dtype=q_dtype or None,
                    q_scale=q_scale, kv_dtype=kv_dtype or None, kv_scale=kv_scale,
                    kv_block_scales=kv_block_scales, v_cache=v_cache,
                    v_dtype=v_dtype or None, v_scale=v_scale, kv_page_indptr=kv_page_indptr,
                    kv_page_indices=kv_page_indices, page_size=page_size or None, q_pe=q_pe,
                    kpe_cache=kpe_cache, kpe_dtype=kpe_dtype or None)
    with torch.cuda.device(q.device):  # the library works on the current device
        fwd(params)
    return o, lse


def _decode_fake(q, kv_cache, qo_indptr, kv_indptr, sm_scale, max_q_len, max_kv_len,
                 kv_dtype="", kv_scale=1.0, q_dtype="", q_scale=1.0, kv_block_scales=None,
                 v_cache=None, v_dtype="", v_scale=1.0, kv_page_indptr=None,
                 kv_page_indices=None, page_size=0, q_pe=None, kpe_cache=None, kpe_dtype=""):
    total_q, heads = q.shape[0], q.shape[1]
    return (q.new_empty((total_q, heads, HEAD_DIM_V), dtype=torch.bfloat16),
            q.new_empty((total_q, heads), dtype=torch.float32))


if hasattr(torch.library, "custom_op"):
    decode = torch.library.custom_op(_OP_NAME, mutates_args=())(_decode)
    decode.register_fake(_decode_fake)
else:  # torch < 2.4: callable eagerly, opaque to nothing
    decode = _decode
