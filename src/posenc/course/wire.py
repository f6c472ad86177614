"""Values across the sealed grader's pipe: plain data only, no pickle, layouts and dtypes kept.

The grader (:mod:`posenc.course.sealed`) sends each case's inputs to the process that runs a
student's functions and reads back what they returned. Nothing that crosses may run code on
the other side, so values travel as a JSON header plus raw buffers: ``None``, bools, ints,
floats, complex numbers, strings, bytes, lists, tuples, dicts, NumPy arrays and scalars (any
numeric dtype; C-ordered, Fortran-ordered or a strided view of a wider buffer, the layouts the
checker's forms make), torch tensors (bfloat16 included). Anything else becomes
``{"other": type name}`` with, where NumPy can read it as numbers, its values
(:class:`Opaque` on the grader's side: an object of that type name whose only behaviour is
``__array__``). Decoding builds fresh objects of built-in types only.

This module imports nothing of posenc: the student's process loads it by its file path,
before any student code runs, and must hold no route to posenc's answers.
"""

from __future__ import annotations

import json
import math
import os
import struct

import numpy as np

__all__ = ["MAX_BYTES", "Opaque", "WireError", "decode", "encode", "read_message", "write_message"]

#: The most bytes one message may carry (a larger answer is refused, not read).
MAX_BYTES = 256 * 2**20
_HEADER = struct.Struct("<QQ")  # header length, total blob length
_LOW = ("bfloat16",)  # torch dtypes NumPy cannot hold: sent as float32 values, rebuilt exactly


class WireError(ValueError):
    """A message that is not what the protocol allows (too large, malformed, an unknown tag)."""


class Opaque:
    """A value of a type the wire does not carry: its type name and, when it had some, its numbers."""

    def __init__(self, type_name: str, values: np.ndarray | None = None):
        self.type_name, self._values = str(type_name), values

    def __array__(self, dtype=None, copy=None):
        if self._values is None:
            return np.asarray([self], dtype=object)
        return self._values if dtype is None else self._values.astype(dtype)

    def __repr__(self) -> str:
        return f"<{self.type_name}>"


def _opaque_class(name: str) -> type:
    """A subclass of :class:`Opaque` whose ``__name__`` is the sent type name (messages say it)."""
    safe = "".join(ch for ch in name if ch.isalnum() or ch == "_")[:60] or "object"
    return type(safe, (Opaque,), {})


# --- encoding ----------------------------------------------------------------------------------
def _array_node(array: np.ndarray, blobs: list) -> dict:
    if array.dtype.kind not in "biufc":
        raise TypeError(array.dtype)
    if array.flags.c_contiguous:
        layout = "C"
    elif array.flags.f_contiguous:
        layout = "F"
    else:
        layout = "S"
    data = np.ascontiguousarray(array)
    blobs.append(data.tobytes())
    return {"nd": len(blobs) - 1, "dtype": data.dtype.str, "shape": list(data.shape), "layout": layout}


def _tensor_node(tensor, blobs: list) -> dict:
    import torch

    tensor = tensor.detach().cpu()
    dtype = str(tensor.dtype).replace("torch.", "")
    values = tensor.to(torch.float32) if dtype in _LOW else tensor
    node = _array_node(np.ascontiguousarray(values.resolve_conj().resolve_neg().numpy()), blobs)
    node.pop("layout")
    return {"tensor": node, "dtype": dtype}


