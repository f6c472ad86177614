"""Judging one answer: the reference's value, the student's value read into NumPy, tolerances, hints.

The student's return value is read inside the switch-off window (:func:`read_returned`, registered with
:func:`~posenc.course.switchoff.window_helper`), so that an object that computes when it is read
cannot call posenc afterwards; then :func:`coerce` checks its type and shape against what the
text allows, :func:`tolerances` says how close is close enough, and :func:`diagnose` names the
mistake when it recognises one: a low-precision dtype of the result, an exercise's detector or
mistake model, an input rounded to float16 or bfloat16, a computation in half precision, a
property of right answers, the case's own hint.
"""

from __future__ import annotations

import contextlib
import math
import numbers
from dataclasses import dataclass

import numpy as np

from . import switchoff
from .inputs import form_label, materialize, unchanged

# ``exercise`` below is a posenc.course.engine.Exercise and ``case`` one of its Cases: not imported, not
# even for type checkers, because the engine imports this module (one direction between the two).
__all__ = [
    "Returned",
    "WrongType",
    "as_array",
    "call_student",
    "close",
    "coerce",
    "diagnose",
    "differs",
    "dtype_hint",
    "first_difference",
    "read_returned",
    "reference_value",
    "show",
    "tolerances",
]

def reference_value(exercise, kwargs: dict) -> np.ndarray:
    """The reference's answer for a case, as a float array (NumPy or torch results alike)."""
    return as_array(exercise.reference(**{k: materialize(v, None) for k, v in kwargs.items()}))


def as_array(value) -> np.ndarray:
    if hasattr(value, "detach"):
        import torch

        value = value.detach().cpu().to(torch.float64).numpy()
    return np.asarray(value, dtype=float)


def differs(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape != b.shape or not np.allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True)


# --- showing values --------------------------------------------------------------------------------
def show_value(value) -> str:
    if hasattr(value, "detach") or isinstance(value, np.ndarray):
        array = as_array(value) if hasattr(value, "detach") else np.asarray(value)
        if array.ndim == 0:
            return repr(array.item())
        if array.size <= 12:
            text = np.array2string(array, separator=", ", precision=6, threshold=12).replace("\n", "")
        else:
            text = f"<array of shape {array.shape}>"
        return f"{text} ({form_label(value)})"
    if isinstance(value, np.generic):
        return f"{value.item()!r} ({form_label(value)})"
    if isinstance(value, list) and len(str(value)) > 120:
        return f"<list of {len(value)}>"
    return repr(value)


def show(kwargs: dict) -> str:
    return ", ".join(f"{key}={show_value(value)}" for key, value in kwargs.items())


# --- reading and judging the return value ----------------------------------------------------------
@dataclass
class Returned:
    """What the student's function returned, read into plain NumPy inside the window."""

    kind: str  # none, text, bool, number, array, strings, other, unreadable
    type_name: str
    dtype: str = ""
    array: np.ndarray | None = None
    error: str = ""


@switchoff.window_helper
def read_returned(raw) -> Returned:
    """The returned value as a float (or complex) NumPy array, read while posenc is still switched off."""
    kind = type(raw).__name__
    try:
        if raw is None:
            return Returned("none", kind)
        if isinstance(raw, str | bytes):
            return Returned("text", kind, array=np.asarray([repr(raw)]))
        if isinstance(raw, bool | np.bool_):
            return Returned("bool", kind)
        if hasattr(raw, "detach") and hasattr(raw, "dtype"):
            import torch

            tensor = raw.detach().cpu()
            target = torch.complex128 if tensor.is_complex() else torch.float64
            return Returned("array", "tensor", str(tensor.dtype).replace("torch.", ""), tensor.to(target).numpy())
        if isinstance(raw, numbers.Number | np.generic):
            array = np.asarray(raw)
            target = complex if array.dtype.kind == "c" else float
            return Returned("number", kind, str(array.dtype), array.astype(target))
        array = np.asarray(raw)
        if array.dtype.kind in "US" or (
            array.dtype.kind == "O" and array.size and all(isinstance(v, str) for v in array.ravel())
        ):
            return Returned("strings", kind, str(array.dtype))
        if array.dtype.kind == "c":
            return Returned("array", kind, str(array.dtype), array.astype(complex))
        return Returned("array", kind, str(array.dtype), array.astype(float))
    except Exception as error:
        return Returned("unreadable", kind, error=f"{type(error).__name__}: {error}")


@switchoff.window_helper
def call_student(function, given: dict, before: dict):
    """Run the student's function; read its answer and check its inputs, all inside the window."""
    raw = function(**given)
    returned = read_returned(raw)
    changed = [k for k in given if not unchanged(before[k], given[k])]
    return returned, changed


