"""The C ABI of include/mla_decode.h through ctypes: enums, the params struct, the library.

This module mirrors the header of libmla_decode 0.7 field for field. The library is found
(first match wins):

1. ``$MLA_DECODE_LIBRARY``: the path of the shared library (nothing else is tried then);
2. next to this package: a ``libmla_decode.so*`` copied into the ``mla_decode`` folder;
3. the loader's search path: ``libmla_decode.so.<major>.<minor>``, ``libmla_decode.so.<major>``,
   ``libmla_decode.so`` (``LD_LIBRARY_PATH``, the ld.so cache, an installed prefix).

Loading checks that the library's version has this package's major.minor (0.x releases may
break the ABI) and that its ``sizeof(mla_decode_params)`` equals the size of the struct below.
"""
import ctypes
import enum
import glob
import os
import sys
import threading

__version__ = "0.7.44"
ABI_VERSION = (0, 7)  # major, minor of the header this module mirrors

KV_LORA_RANK = 512
QK_ROPE_HEAD_DIM = 64
HEAD_DIM_QK = 576
HEAD_DIM_V = 512
MXFP4_BLOCK_SIZE = 32
MXFP4_ROW_BYTES = 288
MXFP4_ROW_SCALES = 18
FLAG_BATCH_INVARIANT = 1  # MLA_DECODE_FLAG_BATCH_INVARIANT
FLAG_FP8_MMA = 2  # MLA_DECODE_FLAG_FP8_MMA


class Status(enum.IntEnum):
    """mla_status."""
    SUCCESS = 0
    NULL_POINTER = 1
    INVALID_DTYPE = 2
    INVALID_SIZE = 3
    INVALID_VALUE = 4
    UNSUPPORTED = 5
    MISALIGNED = 6
    WORKSPACE_TOO_SMALL = 7
    NO_DEVICE = 8
    DEVICE_ERROR = 9
    OUT_OF_MEMORY = 10
    INTERNAL_ERROR = 11


class DType(enum.IntEnum):
    """mla_dtype. NONE (0) is valid only as v_dtype and kpe_dtype: the default forms (V from the
    latent rows, 576-wide cache rows)."""
    NONE = 0
    BF16 = 1
    FP32 = 2
    FP8_E4M3FN = 3
    FP8_E4M3FNUZ = 4
    MXFP4 = 5


_c_enum = ctypes.c_int  # a C enum is int-sized with the compilers the library is built with


class mla_decode_params(ctypes.Structure):
    """struct mla_decode_params, in the header's order (ctypes applies the C layout rules).

    tests/test_abi.py compares this list with the header's declaration, and loading compares
    its size with the library's."""
    _fields_ = [
        # problem size: host values
        ("batch_size", ctypes.c_int32),
        ("total_q", ctypes.c_int32),
        ("max_q_len", ctypes.c_int32),
        ("max_kv_len", ctypes.c_int32),
        ("num_heads", ctypes.c_int32),
        ("head_dim_qk", ctypes.c_int32),
        ("head_dim_v", ctypes.c_int32),
        ("sm_scale", ctypes.c_float),
        # query
        ("q", ctypes.c_void_p),
        ("q_dtype", _c_enum),
        ("q_scale", ctypes.c_float),
        ("q_stride_token", ctypes.c_int64),
        ("q_stride_head", ctypes.c_int64),
        # latent cache
        ("kv_cache", ctypes.c_void_p),
        ("kv_dtype", _c_enum),
        ("kv_scale", ctypes.c_float),
        ("kv_stride_slot", ctypes.c_int64),
        ("kv_block_scales", ctypes.c_void_p),
        ("kv_block_scale_stride", ctypes.c_int64),
        ("v_cache", ctypes.c_void_p),
        ("v_dtype", _c_enum),
        ("v_scale", ctypes.c_float),
        ("v_stride_slot", ctypes.c_int64),
        ("num_slots", ctypes.c_int64),
        ("kv_page_indptr", ctypes.c_void_p),
        ("kv_page_indices", ctypes.c_void_p),
        ("page_size", ctypes.c_int32),
        # batch layout
        ("qo_indptr", ctypes.c_void_p),
        ("kv_indptr", ctypes.c_void_p),
        # outputs
        ("o", ctypes.c_void_p),
        ("o_dtype", _c_enum),
        ("o_stride_token", ctypes.c_int64),
        ("o_stride_head", ctypes.c_int64),
        ("lse", ctypes.c_void_p),
        ("flags", ctypes.c_uint32),
        # input forms (taken from the reserved block: the struct keeps its size)
        ("kpe_dtype", _c_enum),
        ("q_pe", ctypes.c_void_p),
        ("q_pe_stride_token", ctypes.c_int64),
        ("q_pe_stride_head", ctypes.c_int64),
        ("kpe_cache", ctypes.c_void_p),
        ("kpe_stride_slot", ctypes.c_int64),
        ("lse_stride_token", ctypes.c_int64),
        ("reserved", ctypes.c_uint64 * 1),
    ]


