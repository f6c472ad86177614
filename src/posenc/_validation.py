"""Argument checks shared by every public function.

Each check raises a ``TypeError`` (wrong kind of value) or ``ValueError`` (right
kind, wrong value) whose message names the parameter, shows the value received
and says what is allowed, so that a student sees the mistake at the call site
rather than an ``IndexError`` from deep inside NumPy.
"""

from __future__ import annotations

import math
import numbers

import numpy as np


def show_value(value) -> str:
    """A short ``repr`` of ``value`` for error messages."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_int(name: str, value, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an ``int``; refuse bools, floats and out-of-range values.

    Integral floats such as ``4.0`` are refused too: a length written as a float is
    usually a sign that something upstream divided where it meant to floor-divide.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {show_value(value)} of type {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be an integer <= {maximum}, got {value}")
    return value


def check_even_int(name: str, value, *, minimum: int = 2) -> int:
    """Return ``value`` as an even ``int`` >= ``minimum`` (RoPE rotates pairs of dimensions)."""
    value = check_int(name, value, minimum=minimum)
    if value % 2:
        raise ValueError(
            f"{name} must be even (dimensions are rotated in pairs), got {value}; use {value - 1} or {value + 1}"
        )
    return value


def check_bool(name: str, value) -> bool:
    """Return ``value`` if it is a bool (NumPy's too); refuse strings, numbers and None."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False, got {show_value(value)} of type {type(value).__name__}")
    return bool(value)


def check_real(
    name: str,
    value,
    *,
    positive: bool = False,
    minimum: float | None = None,
    strictly_above: float | None = None,
) -> float:
    """Return ``value`` as a finite ``float``, optionally bounded below."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {show_value(value)} of type {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if positive and value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if strictly_above is not None and value <= strictly_above:
        raise ValueError(f"{name} must be > {strictly_above}, got {value}")
    return value


def check_base(value) -> float:
    """Return a valid frequency base: finite and > 1 (a base <= 1 gives no spread of wavelengths)."""
    return check_real("base", value, strictly_above=1.0)


def check_choice(name: str, value, allowed) -> str:
    """Return ``value`` if it is one of ``allowed`` (strings), else raise naming them all."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {sorted(allowed)}, got {show_value(value)}")
    if value not in allowed:
        raise ValueError(f"{name} must be one of {sorted(allowed)}, got {value!r}")
    return value


def check_dtype(name: str, value) -> np.dtype:
    """Return a NumPy floating dtype; refuse integer and complex dtypes."""
    try:
        dtype = np.dtype(value)
    except TypeError as error:
        shown = show_value(value)
        raise TypeError(f"{name} must be a NumPy floating dtype such as numpy.float32, got {shown}") from error
    if not np.issubdtype(dtype, np.floating):
        raise ValueError(f"{name} must be a floating dtype (float16, float32 or float64), got {dtype}")
    return dtype


def as_real_array(
    name: str, value, *, ndim: int | None = None, integer: bool = False, allow_neg_inf: bool = False
) -> np.ndarray:
    """Return ``value`` as a finite NumPy array.

    With ``integer=True`` the values must be whole numbers (an integer dtype, or floats
    that are exactly integral) and the result has dtype int64; otherwise float64.
    With ``allow_neg_inf=True``, ``-inf`` entries (a mask) are allowed, NaN and ``+inf`` not.
    """
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        value = value.detach().cpu().numpy()
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as error:  # ragged nested lists
        raise ValueError(f"{name} must be a rectangular array of numbers, got {show_value(value)}") from error
    if array.dtype == object or array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be an array of real numbers, got dtype {array.dtype} from {show_value(value)}")
    if array.dtype.kind == "b":
        raise TypeError(f"{name} must hold numbers, not booleans")
    if ndim is not None and array.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {array.shape}")
    if array.dtype.kind == "f" and not np.all(np.isfinite(array) | (allow_neg_inf & np.isneginf(array))):
        raise ValueError(f"{name} must be finite, got non-finite values in {show_value(value)}")
    if integer:
        if array.dtype.kind == "f":
            if not np.all(array == np.round(array)):
                bad = array[array != np.round(array)].ravel()[0]
                raise ValueError(f"{name} must hold whole numbers (positions are integers), got {bad}")
        return array.astype(np.int64)
    return array.astype(np.float64)


def is_torch(x) -> bool:
    """True for a torch tensor, without importing torch (the kernels work without it)."""
    return type(x).__module__.startswith("torch") and hasattr(x, "requires_grad")


def check_inv_freq(inv_freq) -> np.ndarray:
    """RoPE speeds: a non-empty 1-D float64 array of finite values >= 0 (radians per position)."""
    inv_freq = as_real_array("inv_freq", inv_freq, ndim=1)
    if inv_freq.size == 0:
        raise ValueError("inv_freq must hold at least one frequency, got an empty array")
    if np.any(inv_freq < 0):
        raise ValueError(f"inv_freq must be >= 0 (radians per position), got min {inv_freq.min()}")
    return inv_freq