class WrongType(Exception):
    """A return value of the wrong type or shape: message and hint."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message, self.hint = message, hint


def _text_hint(exercise) -> str:
    if exercise.binary:
        return (
            "your bits are the characters '0' and '1' (text, e.g. from format(p, 'b') or bin(p)), "
            "not the numbers 0 and 1: compute them with arithmetic, (p >> j) & 1"
        )
    return "return numbers, not text: drop the formatting (f-strings, str(), round-to-text)"


_COMPLEX = (
    "it returned complex numbers; the answer is real",
    "the sum of e^{i k w} is complex: the dot product is its real part (.real), the sum of the cosines",
)


def coerce(exercise, value: Returned, expected: np.ndarray) -> np.ndarray:
    """The student's value as a float array, or :class:`WrongType` saying why it is not acceptable."""
    kind = value.type_name
    wanted = "a number" if exercise.returns == "float" else "an array of numbers"
    if value.kind == "unreadable":
        raise WrongType(
            f"the checker could not read the {kind} it returned as numbers ({value.error})",
            "return a NumPy array (or a number) of plain floats",
        )
    if value.kind == "none":
        raise WrongType("it returned None", "end your function with `return` and the result")
    if value.kind == "text":
        raise WrongType(f"it returned the string {value.array[0]}, not {wanted}", _text_hint(exercise))
    if value.kind == "strings":
        raise WrongType(f"it returned a {kind} of strings, not an array of numbers", _text_hint(exercise))
    if value.kind == "bool":
        raise WrongType(f"it returned a {kind}, not a number", "return the value as a number")
    if value.array is not None and value.array.dtype.kind == "c":
        raise WrongType(*_COMPLEX)
    if exercise.returns == "float":
        one = value.kind == "array" and value.array.size == 1 and kind in ("ndarray", "tensor")
        if value.kind == "number" or one:
            return value.array.reshape(())
        raise WrongType(f"it returned a {kind}, not one number", "return one float, e.g. float(value)")
    if value.kind == "other":
        raise WrongType(f"it returned a {kind}, not an array of numbers", "return a NumPy array")
    if exercise.returns == "ndarray" and kind != "ndarray":
        hint = "return tensor.numpy()" if kind == "tensor" else "wrap the result in np.array(...)"
        raise WrongType(f"it returned a {kind}; the exercise asks for a NumPy array", hint)
    got = value.array
    if got.shape != expected.shape:
        raise WrongType(f"it returned shape {got.shape}, expected shape {expected.shape}")
    if exercise.binary and got.size and not np.isin(got, (0.0, 1.0)).all():
        raise WrongType("it returned values other than 0 and 1", "each entry is one bit: 0 or 1")
    return got


def tolerances(exercise, value: Returned, kwargs: dict, expected: np.ndarray):
    rtol, atol = exercise.rtol, exercise.atol
    if value.dtype == "float32":  # a float32 result (angles in float64, say) is fine to float32 rounding
        scale = max(1.0, float(np.max(np.abs(expected), initial=0)))
        rtol, atol = max(rtol, 2e-6), max(atol, 2e-6 * scale)
    if exercise.tolerance is not None:
        atol = atol + np.asarray(exercise.tolerance(kwargs, expected), dtype=float)
    return rtol, atol


def close(got, expected, rtol, atol) -> bool:
    return got.shape == expected.shape and bool(np.all(np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)))


def first_difference(got: np.ndarray, expected: np.ndarray, rtol, atol) -> str:
    wrong = ~np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    index = tuple(int(i) for i in np.argwhere(wrong)[0])
    where = f"at index {index}" if index else "the value"
    count = f" ({int(wrong.sum())} of {wrong.size} entries differ)" if wrong.size > 1 else ""
    return f"{where}: expected {expected[index]:.10g}, got {got[index]:.10g}{count}"


# --- diagnosis -------------------------------------------------------------------------------------
_LOW = {"float16": "float16 (about 3 significant digits; whole numbers exact only up to 2048)",
        "bfloat16": "bfloat16 (about 2 significant digits; whole numbers exact only up to 256)"}


def dtype_hint(value: Returned) -> str | None:
    if value.dtype in _LOW:
        return (
            f"your result is {_LOW[value.dtype]}: compute in float64 (or at least float32) and return that; "
            "the checker compares to the tolerance the task states"
        )
    return None


def _rounded(value, dtype: str):
    import torch

    tensor = torch.as_tensor(np.asarray(value, dtype=np.float64))
    rounded = tensor.to(getattr(torch, dtype)).to(torch.float64).numpy()
    return rounded.item() if np.ndim(value) == 0 else rounded


