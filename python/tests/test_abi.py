"""The ctypes mirror against include/mla_decode.h, read as text (no compiler): every field of
mla_decode_params in order with its C type, the enums, the geometry macros and the version;
and against the loaded library: its version and sizeof(mla_decode_params). Loading refuses a
library of another minor version or struct size."""
import ctypes
import os
import re

import pytest

import mla_decode as mla
from mla_decode import _abi
from conftest import REPO_ROOT

HEADER = open(os.path.join(REPO_ROOT, "include", "mla_decode.h")).read()
C_TYPES = {"int32_t": ctypes.c_int32, "int64_t": ctypes.c_int64, "uint32_t": ctypes.c_uint32,
           "uint64_t": ctypes.c_uint64,
           "float": ctypes.c_float, "mla_dtype": ctypes.c_int}


def header_fields():
    """[(name, ctypes type)] of the struct's declaration."""
    body = re.search(r"typedef struct mla_decode_params \{(.*?)\} mla_decode_params;", HEADER,
                     re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    fields = []
    for decl in filter(None, (d.strip() for d in body.split(";"))):
        m = re.fullmatch(r"(?:const\s+)?(\w+)\s*(\*?)\s*(\w+)(?:\[(\d+)\])?", decl)
        assert m, "unparsed declaration: %r" % decl
        ctype, pointer, name, count = m.groups()
        t = ctypes.c_void_p if pointer else C_TYPES[ctype]
        fields.append((name, t * int(count) if count else t))
    return fields


def same_type(a, b):
    if issubclass(a, ctypes.Array):
        return issubclass(b, ctypes.Array) and a._length_ == b._length_ and a._type_ is b._type_
    return a is b


def test_struct_mirrors_the_header():
    want = header_fields()
    got = _abi.mla_decode_params._fields_
    assert [n for n, _ in got] == [n for n, _ in want]
    for (name, t_got), (_, t_want) in zip(got, want):
        assert same_type(t_got, t_want), name


def test_struct_size_is_the_librarys():
    assert ctypes.sizeof(mla.mla_decode_params) == mla.load_library().mla_decode_params_size()


def enum_values(prefix):
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"\b%s(\w+) = (\d+)" % prefix, HEADER)}


def test_enums_and_constants_mirror_the_header():
    assert enum_values("MLA_STATUS_") == {s.name: s.value for s in mla.Status}
    assert enum_values("MLA_DTYPE_") == {d.name: d.value for d in mla.DType}
    lib = mla.load_library()
    for s in mla.Status:
        assert lib.mla_status_string(s.value).decode() == "MLA_STATUS_" + s.name
    for name in ("KV_LORA_RANK", "QK_ROPE_HEAD_DIM", "HEAD_DIM_QK", "HEAD_DIM_V",
                 "MXFP4_BLOCK_SIZE", "MXFP4_ROW_BYTES", "MXFP4_ROW_SCALES"):
        value = int(re.search(r"#define MLA_%s (\d+)" % name, HEADER).group(1))
        assert getattr(mla, name) == value, name


def test_version():
    v = [int(re.search(r"#define MLA_DECODE_VERSION_%s (\d+)" % part, HEADER).group(1))
         for part in ("MAJOR", "MINOR", "PATCH")]
    assert mla.__version__ == "%d.%d.%d" % tuple(v)
    assert mla.ABI_VERSION == tuple(v[:2])
    assert mla.version().split(".")[:2] == [str(n) for n in v[:2]]
    assert mla.backend() in ("cuda", "hip", "none", "emu")


class StubLibrary:
    def __init__(self, version, size):
        self.version, self.size = version, size

    def mla_version(self):
        return self.version

    def mla_version_string(self):
        return b"%d.%d.%d" % (self.version // 10000, self.version // 100 % 100,
                              self.version % 100)

    def mla_decode_params_size(self):
        return self.size


def test_loading_refuses_a_mismatched_library():
    size = ctypes.sizeof(mla.mla_decode_params)
    major, minor = mla.ABI_VERSION
    _abi._check(StubLibrary(major * 10000 + minor * 100 + 7, size), "stub")  # patch: fine
    with pytest.raises(mla.LibraryError, match="mirrors the ABI of"):
        _abi._check(StubLibrary(major * 10000 + (minor + 1) * 100, size), "stub")
    with pytest.raises(mla.LibraryError, match="different headers"):
        _abi._check(StubLibrary(major * 10000 + minor * 100, size + 8), "stub")
    with pytest.raises(mla.LibraryError, match="not libmla_decode"):
        _abi._check(object(), "stub")


def test_loading_a_missing_library_says_where_it_looked():
    with pytest.raises(mla.LibraryError, match="MLA_DECODE_LIBRARY"):
        mla.load_library("/nonexistent/libmla_decode.so")
    mla.load_library()  # the library loaded before is still the one in use
