"""The functions of include/mla_decode.h on arrays: Params, workspace_size, workspace_bound, fwd,
Plan, reference.

Params fills an mla_decode_params from arrays (see _tensors.as_array): the struct's sizes,
strides and dtypes come from the arrays' shapes, strides and element types, so only what an
array cannot tell is a keyword (sm_scale, scales, max_q_len / max_kv_len for device indptrs,
fp8 / MXFP4 dtypes of raw uint8 storage). Every library call that fails raises MlaError with
the status and the library's message; what the binding itself refuses (an array of the wrong
kind, shape or placement) raises an MlaError too, before the library is called, with the status
the library gives such input; those are also ValueError or TypeError (_errors.py).
"""
import ctypes
import sys

from . import _abi
from ._abi import (HEAD_DIM_QK, HEAD_DIM_V, KV_LORA_RANK, MXFP4_ROW_BYTES, MXFP4_ROW_SCALES,
                   QK_ROPE_HEAD_DIM, DType, Status)
from ._errors import MlaError, MlaTypeError, MlaValueError
from ._tensors import as_array, contiguous_strides


def _call(name, *args):
    lib = _abi.load_library()
    status = getattr(lib, name)(*args)
    if status != Status.SUCCESS:
        raise MlaError(status, lib.mla_status_string(status).decode(),
                       lib.mla_last_error_message().decode(errors="replace"), name)


def version():
    """"major.minor.patch" of the loaded library."""
    return _abi.load_library().mla_version_string().decode()


def backend():
    """The GPU backend the loaded library was built with: "cuda", "hip" or "none"."""
    return _abi.load_library().mla_backend_name().decode()


# ---- dtypes --------------------------------------------------------------------------------

_DTYPE_NAMES = {"bf16": DType.BF16, "bfloat16": DType.BF16, "fp32": DType.FP32,
                "float32": DType.FP32, "fp8_e4m3fn": DType.FP8_E4M3FN,
                "float8_e4m3fn": DType.FP8_E4M3FN, "fp8_e4m3fnuz": DType.FP8_E4M3FNUZ,
                "float8_e4m3fnuz": DType.FP8_E4M3FNUZ, "mxfp4": DType.MXFP4}
# storage element types that say their mla_dtype (uint16 can only be raw bf16)
_INFERRED = {"bfloat16": DType.BF16, "uint16": DType.BF16, "float32": DType.FP32,
             "float8_e4m3fn": DType.FP8_E4M3FN, "float8_e4m3fnuz": DType.FP8_E4M3FNUZ}
_FIELD_DTYPES = {"q": "bf16, fp8_e4m3fn or fp8_e4m3fnuz",
                 "kv": "bf16, fp8_e4m3fn, fp8_e4m3fnuz or mxfp4",
                 "v": "fp8_e4m3fn or fp8_e4m3fnuz", "o": "bf16 or fp32",
                 "kpe": "bf16, fp8_e4m3fn or fp8_e4m3fnuz"}
_STORAGE_BYTES = {DType.BF16: 2, DType.FP32: 4, DType.FP8_E4M3FN: 1, DType.FP8_E4M3FNUZ: 1,
                  DType.MXFP4: 1}


def dtype(value):
    """mla_dtype of a name ("bf16", "fp8_e4m3fn", "float8_e4m3fnuz", "mxfp4", ...), a torch
    dtype, a DType or an int (ints outside the enum are passed on, for the library to
    refuse)."""
    if not isinstance(value, (str, int)):
        value = str(value)  # a torch dtype, say: "torch.float8_e4m3fn"
    if isinstance(value, str):
        try:
            return _DTYPE_NAMES[value.lower().replace("torch.", "")]
        except KeyError:
            raise MlaValueError("no mla_dtype named '%s' (have %s)" %
                                (value, ", ".join(sorted(_DTYPE_NAMES))),
                                Status.INVALID_DTYPE) from None
    value = int(value)
    return DType(value) if value in DType._value2member_map_ else value


def _field_dtype(given, arr, field):
    """The dtype field for array `arr` (None: not given): given, or inferred from storage."""
    if given is None:
        if arr is None:
            return DType.BF16
        if arr.dtype not in _INFERRED:
            raise MlaTypeError("%s is %s: give %s_dtype (%s)" % (field, arr.dtype, field,
                                                                 _FIELD_DTYPES[field]))
        return _INFERRED[arr.dtype]
    value = dtype(given)
    if arr is not None and value in _STORAGE_BYTES and arr.itemsize != _STORAGE_BYTES[value]:
        raise MlaTypeError("%s has %s elements (%d bytes), %s needs %d-byte storage" %
                           (field, arr.dtype, arr.itemsize, DType(value).name,
                            _STORAGE_BYTES[value]))
    return value