def _encode(value, blobs: list, depth: int):
    if depth > 64:
        raise WireError("a value nested more than 64 levels deep")
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value if abs(value) < 2**63 else {"bigint": str(value)}
    if kind is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if kind is complex:
        return {"complex": [repr(value.real), repr(value.imag)]}
    if kind is bytes:
        blobs.append(value)
        return {"bytes": len(blobs) - 1}
    if kind is list or kind is tuple:
        items = [_encode(v, blobs, depth + 1) for v in value]
        return items if kind is list else {"tuple": items}
    if kind is dict:
        return {"dict": [[_encode(k, blobs, depth + 1), _encode(v, blobs, depth + 1)] for k, v in value.items()]}
    if kind is np.ndarray:
        try:
            return _array_node(value, blobs)
        except TypeError:
            pass
    elif isinstance(value, np.generic) and type(value).__module__ == "numpy" and value.dtype.kind in "biufc":
        blobs.append(np.asarray(value).tobytes())
        return {"np": len(blobs) - 1, "dtype": value.dtype.str}
    elif type(value).__name__ in ("Tensor", "Parameter") and type(value).__module__.startswith("torch"):
        return _tensor_node(value, blobs)
    # subclasses of the plain types (a student's float subclass, say) travel as the plain value
    for plain in (bool, int, float, complex, str, bytes):
        if isinstance(value, plain):
            return _encode(plain(value), blobs, depth + 1)
    for plain in (list, tuple, dict):
        if isinstance(value, plain):
            return _encode(plain(value), blobs, depth + 1)
    return _other(value, blobs)


def _other(value, blobs: list) -> dict:
    """Any other object: its type name, and its numbers where NumPy reads it as an array of numbers."""
    node = {"other": type(value).__name__}
    try:
        array = np.asarray(value)
        if array.dtype.kind in "biufc":
            node["values"] = _array_node(np.ascontiguousarray(array), blobs)
    except Exception:
        pass
    return node


def encode(value) -> tuple[bytes, list[bytes]]:
    """``value`` as a JSON header and its buffers (see the module)."""
    blobs: list[bytes] = []
    tree = _encode(value, blobs, 0)
    return json.dumps(tree, allow_nan=False).encode(), blobs


# --- decoding ----------------------------------------------------------------------------------
def _array(node: dict, blobs: list) -> np.ndarray:
    dtype = np.dtype(str(node["dtype"]))
    if dtype.kind not in "biufc":
        raise WireError(f"dtype {dtype} is not numeric")
    shape = tuple(int(n) for n in node["shape"])
    if any(n < 0 for n in shape):
        raise WireError("a negative dimension")
    data = blobs[int(node["nd"])]
    if len(data) != math.prod(shape) * dtype.itemsize:
        raise WireError("an array's buffer does not match its shape")
    array = np.frombuffer(data, dtype=dtype).reshape(shape).copy()
    layout = node.get("layout", "C")
    if layout == "F":
        return np.asfortranarray(array)
    if layout == "S" and array.ndim >= 1:  # a view of every other element of a buffer twice as wide
        buffer = np.zeros((*array.shape[:-1], 2 * array.shape[-1]), dtype=array.dtype)
        buffer[..., 1::2] = -7.0 if array.dtype.kind in "fc" else 7 if array.dtype.kind in "iu" else 0
        buffer[..., 0::2] = array
        return buffer[..., 0::2]
    return array


def _decode(node, blobs: list, depth: int):
    if depth > 64:
        raise WireError("a value nested more than 64 levels deep")
    if node is None or isinstance(node, bool | int | float | str):
        return node
    if isinstance(node, list):
        return [_decode(v, blobs, depth + 1) for v in node]
    if not isinstance(node, dict) or len(node) == 0:
        raise WireError(f"an unknown node {type(node).__name__}")
    if "nd" in node:
        return _array(node, blobs)
    if "tuple" in node:
        return tuple(_decode(v, blobs, depth + 1) for v in node["tuple"])
    if "dict" in node:
        return {_key(_decode(k, blobs, depth + 1)): _decode(v, blobs, depth + 1) for k, v in node["dict"]}
    if "bigint" in node:
        return int(str(node["bigint"]))
    if "float" in node:
        return float(str(node["float"]))
    if "complex" in node:
        real, imag = node["complex"]
        return complex(float(str(real)), float(str(imag)))
    if "bytes" in node:
        return bytes(blobs[int(node["bytes"])])
    if "np" in node:
        dtype = np.dtype(str(node["dtype"]))
        if dtype.kind not in "biufc":
            raise WireError(f"dtype {dtype} is not numeric")
        return np.frombuffer(blobs[int(node["np"])], dtype=dtype, count=1)[0]
    if "tensor" in node:
        import torch

        dtype = str(node["dtype"])
        if not hasattr(torch, dtype) or not isinstance(getattr(torch, dtype), torch.dtype):
            raise WireError(f"an unknown torch dtype {dtype!r}")
        return torch.from_numpy(_array(node["tensor"], blobs)).to(getattr(torch, dtype))
    if "other" in node:
        values = _array(node["values"], blobs) if isinstance(node.get("values"), dict) else None
        return _opaque_class(str(node["other"]))(str(node["other"]), values)
    raise WireError(f"an unknown node with keys {sorted(node)[:5]}")