def _rounding_hint(exercise, kwargs: dict, got: np.ndarray, expected: np.ndarray) -> str | None:
    """An input rounded to float16 or bfloat16 (positions built in the activations' dtype, say)."""
    error = float(np.max(np.abs(got - expected), initial=0))
    for name, arg in exercise.args.items():
        if arg.kind not in ("Wholes", "Reals", "Numbers", "Real") or name not in kwargs:
            continue
        value = np.asarray(kwargs[name], dtype=float)
        if np.max(np.abs(value), initial=0) > 65504 and not np.all(np.isfinite(got)) and np.all(np.isfinite(expected)):
            return (
                f"your answer has inf or NaN where the answer is finite: `{name}` holds values above 65504, "
                f"which overflow {_LOW['float16']}: form `{name}` in float64 (np.asarray(..., dtype=np.float64))"
            )
        for dtype in ("float16", "bfloat16"):
            rounded = _rounded(kwargs[name], dtype)
            if np.array_equal(rounded, np.asarray(kwargs[name], dtype=float)):
                continue
            try:
                model = reference_value(exercise, {**kwargs, name: rounded})
            except Exception:
                continue
            if model.shape == got.shape and float(np.max(np.abs(got - model), initial=0)) < 0.05 * error:
                return (
                    f"your answer is the right one for `{name}` rounded to {_LOW[dtype]}: form `{name}` in "
                    "float64 (np.asarray(..., dtype=np.float64)), not in the dtype of other inputs or activations"
                )
    return None


def _half_precision_hint(got: np.ndarray, expected: np.ndarray) -> str | None:
    """Right to about 3 significant digits, with the scatter of rounding: a step in float16 or bfloat16.

    Rounding at some step leaves most entries a little off, some up and some down, by up to a few of
    the format's steps (float16: 2**-11 of the value, bfloat16: 2**-8; the median entry within 16 of
    bfloat16's steps). A mistake of another kind that
    lands in the same range of error (a constant slightly off, one entry or one column wrong, a
    systematic bias) does not: it moves few entries, or moves them all the same way."""
    scale = max(1.0, float(np.max(np.abs(expected), initial=0)))
    error = float(np.max(np.abs(got - expected), initial=0)) / scale
    if not (np.all(np.isfinite(got)) and 2e-4 <= error <= 2e-2):
        return None
    off = (got - expected).ravel()
    value = expected.ravel()
    judged = np.abs(value) > 1e-3 * scale  # entries large enough for their relative error to mean something
    if int(judged.sum()) < 16:  # too few entries to tell rounding from a mistake
        return None
    relative = off[judged] / value[judged]  # signed: a factor slightly off moves every entry the same way
    moved = np.abs(relative) > 1e-9
    if moved.mean() < 0.75:  # rounding touches most entries
        return None
    up = float((relative[moved] > 0).mean())
    if not 0.15 <= up <= 0.85:  # ... some up, some down
        return None
    if float(np.median(np.abs(relative))) > 16 * 2.0**-8:  # ... typically by a few of bfloat16's steps at most
        return None
    digits = round(-math.log10(error))
    return (
        f"your answer agrees with posenc to only about {digits} significant digits, the precision of float16 "
        "or bfloat16: some step of your computation runs in one of them (an input, the positions, the angles, "
        "cos and sin); keep every step in a wider float type"
    )


def diagnose(exercise, case, value: Returned, got: np.ndarray, expected: np.ndarray) -> str | None:
    """The hint for a wrong answer of the right type and shape, or None when it is not recognised."""
    kwargs = case.kwargs
    hint = dtype_hint(value)
    if hint:
        return hint
    for hint, detected in exercise.detectors.items():
        with contextlib.suppress(Exception):
            if detected(kwargs, got, expected):
                return hint
    for hint, mistake in exercise.mistakes.items():
        try:
            wrong = as_array(mistake(**{k: materialize(v, None) for k, v in kwargs.items()}))
        except Exception:
            continue
        # looser than grading: a mistake written in float32 still matches its model
        if wrong.shape == got.shape and np.allclose(got, wrong, rtol=1e-5, atol=1e-6, equal_nan=True):
            if not close(wrong, expected, exercise.rtol, exercise.atol):  # the model is wrong here
                return hint
    hint = _rounding_hint(exercise, kwargs, got, expected) or _half_precision_hint(got, expected)
    if hint:
        return hint
    for statement, violated in exercise.properties.items():
        with contextlib.suppress(Exception):
            if violated(kwargs, got):
                return statement
    if case.precision and np.all(np.isfinite(got)) and np.max(np.abs(got - expected)) < 0.2:
        return case.precision
    return None
