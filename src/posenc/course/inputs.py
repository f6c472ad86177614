"""What an exercise's text allows for each argument, declared once: forms, variations, and their wording.

An :class:`Arg` names the kind of an argument and the forms the task's text allows for it
(a list, a NumPy array of some dtype, a torch tensor, a transposed or strided view, an int
where a float is asked for). The checker passes every form to the student's function (one
case each), changes one argument at a time to catch answers cached on part of the
arguments (:meth:`Arg.variants`), checks afterwards that no input was changed in place,
whatever its type (:func:`snapshot`, :func:`unchanged`), and writes the sentence of the
task text that says all of it (:meth:`Arg.describe`).

Kinds: ``Whole`` (an int), ``Real`` (a number), ``Wholes`` (whole numbers in an array or
list), ``Reals`` (an array of floats), ``Numbers`` (numbers in a list or array), ``Mapping``
(a dict, such as a model config).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .switchoff import window_helper

__all__ = [
    "Arg",
    "Mapping",
    "Numbers",
    "Real",
    "Reals",
    "Whole",
    "Wholes",
    "materialize",
    "snapshot",
    "unchanged",
    "form_label",
]


def _torch():
    import torch

    return torch


# --- forms: each turns a case's value into another value with the same numbers --------------------
def _whole_scalar(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and float(value).is_integer()


def _to_list(value):
    return np.asarray(value).tolist()


def _to_dtype(dtype):
    def convert(value):
        array = np.asarray(value)
        if array.dtype.kind not in "iuf":
            return None
        converted = array.astype(dtype)
        return converted if np.array_equal(converted.astype(array.dtype), array) else None

    return convert


def _to_ndarray(value):
    array = np.asarray(value)
    return array if array.dtype.kind in "iuf" else None


def _to_tensor(value):
    array = np.asarray(value)
    return _torch().from_numpy(np.array(array)) if array.dtype.kind in "iuf" else None


def _transposed(value):
    """The same values in a Fortran-ordered array (the transpose of a C-ordered one): not C-contiguous."""
    array = np.asarray(value)
    if array.ndim < 2 or array.shape[-1] < 2 or array.shape[-2] < 2:
        return None
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(array, -1, -2)), -1, -2)


def _strided(value):
    """The same values as a view that skips every other element of a buffer twice as wide."""
    array = np.asarray(value)
    if array.ndim < 1 or array.shape[-1] < 1:
        return None
    buffer = np.zeros((*array.shape[:-1], 2 * array.shape[-1]), dtype=array.dtype)
    buffer[..., 1::2] = -7.0 if array.dtype.kind == "f" else 7  # what a read of the wrong elements would see
    buffer[..., 0::2] = array
    return buffer[..., 0::2]


def _as_int(value):
    return int(value) if _whole_scalar(value) else None


def _as_float(value):
    return float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else None


def _as_np_int(value):
    return np.int64(value) if _whole_scalar(value) else None


def _as_np_float(value):
    return np.float64(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else None


def _ints_in_dict(value):
    """A dict (a config) whose whole-number floats are ints (``10000`` for ``10000.0``), recursively."""
    if not isinstance(value, dict):
        return None

    def convert(item):
        if isinstance(item, dict):
            return {k: convert(v) for k, v in item.items()}
        if isinstance(item, float) and item.is_integer() and item != 0:
            return int(item)
        return item

    converted = convert(value)
    changed = any(type(a) is not type(b) for a, b in _leaves(converted, value))
    return converted if changed else None


def _leaves(a, b):
    if isinstance(a, dict):
        for key in a:
            yield from _leaves(a[key], b[key])
    else:
        yield a, b


#: Form name -> (conversion from the case's value, or None when it does not apply; words for the text).
FORMS: dict[str, tuple[Callable, str]] = {
    "int": (_as_int, "an int"),
    "float": (_as_float, "a float"),
    "np.int64": (_as_np_int, "a NumPy integer"),
    "np.float64": (_as_np_float, "a NumPy float"),
    "list": (_to_list, "a list"),
    "ndarray": (_to_ndarray, "a NumPy array"),
    "int64": (_to_dtype(np.int64), "int64"),
    "int32": (_to_dtype(np.int32), "int32"),
    "float64": (_to_dtype(np.float64), "float64"),
    "tensor": (_to_tensor, "a torch tensor"),
    "transposed": (_transposed, "a transposed view"),
    "strided": (_strided, "a strided view"),
    "ints in dict": (_ints_in_dict, "whole numbers as ints"),
}


def materialize(value, form: str | None):
    """A fresh object for one call: ``value`` in ``form`` (None: a copy of the value as it is)."""
    if form is None:
        return _fresh(value)
    converted = FORMS[form][0](value)
    if converted is None:
        raise ValueError(f"form {form!r} does not apply to {type(value).__name__}")
    return _fresh(converted)


def _fresh(value):
    """A deep copy that keeps an array's memory layout (a view stays a view of a fresh buffer)."""
    if isinstance(value, np.ndarray):
        return value.copy(order="K")
    if hasattr(value, "detach") and hasattr(value, "clone"):
        return value.detach().clone()
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_fresh(v) for v in value)
    if isinstance(value, dict):
        return {k: _fresh(v) for k, v in value.items()}
    return value