# ---- shapes --------------------------------------------------------------------------------

def _rows(arr, name, min_width):
    """(rows, row stride) of an array whose last dim is a row (unit stride, >= min_width
    elements) and whose other dims index rows with one uniform stride (e.g. (slots, row),
    (pages, page_size, row) or (pages, page_size, 1, row))."""
    if len(arr.shape) < 2 or arr.shape[-1] < min_width or (arr.strides[-1] != 1
                                                           and arr.shape[-1] > 1):
        raise MlaValueError("%s must be (..., >= %d) with unit stride in its last dim, got shape "
                            "%s strides %s" % (name, min_width, arr.shape, arr.strides),
                            Status.INVALID_SIZE)
    lead = [(n, s) for n, s in zip(arr.shape[:-1], arr.strides[:-1]) if n != 1]
    for (_, s_out), (n_in, s_in) in zip(lead, lead[1:]):
        if s_out != n_in * s_in:
            raise MlaValueError("%s: the dims before the last cannot be flattened into rows of one "
                                "stride (shape %s, strides %s)" % (name, arr.shape, arr.strides),
                                Status.INVALID_SIZE)
    rows = 1
    for n, _ in lead:
        rows *= n
    stride = lead[-1][1] if lead else arr.shape[-1]
    if stride < 0:
        raise MlaValueError("%s has a negative stride" % name, Status.INVALID_SIZE)
    return rows, stride


def _slot_rows(arr, name, min_width, num_slots):
    """The row stride of a table with a row for each of num_slots slots (see _rows)."""
    rows, stride = _rows(arr, name, min_width)
    if rows < num_slots:
        raise MlaValueError("%s has %d rows, num_slots is %d" % (name, rows, num_slots),
                            Status.INVALID_SIZE)
    return stride


def _heads_rows(arr, name, width):
    """(tokens, heads, stride_token, stride_head) of a (tokens, heads, width) array. Exactly
    `width` wide, so that a wrong tensor (an O of 576) is refused rather than half-written; a
    view of wider rows (o[..., :512]) passes with their strides."""
    if len(arr.shape) != 3 or arr.shape[2] != width or arr.strides[2] != 1:
        raise MlaValueError("%s must be (tokens, heads, %d) with unit stride in its last dim (a "
                            "view of wider rows keeps their stride), got shape %s strides %s" %
                            (name, width, arr.shape, arr.strides), Status.INVALID_SIZE)
    if min(arr.strides[:2]) < 0:
        raise MlaValueError("%s has a negative stride" % name, Status.INVALID_SIZE)
    tokens, heads, _, stride_token, stride_head = arr.shape + arr.strides[:2]
    if tokens == 1:  # the stride of a dim of one element says nothing (torch may give any)
        stride_token = heads * stride_head
    return tokens, heads, stride_token, stride_head


def _vector(arr, name, min_len):
    """An int32 vector of >= min_len elements, unit stride."""
    if arr.dtype != "int32":
        raise MlaTypeError("%s must hold int32, got %s" % (name, arr.dtype))
    if len(arr.shape) != 1 or arr.shape[0] < min_len or (arr.shape[0] > 1 and arr.strides[0] != 1):
        raise MlaValueError("%s must be a contiguous vector of >= %d int32, got shape %s" %
                            (name, min_len, arr.shape), Status.INVALID_SIZE)


def _host_values(arr, count):
    """The first `count` int32 values of a host vector."""
    return list((ctypes.c_int32 * count).from_address(arr.ptr)) if count else []


def _explicit(value, derived, name, bound_name):
    """An explicit host size, which must fit in what the arrays hold; else the derived one."""
    if value is None:
        return derived
    if derived is not None and value > derived:
        raise MlaValueError("%s %d exceeds the %d of %s" % (name, value, derived, bound_name),
                            Status.INVALID_SIZE)
    return value


