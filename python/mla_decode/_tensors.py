"""What the binding needs of an array: address, shape, strides, element type, host or device.

Accepted: torch tensors; objects with ``__cuda_array_interface__`` (device memory: CuPy,
Numba, ...); objects with ``__array_interface__`` (host memory: numpy); objects with
``__dlpack__`` (DLPack capsules, read without importing their producer). No array library is
imported here.
"""
import ctypes
import sys

from ._abi import Status
from ._errors import MlaTypeError, MlaValueError

# Element type names used below, from each protocol's spelling.
_TYPESTR = {"u1": "uint8", "i1": "int8", "u2": "uint16", "i2": "int16", "f2": "float16",
            "i4": "int32", "u4": "uint32", "f4": "float32", "i8": "int64", "f8": "float64"}
# DLPack (dlpack.h): (type code, bits) -> name
_DLPACK_TYPE = {(0, 8): "int8", (1, 8): "uint8", (0, 16): "int16", (1, 16): "uint16",
                (2, 16): "float16", (0, 32): "int32", (1, 32): "uint32", (2, 32): "float32",
                (0, 64): "int64", (2, 64): "float64", (4, 16): "bfloat16",
                (10, 8): "float8_e4m3fn", (11, 8): "float8_e4m3fnuz"}
# DLPack device types whose memory the host can read: CPU, CUDA host, ROCm host
_DLPACK_HOST = (1, 3, 11)
_ITEMSIZE = {"uint8": 1, "int8": 1, "float8_e4m3fn": 1, "float8_e4m3fnuz": 1, "uint16": 2,
             "int16": 2, "float16": 2, "bfloat16": 2, "int32": 4, "uint32": 4, "float32": 4,
             "int64": 8, "float64": 8}


class Array:
    """One array as the binding sees it.

    ptr: address of element 0 (int); shape, strides: tuples, strides in elements; dtype: a
    name of _ITEMSIZE (or another name for types the binding never accepts); on_device:
    True for GPU memory; owner: what must stay alive while the address is used."""

    def __init__(self, ptr, shape, strides, dtype, on_device, owner):
        self.ptr, self.shape, self.strides = int(ptr), tuple(shape), tuple(strides)
        self.dtype, self.on_device, self.owner = dtype, on_device, owner

    @property
    def itemsize(self):
        return _ITEMSIZE.get(self.dtype, 0)

    def __repr__(self):
        return "Array(%s %s, %s)" % (self.dtype, "x".join(map(str, self.shape)) or "scalar",
                                     "device" if self.on_device else "host")


def contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _from_interface(obj, iface, on_device):
    """__array_interface__ / __cuda_array_interface__ (both give strides in bytes)."""
    typestr = iface["typestr"]
    dtype = _TYPESTR.get(typestr[1:], typestr) if typestr[0] in "<|=" else typestr
    shape = tuple(iface["shape"])
    ptr = iface["data"][0] if iface.get("data") else 0
    itemsize = int(typestr[2:]) if typestr[2:].isdigit() else 0
    if iface.get("strides") is None:
        strides = contiguous_strides(shape)
    else:
        if itemsize == 0 or any(s % itemsize for s in iface["strides"]):
            raise MlaValueError("strides %s are not whole elements of %s" % (iface["strides"],
                                                                             typestr),
                                Status.MISALIGNED)
        strides = tuple(s // itemsize for s in iface["strides"])
    return Array(ptr or 0, shape, strides, dtype, on_device, obj)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _from_dlpack(obj):
    """An unversioned DLPack capsule ("dltensor", its DLManagedTensor starts with the
    DLTensor). The capsule is kept as the owner: its destructor releases the producer's
    tensor when the binding is done with the address."""
    capsule = obj.__dlpack__()
    t = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = (tuple(t.strides[i] for i in range(t.ndim)) if t.strides
               else contiguous_strides(shape))
    if t.dtype.lanes != 1:
        raise MlaTypeError("DLPack tensors with %d lanes are not supported" % t.dtype.lanes)
    dtype = _DLPACK_TYPE.get((t.dtype.code, t.dtype.bits),
                             "dlpack(code %d, %d bits)" % (t.dtype.code, t.dtype.bits))
    ptr = (t.data or 0) + t.byte_offset
    on_device = t.device.device_type not in _DLPACK_HOST
    return Array(ptr, shape, strides, dtype, on_device, (obj, capsule))


def as_array(obj, name):
    """Array of obj, or TypeError naming the argument."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        dtype = str(obj.dtype).replace("torch.", "")
        return Array(obj.data_ptr(), obj.shape, obj.stride(), dtype, obj.device.type != "cpu",
                     obj)
    if hasattr(obj, "__cuda_array_interface__"):
        return _from_interface(obj, obj.__cuda_array_interface__, True)
    if hasattr(obj, "__array_interface__"):
        return _from_interface(obj, obj.__array_interface__, False)
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack(obj)
    raise MlaTypeError("%s: expected a torch tensor or an object with __cuda_array_interface__, "
                       "__array_interface__ or __dlpack__, got %s" % (name, type(obj).__name__),
                       Status.INVALID_VALUE)