def form_label(value) -> str:
    """A short description of a value's form, for messages: ``a list``, ``an int32 NumPy array``, ..."""
    if isinstance(value, np.ndarray):
        layout = ""
        if not value.flags.c_contiguous:
            layout = " (transposed)" if value.flags.f_contiguous else " (a strided view)"
        return f"a {value.dtype} NumPy array{layout}"
    if hasattr(value, "detach"):
        return f"a {str(value.dtype).replace('torch.', '')} torch tensor"
    if isinstance(value, bool):
        return "a bool"
    if isinstance(value, np.generic):
        return f"a NumPy {value.dtype}"
    return f"a {type(value).__name__}"


# --- snapshots: was an input changed? ----------------------------------------------------------
def snapshot(value):
    """A copy of ``value`` to compare with after the call (type, dtype, shape and values, recursively)."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype, value.shape, value.copy())
    if hasattr(value, "detach") and hasattr(value, "clone"):
        return ("tensor", value.dtype, tuple(value.shape), value.detach().clone())
    if isinstance(value, list | tuple):
        return (type(value).__name__, len(value), [snapshot(v) for v in value])
    if isinstance(value, dict):
        return ("dict", list(value), {k: snapshot(v) for k, v in value.items()})
    return ("value", type(value), value)


@window_helper
def unchanged(before, value) -> bool:
    """Whether ``value`` still matches its :func:`snapshot` ``before`` (never raises)."""
    try:
        kind = before[0]
        if kind == "ndarray":
            _, dtype, shape, copy = before
            return (
                isinstance(value, np.ndarray)
                and value.dtype == dtype
                and value.shape == shape
                and bool(np.array_equal(value, copy, equal_nan=dtype.kind in "fc"))
            )
        if kind == "tensor":
            _, dtype, shape, copy = before
            return (
                hasattr(value, "detach")
                and value.dtype == dtype
                and tuple(value.shape) == shape
                and bool(np.array_equal(value.detach().cpu().numpy(), copy.numpy(), equal_nan=copy.is_floating_point()))
            )
        if kind in ("list", "tuple"):
            _, length, items = before
            return type(value).__name__ == kind and len(value) == length and all(
                unchanged(b, v) for b, v in zip(items, value, strict=True)
            )
        if kind == "dict":
            _, keys, items = before
            return isinstance(value, dict) and list(value) == keys and all(unchanged(items[k], value[k]) for k in keys)
        _, kind_type, original = before
        if type(value) is not kind_type:
            return False
        if isinstance(original, float) and math.isnan(original):
            return math.isnan(value)
        return bool(value == original)
    except Exception:
        return False


# --- arguments ---------------------------------------------------------------------------------------
def _join(words: list) -> str:
    words = [w for w in words if w]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


@dataclass(frozen=True)
class Arg:
    """One argument: its kind, the forms the text allows, and how to change it for a rerun.

    ``forms`` are the alternatives the checker also passes (the case's own value is always
    passed as written); ``vary(value, rng)`` returns candidate values for "the same case with
    this argument changed" (the checker keeps the first that the reference accepts and that
    changes the answer); ``about`` replaces the generated words of the task text.
    """

    kind: str
    forms: tuple[str, ...] = ()
    vary: Callable | None = None
    about: str | None = None

    def __post_init__(self):
        unknown = [f for f in self.forms if f not in FORMS]
        if unknown:
            raise ValueError(f"unknown forms {unknown}; known: {sorted(FORMS)}")

    def variants(self, value, rng: np.random.Generator) -> list:
        """Candidate values for a rerun with only this argument changed."""
        if self.vary is not None:
            return list(self.vary(value, rng))
        return _default_variants(self.kind, value, rng)

    def describe(self) -> str:
        """The words of the task text for this argument, e.g. "a number (float or int)"."""
        if self.about is not None:
            return self.about
        if self.kind == "Whole":
            return "a whole number (int" + (" or NumPy integer)" if "np.int64" in self.forms else ")")
        if self.kind == "Real":
            return "a number (" + _join(["float", *(["int"] if "int" in self.forms else [])]) + ")"
        dtypes = [FORMS[f][1] for f in self.forms if f in ("int32", "float64")]
        tensor = ["a torch tensor"] if "tensor" in self.forms else []
        views = [f for f in self.forms if f in ("transposed", "strided")]
        if self.kind == "Wholes":
            array = "a NumPy array" + (f" ({_join(['int64', *dtypes])})" if dtypes else "")
            return "whole numbers as " + _join(["a list" if "list" in self.forms else None, array, *tensor])
        if self.kind == "Numbers":
            return "numbers as " + _join(["a list", "a NumPy array (of ints or floats)", *tensor])
        if self.kind == "Reals":
            return "a float64 NumPy array" + (f", possibly a {_join(views)} view" if views else "")
        return self.kind


def _default_variants(kind: str, value, rng) -> list:
    if kind == "Whole":
        v = int(value)
        return [v + 2, v + 1, v - 1, v * 2]
    if kind == "Real":
        v = float(value)
        return [v * 1.5 + 0.25, v * 0.75, v + 1.0]
    if kind in ("Wholes", "Numbers"):
        array = np.asarray(value)
        return [array + 1, array[::-1].copy(), array * 2]
    if kind == "Reals":
        array = np.asarray(value, dtype=float)
        return [-0.5 * array + 0.25, array[..., ::-1].copy()]
    return []


def Whole(*, forms=("np.int64",), vary=None, about=None) -> Arg:
    """A whole number (an int; with ``np.int64``, a NumPy integer too)."""
    return Arg("Whole", tuple(forms), vary, about)


def Real(*, forms=("int", "np.float64"), vary=None, about=None) -> Arg:
    """A number: a float, and an int where the value is whole (``int`` form)."""
    return Arg("Real", tuple(forms), vary, about)


def Wholes(*, forms=("list", "int32", "float64", "tensor"), vary=None, about=None) -> Arg:
    """Whole numbers in a list, a NumPy array (int64, int32, float64) or a torch tensor."""
    return Arg("Wholes", tuple(forms), vary, about)


def Numbers(*, forms=("list", "ndarray", "float64"), vary=None, about=None) -> Arg:
    """Numbers in a list or a NumPy array."""
    return Arg("Numbers", tuple(forms), vary, about)


def Reals(*, forms=("transposed", "strided"), vary=None, about=None) -> Arg:
    """A float64 NumPy array, possibly a transposed or strided view."""
    return Arg("Reals", tuple(forms), vary, about)


def Mapping(*, about: str, forms=("ints in dict",), vary=None) -> Arg:
    """A dict (such as a model config); ``about`` says what it holds (whole numbers also passed as ints)."""
    return Arg("Mapping", tuple(forms), vary, about)