class Params:
    """An mla_decode_params filled from arrays, holding them alive (``.struct`` is the ctypes
    struct, for reading or for setting fields by hand).

    Arrays: torch tensors, or objects with __cuda_array_interface__ / __dlpack__ for the GPU
    entry points; numpy arrays (or torch CPU tensors) for reference(). All of one call in the
    same kind of memory.

    q (total_q, num_heads, >= 576) and o (total_q, num_heads, >= 512), unit stride in the
    last dim, any token / head strides; lse (total_q, num_heads) float32, optional, heads
    contiguous, any row stride >= num_heads (lse_stride_token).
    kv_cache: rows of 576 elements (288 bytes for MXFP4) with every other dim flattened into
    slots, e.g. (num_slots, 576) or (num_pages, page_size[, 1], 576); kv_block_scales (MXFP4)
    and v_cache (an fp8 V for MXFP4 keys) likewise. qo_indptr, kv_indptr, kv_page_indptr,
    kv_page_indices: int32 vectors.

    Split forms (the header's "Input forms"): with q_pe (total_q, num_heads, >= 64), q is
    q_nope (total_q, num_heads, >= 512), each with its own strides (views of one 576-wide
    tensor work too); with kpe_cache (rows of 64, flattened like kv_cache; its dtype from its
    element type or kpe_dtype), kv_cache holds latent rows of >= 512. The library says which
    (kv_dtype, kpe_dtype) pairs each path serves (UNSUPPORTED otherwise).

    Dtypes come from the element types (bfloat16 / raw uint16 = bf16, float8_e4m3fn(uz),
    float32); raw uint8 storage needs q_dtype / kv_dtype / v_dtype ("fp8_e4m3fn",
    "fp8_e4m3fnuz", "mxfp4"). Sizes come from the shapes: total_q and num_heads from q,
    batch_size from qo_indptr, num_slots from kv_cache, page_size from a paged cache's second
    dim; max_q_len / max_kv_len from host indptrs (for device indptrs they must be given:
    reading them would synchronize). Explicit sizes may be smaller than the arrays hold. With
    no arrays at all the params describe a shape only (for workspace_size and Plan).

    batch_invariant / fp8_mma set MLA_DECODE_FLAG_BATCH_INVARIANT / MLA_DECODE_FLAG_FP8_MMA
    (the header says what each does).
    """

    def __init__(self, q=None, kv_cache=None, qo_indptr=None, kv_indptr=None, o=None, lse=None,
                 *, sm_scale, max_q_len=None, max_kv_len=None, q_dtype=None, q_scale=1.0,
                 kv_dtype=None, kv_scale=1.0, kv_block_scales=None, v_cache=None, v_dtype=None,
                 v_scale=1.0, kv_page_indptr=None, kv_page_indices=None, page_size=None,
                 o_dtype=None, batch_size=None, total_q=None, num_heads=None, num_slots=None,
                 batch_invariant=False, q_pe=None, kpe_cache=None, kpe_dtype=None,
                 fp8_mma=False):
        self._kwargs = {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        tensors = {k: self._kwargs[k] for k in ("q", "kv_cache", "qo_indptr", "kv_indptr", "o",
                                                 "lse", "kv_block_scales", "v_cache",
                                                 "kv_page_indptr", "kv_page_indices", "q_pe",
                                                 "kpe_cache")}
        arrays = {k: as_array(v, k) for k, v in tensors.items() if v is not None}
        places = {a.on_device for a in arrays.values()}
        if len(places) > 1:
            raise MlaValueError("arrays in both host and device memory: %s" % ", ".join(
                "%s on the %s" % (k, "device" if a.on_device else "host")
                for k, a in arrays.items()))
        self.on_device = places.pop() if places else None
        self.arrays = arrays
        self.tensors = tensors  # kept alive as long as the struct points into them
        a = arrays.get

        p = _abi.mla_decode_params()
        _call("mla_decode_params_init", ctypes.byref(p))
        p.sm_scale, p.q_scale, p.kv_scale, p.v_scale = sm_scale, q_scale, kv_scale, v_scale
        p.flags = ((_abi.FLAG_BATCH_INVARIANT if batch_invariant else 0) |
                   (_abi.FLAG_FP8_MMA if fp8_mma else 0))

        # Q, O, LSE
        p.q_dtype = _field_dtype(q_dtype, a("q"), "q")
        p.o_dtype = _field_dtype(o_dtype, a("o"), "o")
        q_tokens = q_heads = o_tokens = o_heads = pe_tokens = pe_heads = None
        split_q = a("q_pe") is not None
        if a("q"):
            q_tokens, q_heads, p.q_stride_token, p.q_stride_head = _heads_rows(
                a("q"), "q (q_nope, with q_pe)" if split_q else "q",
                KV_LORA_RANK if split_q else HEAD_DIM_QK)
            p.q = a("q").ptr
        if split_q:
            if a("q") and a("q_pe").dtype != a("q").dtype:
                raise MlaTypeError("q_pe holds %s, q holds %s: both halves of Q have q_dtype" %
                                   (a("q_pe").dtype, a("q").dtype))
            pe_tokens, pe_heads, p.q_pe_stride_token, p.q_pe_stride_head = _heads_rows(
                a("q_pe"), "q_pe", QK_ROPE_HEAD_DIM)
            p.q_pe = a("q_pe").ptr
        if a("o"):
            o_tokens, o_heads, p.o_stride_token, p.o_stride_head = _heads_rows(a("o"), "o",
                                                                               HEAD_DIM_V)
            p.o = a("o").ptr
        heads = [h for h in (q_heads, o_heads, pe_heads, num_heads) if h is not None]
        if len(set(heads)) > 1:
            raise MlaValueError("num_heads disagree: q %s, o %s, q_pe %s, num_heads %s" %
                                (q_heads, o_heads, pe_heads, num_heads))
        p.num_heads = heads[0] if heads else 0
        p.total_q = _explicit(total_q, q_tokens if q_tokens is not None else pe_tokens,
                              "total_q", "q's tokens") or 0
        for name, tokens in (("o", o_tokens), ("q_pe", pe_tokens)):
            if tokens is not None and tokens < p.total_q:
                raise MlaValueError("%s has %d tokens, total_q is %d" % (name, tokens, p.total_q),
                                    Status.INVALID_SIZE)
        if not a("q"):
            p.q_stride_head, p.q_stride_token = HEAD_DIM_QK, HEAD_DIM_QK * p.num_heads
        if not a("o"):
            p.o_stride_head, p.o_stride_token = HEAD_DIM_V, HEAD_DIM_V * p.num_heads
        if a("lse"):
            arr = a("lse")
            if arr.dtype != "float32":
                raise MlaTypeError("lse must hold float32, got %s" % arr.dtype)
            if (len(arr.shape) != 2 or arr.shape[0] < p.total_q or arr.shape[1] != p.num_heads
                    or (arr.shape[0] > 1 and arr.strides[0] < p.num_heads)
                    or (arr.shape[1] > 1 and arr.strides[1] != 1)):
                raise MlaValueError("lse must be a (total_q %d, num_heads %d) array with "
                                    "contiguous heads and a row stride >= num_heads, got shape "
                                    "%s strides %s"
                                    % (p.total_q, p.num_heads, arr.shape, arr.strides),
                                    Status.INVALID_SIZE)
            p.lse = arr.ptr
            if arr.shape[0] > 1 and arr.strides[0] != p.num_heads:
                p.lse_stride_token = arr.strides[0]  # else 0: dense

        # latent cache, scales, V
        p.kv_dtype = _field_dtype(kv_dtype, a("kv_cache"), "kv")
        mxfp4 = p.kv_dtype == DType.MXFP4
        split_cache = a("kpe_cache") is not None or kpe_dtype is not None
        row = MXFP4_ROW_BYTES if mxfp4 else (KV_LORA_RANK if split_cache else HEAD_DIM_QK)
        slots = None
        if a("kv_cache"):
            slots, p.kv_stride_slot = _rows(a("kv_cache"), "kv_cache", row)
            p.kv_cache = a("kv_cache").ptr
        else:
            p.kv_stride_slot = row
        p.num_slots = _explicit(num_slots, slots, "num_slots", "kv_cache's slots") or 0
        if split_cache:
            p.kpe_dtype = _field_dtype(kpe_dtype, a("kpe_cache"), "kpe")
            p.kpe_stride_slot = QK_ROPE_HEAD_DIM
        if a("kpe_cache"):
            p.kpe_stride_slot = _slot_rows(a("kpe_cache"), "kpe_cache", QK_ROPE_HEAD_DIM,
                                           p.num_slots)
            p.kpe_cache = a("kpe_cache").ptr
        if a("kv_block_scales"):
            p.kv_block_scale_stride = _slot_rows(a("kv_block_scales"), "kv_block_scales",
                                                 MXFP4_ROW_SCALES, p.num_slots)
            p.kv_block_scales = a("kv_block_scales").ptr
        elif mxfp4:
            p.kv_block_scale_stride = MXFP4_ROW_SCALES
        if a("v_cache") or v_dtype is not None:
            p.v_dtype = _field_dtype(v_dtype, a("v_cache"), "v")
            p.v_stride_slot = HEAD_DIM_V
        if a("v_cache"):
            p.v_stride_slot = _slot_rows(a("v_cache"), "v_cache", HEAD_DIM_V, p.num_slots)
            p.v_cache = a("v_cache").ptr

        # batch layout and page table
        batch = None
        if a("qo_indptr"):
            _vector(a("qo_indptr"), "qo_indptr", 2)
            batch = a("qo_indptr").shape[0] - 1
        p.batch_size = _explicit(batch_size, batch, "batch_size", "qo_indptr's elements") or 0
        for name in ("qo_indptr", "kv_indptr", "kv_page_indptr"):
            if a(name):
                _vector(a(name), name, p.batch_size + 1)
                setattr(p, name, a(name).ptr)
        if a("kv_page_indices"):
            _vector(a("kv_page_indices"), "kv_page_indices", 0)
            p.kv_page_indices = a("kv_page_indices").ptr
            if self.on_device is False and a("kv_page_indptr"):
                used = _host_values(a("kv_page_indptr"), p.batch_size + 1)[-1]
                if used > a("kv_page_indices").shape[0]:
                    raise MlaValueError("kv_page_indptr[%d] = %d exceeds kv_page_indices' %d "
                                        "entries" % (p.batch_size, used,
                                                     a("kv_page_indices").shape[0]),
                                        Status.INVALID_SIZE)
        if page_size is None:
            cache = a("kv_cache")
            paged = a("kv_page_indptr") is not None
            if paged and (cache is None or len(cache.shape) < 3):
                raise MlaValueError("page_size must be given unless kv_cache is "
                                    "(num_pages, page_size, ...)")
            page_size = cache.shape[1] if paged else 1
        p.page_size = page_size

        p.max_q_len = _max_len(max_q_len, "max_q_len", a("qo_indptr"), p.batch_size)
        p.max_kv_len = _max_len(max_kv_len, "max_kv_len", a("kv_indptr"), p.batch_size)
        self.struct = p

    def replace(self, **changes):
        """New Params with some arguments changed (e.g. another layer's q, kv_cache and o)."""
        return Params(**dict(self._kwargs, **changes))


def _max_len(given, name, indptr, batch):
    """given, or the largest difference of a host indptr."""
    if given is not None:
        return given
    if indptr is None or indptr.on_device:
        raise MlaValueError("%s must be given when the indptr is %s" % (
            name, "on the device (reading it would synchronize)" if indptr else "absent"))
    values = _host_values(indptr, batch + 1)
    return max((b - a for a, b in zip(values, values[1:])), default=0)


# ---- the entry points ----------------------------------------------------------------------

def _struct(params, where):
    """The ctypes struct of params (a Params or an mla_decode_params), after checking that
    Params' arrays are where `where` ("device", "host" or None: anywhere) needs them."""
    if isinstance(params, _abi.mla_decode_params):
        return params
    if not isinstance(params, Params):
        raise MlaTypeError("expected Params or mla_decode_params, got %s" % type(params).__name__,
                           Status.INVALID_VALUE)
    if where is not None and params.on_device is (where == "host"):
        raise MlaValueError("%s %s arrays; these are in %s memory" % (
            "reference needs" if where == "host" else "the GPU entry points need", where,
            "device" if params.on_device else "host"))
    return params.struct


def _stream(stream, params):
    """The stream handle: given (an int, or an object with cuda_stream / ptr), else torch's
    current stream of the device of params' first torch tensor, else 0 (the default stream)."""
    if stream is None:
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(params, Params):
            for t in params.tensors.values():
                if isinstance(t, torch.Tensor) and t.device.type != "cpu":
                    return torch.cuda.current_stream(t.device).cuda_stream
        return 0
    for attr in ("cuda_stream", "ptr", "handle"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    return int(stream)


def _workspace(workspace, params, needed):
    """(pointer, bytes) of a workspace array; None: no workspace when `needed` is 0, else one
    from torch's allocator on the device of params' q (valid on torch's current stream)."""
    if workspace is None:
        if needed == 0:
            return None, 0
        torch = sys.modules.get("torch")
        q = params.tensors.get("q") if isinstance(params, Params) else None
        if torch is None or not isinstance(q, torch.Tensor):
            raise MlaValueError("this problem needs a workspace of %d bytes" % needed,
                                Status.WORKSPACE_TOO_SMALL)
        workspace = torch.empty(needed, dtype=torch.uint8, device=q.device)
    arr = as_array(workspace, "workspace")
    if not arr.on_device:
        raise MlaValueError("the workspace must be device memory")
    count = 1
    for n in arr.shape:
        count *= n
    if count > 1 and arr.strides != contiguous_strides(arr.shape):
        raise MlaValueError("the workspace must be contiguous")
    return arr.ptr, count * arr.itemsize


def workspace_size(params):
    """Bytes of device workspace fwd needs for this problem on the current device
    (mla_decode_workspace_size; reads only the host fields, arrays may be absent)."""
    size = ctypes.c_size_t()
    _call("mla_decode_workspace_size", ctypes.byref(_struct(params, None)), ctypes.byref(size))
    return size.value


def workspace_bound(params):
    """Bytes of device workspace that serve every problem up to the shape of `params` on the
    current device (mla_decode_workspace_bound): batch_size, total_q, max_q_len and max_kv_len
    are maxima, num_heads, the dtypes and the flags (batch_invariant, fp8_mma) must match. One
    workspace of this size serves the plans of every captured batch size; reads only the host
    fields."""
    size = ctypes.c_size_t()
    _call("mla_decode_workspace_bound", ctypes.byref(_struct(params, None)), ctypes.byref(size))
    return size.value


def fwd(params, workspace=None, stream=None):
    """mla_decode_fwd: queue the decode on `stream` (default: torch's current stream, else the
    default stream). workspace: a device array of >= workspace_size(params) bytes; None = none
    when the size is 0, else one from torch's allocator for this call."""
    p = _struct(params, "device")
    needed = workspace_size(p) if workspace is None else 0
    ptr, size = _workspace(workspace, params, needed)
    _call("mla_decode_fwd", ctypes.byref(p), ptr, size, _stream(stream, params))


def reference(params):
    """mla_decode_reference: the decode on the CPU in double precision (host arrays);
    blocking. O is written as o_dtype (bf16, or float32 for an o array of float32)."""
    _call("mla_decode_reference", ctypes.byref(_struct(params, "host")))


class Plan:
    """mla_decode_plan: the GPU path of one problem shape on the current device, made once and
    reused: prepare(params, workspace) once per step (the step's checks; nothing is queued since
    0.7.0), run(params, workspace) once per layer. Neither synchronizes nor allocates, so a
    step can be captured in a CUDA/HIP graph. Use as a context manager, or close() it."""

    def __init__(self, params):
        self._lib = _abi.load_library()  # kept for close(), even at interpreter exit
        handle = ctypes.c_void_p()
        _call("mla_decode_plan_create", ctypes.byref(_struct(params, None)),
              ctypes.byref(handle))
        self._handle = handle
        size = ctypes.c_size_t()
        _call("mla_decode_plan_workspace_size", handle, ctypes.byref(size))
        self.workspace_size = size.value  # bytes prepare and run need (256-byte aligned)

    def _live(self):
        if self._handle is None:
            raise MlaValueError("the plan is closed")
        return self._handle

    def describe(self):
        """The plan's route and why it was chosen (mla_decode_plan_describe)."""
        text = ctypes.create_string_buffer(1024)
        _call("mla_decode_plan_describe", self._live(), text, len(text))
        return text.value.decode(errors="replace")

    def _launch(self, name, params, workspace, stream):
        p = _struct(params, "device")
        ptr, size = _workspace(workspace, None, self.workspace_size)
        _call(name, self._live(), ctypes.byref(p), ptr, size, _stream(stream, params))

    def prepare(self, params, workspace, stream=None):
        """mla_decode_plan_prepare: the step's fields checked against the plan (queues nothing)."""
        self._launch("mla_decode_plan_prepare", params, workspace, stream)

    def run(self, params, workspace, stream=None):
        """mla_decode_plan_run: the decode, with `workspace` for its partial results."""
        self._launch("mla_decode_plan_run", params, workspace, stream)

    def close(self):
        """Free the plan (work already queued with it is unaffected)."""
        if getattr(self, "_handle", None) is not None:
            self._lib.mla_decode_plan_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()