def _key(key):
    if isinstance(key, list):  # a dict key must be hashable: lists (from tuples) become tuples
        return tuple(key)
    return key


def decode(header: bytes, blobs: list[bytes]):
    """The value :func:`encode` wrote: fresh objects of built-in, NumPy or torch types only."""
    try:
        return _decode(json.loads(header), blobs, 0)
    except WireError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, RecursionError, MemoryError) as error:
        raise WireError(f"a malformed value ({type(error).__name__}: {error})") from None


# --- framing -----------------------------------------------------------------------------------
def write_message(fd: int, message: dict, value=None, deadline: float | None = None) -> None:
    """Write ``message`` (a JSON-able dict) and, if given, one encoded ``value`` to ``fd``
    (a non-blocking ``fd`` with a ``deadline`` of ``time.monotonic()``: :class:`TimeoutError` past it)."""
    payload: dict = dict(message)
    blobs: list[bytes] = []
    if value is not None:
        header, blobs = encode(value)
        payload["value"] = json.loads(header)
    sizes = [len(b) for b in blobs]
    head = json.dumps({"message": payload, "sizes": sizes}, allow_nan=False).encode()
    total = sum(sizes)
    if len(head) + total > MAX_BYTES:
        raise WireError(f"a message of {len(head) + total} bytes (at most {MAX_BYTES})")
    data = b"".join([_HEADER.pack(len(head), total), head, *blobs])
    view = memoryview(data)
    while view:
        if deadline is not None:
            _wait(fd, deadline, write=True)
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            continue
        view = view[written:]


def _wait(fd: int, deadline: float, write: bool = False) -> None:
    import select
    import time

    left = deadline - time.monotonic()
    ready = select.select([], [fd], [], max(left, 0))[1] if write else select.select([fd], [], [], max(left, 0))[0]
    if not ready:
        raise TimeoutError("no answer in time")


def _read_exactly(fd: int, count: int, deadline: float | None = None) -> bytes:
    parts, left = [], count
    while left:
        if deadline is not None:
            _wait(fd, deadline)
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the other side closed the pipe")
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def read_message(fd: int, deadline: float | None = None) -> tuple[dict, object]:
    """One message from ``fd``: the dict, and its value decoded (None when it carried none); with a
    ``deadline`` of ``time.monotonic()``, :class:`TimeoutError` when the message is not whole by then."""
    head_size, total = _HEADER.unpack(_read_exactly(fd, _HEADER.size, deadline))
    if head_size + total > MAX_BYTES:
        raise WireError(f"a message of {head_size + total} bytes (at most {MAX_BYTES})")
    try:
        envelope = json.loads(_read_exactly(fd, head_size, deadline))
        message, sizes = envelope["message"], [int(s) for s in envelope["sizes"]]
    except (ValueError, TypeError, KeyError, RecursionError, MemoryError) as error:
        raise WireError(f"a malformed message ({type(error).__name__})") from None
    if not isinstance(message, dict) or sum(sizes) != total or any(s < 0 for s in sizes):
        raise WireError("a malformed message")
    data = _read_exactly(fd, total, deadline)
    blobs, offset = [], 0
    for size in sizes:
        blobs.append(data[offset : offset + size])
        offset += size
    value = None
    if "value" in message:
        value = decode(json.dumps(message.pop("value")).encode(), blobs)
    return message, value