_P = ctypes.POINTER(mla_decode_params)
_VP = ctypes.c_void_p
_SIZE = ctypes.c_size_t
# name: (restype, argtypes) of every function of the header
_PROTOTYPES = {
    "mla_version": (ctypes.c_int, []),
    "mla_version_string": (ctypes.c_char_p, []),
    "mla_decode_params_size": (_SIZE, []),
    "mla_backend_name": (ctypes.c_char_p, []),
    "mla_status_string": (ctypes.c_char_p, [ctypes.c_int]),
    "mla_last_error_message": (ctypes.c_char_p, []),
    "mla_decode_params_init": (ctypes.c_int, [_P]),
    "mla_decode_workspace_size": (ctypes.c_int, [_P, ctypes.POINTER(_SIZE)]),
    "mla_decode_workspace_bound": (ctypes.c_int, [_P, ctypes.POINTER(_SIZE)]),
    "mla_decode_fwd": (ctypes.c_int, [_P, _VP, _SIZE, _VP]),
    "mla_decode_reference": (ctypes.c_int, [_P]),
    "mla_decode_plan_create": (ctypes.c_int, [_P, ctypes.POINTER(_VP)]),
    "mla_decode_plan_destroy": (ctypes.c_int, [_VP]),
    "mla_decode_plan_workspace_size": (ctypes.c_int, [_VP, ctypes.POINTER(_SIZE)]),
    "mla_decode_plan_describe": (ctypes.c_int, [_VP, ctypes.c_char_p, _SIZE]),
    "mla_decode_plan_prepare": (ctypes.c_int, [_VP, _P, _VP, _SIZE, _VP]),
    "mla_decode_plan_run": (ctypes.c_int, [_VP, _P, _VP, _SIZE, _VP]),
}


class LibraryError(OSError):
    """libmla_decode could not be found or loaded, or is not the ABI this package mirrors."""


def _candidates():
    """(paths or loader names to try, where they came from)."""
    env = os.environ.get("MLA_DECODE_LIBRARY")
    if env:
        return [env], "MLA_DECODE_LIBRARY"
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.platform == "win32":
        local, names = ["mla_decode.dll"], ["mla_decode.dll"]
    elif sys.platform == "darwin":
        local, names = ["libmla_decode*.dylib"], ["libmla_decode.dylib"]
    else:
        major, minor = ABI_VERSION
        local = ["libmla_decode.so*"]
        names = ["libmla_decode.so.%d.%d" % (major, minor), "libmla_decode.so.%d" % major,
                 "libmla_decode.so"]
    found = []
    for pattern in local:
        # the shortest name first: libmla_decode.so, then its versioned links
        found += sorted(glob.glob(os.path.join(here, pattern)), key=len)
    return found + names, "the package folder %s and the loader path" % here


def _check(lib, where):
    try:
        version = lib.mla_version()
        size = lib.mla_decode_params_size()
    except AttributeError as e:  # a library older than mla_decode_params_size (0.3)
        raise LibraryError("%s is not libmla_decode %d.%d (%s)" % (where, ABI_VERSION[0],
                                                                  ABI_VERSION[1], e)) from None
    got = (version // 10000, version // 100 % 100)
    if got != ABI_VERSION:
        raise LibraryError(
            "%s is libmla_decode %s; this package mirrors the ABI of %d.%d (0.x releases may "
            "change it): install the matching package or library" %
            (where, lib.mla_version_string().decode(), ABI_VERSION[0], ABI_VERSION[1]))
    if size != ctypes.sizeof(mla_decode_params):
        raise LibraryError(
            "%s: sizeof(mla_decode_params) is %d bytes in the library but %d in this package: "
            "the library and the package were built from different headers" %
            (where, size, ctypes.sizeof(mla_decode_params)))


def _open(path):
    lib = ctypes.CDLL(path)
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            continue  # _check names what is missing where it matters
        fn.restype, fn.argtypes = restype, argtypes
    return lib


_lock = threading.Lock()
_library = None


def load_library(path=None):
    """The loaded libmla_decode (a ctypes.CDLL with the header's prototypes), loading it on the
    first call: from ``path`` when given, else from the places listed in this module's doc.
    Raises LibraryError when none loads or the one found does not match this package."""
    global _library
    with _lock:
        if _library is not None and path is None:
            return _library
        tried, where = ([path], "the path given") if path else _candidates()
        errors = []
        for candidate in tried:
            try:
                lib = _open(candidate)
            except OSError as e:
                errors.append("%s: %s" % (candidate, e))
                continue
            _check(lib, candidate)
            _library = lib
            return lib
        raise LibraryError("libmla_decode not found (searched %s):\n  %s\nBuild it (cmake "
                           "--build build) and set MLA_DECODE_LIBRARY=build/src/libmla_decode.so, "
                           "or install it" % (where, "\n  ".join(errors)))
