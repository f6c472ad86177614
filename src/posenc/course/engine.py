"""The checker engine: run a student's function on every case an exercise's spec implies, safely.

Each implementation exercise is data (an :class:`Exercise`): the reference (posenc), the
public cases the text shows, its boundary cases, a generator of hidden cases drawn from the
course seed, what the text allows for each argument and for the return value, tolerances,
the posenc helpers the task allows, and the recognised mistakes. :func:`run_check` calls the
student's function on every case of the exercise's :meth:`~Exercise.plan` and compares with
the reference. It never raises for anything the student's function does:

* the function runs in a forked child process (on POSIX), with a time limit per case
  (:data:`DEFAULT_TIMEOUT` seconds, or ``POSENC_CHECK_TIMEOUT``); an endless loop, a
  ``sys.exit()`` or a crash of the interpreter ends only the child;
* the plan, built the same way for every exercise: the public cases, the declared
  boundaries, the hidden cases, then each argument in every form the text allows (a list,
  a NumPy array of each allowed dtype, a tensor, a transposed or strided view: one case
  each), then reruns with one argument changed (a cache keyed on part of the arguments
  returns a stale answer) and the cases again in a shuffled order;
* while the function runs, posenc is switched off (:mod:`posenc.course.switchoff`): any
  of its functions, however reached, fails and fails the check, apart from the helpers
  the task allows;
* every input is compared after the call, whatever its type: a function that changes
  one fails;
* the return value is read inside the same window (a lazy object cannot call posenc
  afterwards) and must be what the text allows: any array of numbers (NumPy, torch of any
  dtype, bfloat16 included, or a list) unless the text names a NumPy array or a number;
* a wrong answer gets the hint of the mistake it matches (a dtype of the result, a model
  of the wrong function, an input rounded to float16 or bfloat16, a detector of a wrong
  type or overflow, a property of right answers); any other gets the first failing input
  with the expected and the returned values.

The hidden cases come from the course seed: ``POSENC_COURSE_SEED`` in the environment, or
``seed=`` (the grader's ``--course-seed``). Without one, a student still gets the public and
boundary cases, their forms and reruns.

Declaring an exercise (a new chapter's ``course/exercises/chNN.py``)
----------------------------------------------------------------------
One module per chapter holds the chapter's coursework; adding an exercise touches the chapter's
notebook and that module (plus its tests), nothing else.

1. In the notebook: the task (an ``{exercise}`` directive with a ``:label:``), a solution cell
   tagged ``solution`` (the model answer, which the mutation test mutates; NumPy, no posenc
   beyond the allowed helpers), and a check cell ``exercises.check("name", my_function)``.
2. In ``chNN.py``, ``Exercise(name, signature, reference, cases, mistakes, ...)``:
   ``reference`` is a posenc function (or a thin wrapper) taking the signature's parameter names;
   ``cases`` the examples the text promises (dicts of keyword arguments);
   ``args`` an :class:`~posenc.course.inputs.Arg` per parameter (``Whole()``, ``Real()``,
   ``Wholes()``, ``Reals()``, ``Numbers()``, ``Mapping(about=...)``; ``forms=`` what the text
   allows, ``vary=`` how to change it for a rerun when the default does not fit);
   ``boundaries`` the edge cases the text implies (first and last of a range, length 1, odd and
   even widths, fractional factors that truncate, values on and between the branch points the
   text names, the largest positions, float16-sensitive positions);
   ``hidden(rng)`` random cases over the whole domain, and ``domain(kwargs)`` if the reference
   accepts inputs the text does not describe;
   ``allowed`` the posenc helpers the task lets the student call (everything else in posenc is
   switched off); ``returns`` ("array"; "ndarray" only if the text says "NumPy array"; "float");
   ``rtol``/``atol`` and ``precision`` (what the text says about precision) or a ``tolerance``
   hook; ``mistakes`` (hint -> a model of the wrong function) and other detectors;
   ``answers`` more correct solutions in other styles (loops, bisection, torch), mutated too.
3. List it in the module's ``ACTIVITIES`` with ``implementation(EXERCISE, minutes=...)``, beside
   the chapter's predictions and investigations (``prediction(label, minutes, *rubric)``, ...).
4. Paste ``python -m posenc.course contract NAME`` (the "*Checked with:*" sentence that
   :meth:`Exercise.contract` writes) at the end of the task text: a test compares them.
5. Run ``python -m posenc.course mutants --exercise NAME``: every mutant that is not equivalent
   must be killed; a survivor's report names the input that shows it (add a boundary or a
   form). Each named hint needs a test that reproduces its mistake (``tests/test_course_mistakes.py``);
   the suite fails on a hint no test earns, and runs a seeded sample of every exercise's mutants.
"""

from __future__ import annotations

import contextlib
import html
import inspect
import io
import math
import numbers
import os
import sys
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import switchoff
from .inputs import FORMS, Arg, form_label, materialize, snapshot, unchanged
from .switchoff import HiddenFunctionError

__all__ = [
    "CheckResult",
    "Exercise",
    "HiddenFunctionError",
    "DEFAULT_TIMEOUT",
    "course_seed",
    "run_check",
]

#: Seconds a student's function may take on one case (``POSENC_CHECK_TIMEOUT`` overrides it).
DEFAULT_TIMEOUT = 5.0
#: Seconds the checker's own work on one case (reference, diagnosis) may take in the child.
_OWN_TIMEOUT = 120.0
_MAX_OUTPUT = 20_000
#: Cases with at most this many numbers in and out are run again (forms, reruns, shuffled order).
_SMALL = 20_000
#: Whether posenc is switched off while a student's function runs (tests of the references turn it off).
SWITCH_OFF = True

_HEADS = {
    "passed": "Correct",
    "failed": "Not yet",
    "not attempted": "Not attempted yet",
    "error": "Your function raised an error",
    "timed out": "Time limit reached",
    "exited": "Your function tried to end the program",
}
_WRITE_IT = "write the computation yourself (NumPy is fine); posenc's version is the answer key"


@dataclass
class CheckResult:
    """The outcome of a check.

    ``status`` is "passed", "failed", "not attempted", "error", "timed out" or "exited";
    ``passed`` (and ``bool(result)``) is true only for "passed".
    """

    exercise: str
    status: str
    message: str
    hint: str | None = None
    checked: int = 0

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        text = f"[{self.exercise}] {_HEADS.get(self.status, self.status)}: {self.message}"
        return text + (f"\nHint: {self.hint}" if self.hint else "")

    __repr__ = __str__

    def _repr_html_(self) -> str:
        colour = "#009E73" if self.passed else "#0072B2" if self.status == "not attempted" else "#D55E00"
        lines = html.escape(str(self)).replace("\n", "<br>")
        return (
            f'<div style="border-left:4px solid {colour};padding:.3em .8em;margin:.3em 0">'
            f"<code style='white-space:pre-wrap'>{lines}</code></div>"
        )


@dataclass
class Case:
    """One call: the case's values (the reference gets these), the form of each argument the student gets."""

    kwargs: dict
    forms: dict = field(default_factory=dict)
    origin: str = "public"  # public, boundary, hidden, form, rerun, changed, again
    hint: str | None = None  # shown when the function raises on this case
    precision: str | None = None  # shown when the answer is close but not close enough here

    @classmethod
    def from_dict(cls, case: dict, origin: str) -> Case:
        kwargs = {k: v for k, v in case.items() if not k.startswith("_")}
        return cls(kwargs, origin=origin, hint=case.get("_hint"), precision=case.get("_precision"))


def _number(x: float) -> str:
    mantissa, exponent = f"{x:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}" if abs(math.log10(x)) > 3 else f"{x:g}"


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


_RETURNS = {
    "array": "any array of numbers (NumPy, torch or a list)",
    "ndarray": "a NumPy array",
    "float": "one number",
}


@dataclass
class Exercise:
    """An implementation exercise: its spec (what the text promises), reference, cases and mistakes.

    ``cases`` are the public cases (dicts of keyword arguments; ``_hint`` is shown when the
    function raises on that case, ``_precision`` when its answer is close but not close
    enough there); ``boundaries`` the edge cases the text implies; ``hidden(rng)`` returns
    cases drawn from the course seed; ``domain(kwargs)`` says whether generated inputs are
    within what the text describes. ``args`` maps each parameter to an
    :class:`~posenc.course.inputs.Arg` (the forms the text allows). ``returns`` is "array"
    (any array of numbers), "ndarray" (a NumPy array only: the text must say so) or
    "float". ``rtol``/``atol`` are the tolerances, ``tolerance(kwargs, expected)`` adds an
    absolute allowance per entry, ``precision`` is what the text says about precision.
    ``answers`` are more model answers (source text defining the function, in other styles than
    the notebook's solution) for the mutation test.
    ``allowed`` names the posenc helpers the task allows (``"posenc.rope_inv_freq"``); the rest
    of posenc is switched off while the student's function runs. ``mistakes`` maps a hint to a
    model of the wrong function; ``detectors`` maps a hint to a predicate
    ``(kwargs, got, expected) -> bool``; ``error_hints`` a hint to ``(kwargs, exception) ->
    bool``; ``properties`` a true statement about right answers to a predicate
    ``(kwargs, got) -> bool`` that is true when the answer violates it.
    """

    name: str
    signature: str
    reference: Callable
    cases: list[dict]
    mistakes: dict[str, Callable] = field(default_factory=dict)
    rtol: float = 1e-7
    atol: float = 1e-9
    hidden: Callable[[np.random.Generator], list[dict]] | None = None
    returns: str = "array"
    binary: bool = False
    detectors: dict[str, Callable] = field(default_factory=dict)
    error_hints: dict[str, Callable] = field(default_factory=dict)
    properties: dict[str, Callable] = field(default_factory=dict)
    label: str = ""
    args: dict[str, Arg] = field(default_factory=dict)
    boundaries: list[dict] = field(default_factory=list)
    allowed: tuple[str, ...] = ()
    tolerance: Callable | None = None
    precision: str = ""
    domain: Callable | None = None
    answers: tuple[str, ...] = ()
    _plans: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        if self.returns not in _RETURNS:
            raise ValueError(f"returns must be one of {sorted(_RETURNS)}, got {self.returns!r}")
        unknown = set(self.args) - set(self.parameters)
        if unknown:
            raise ValueError(f"{self.name}: args {sorted(unknown)} are not parameters of {self.signature}")

    @property
    def function_name(self) -> str:
        """The name the chapter gives the student's function (``my_sinusoidal``)."""
        return self.signature.split("(", 1)[0].strip()

    @property
    def parameters(self) -> list[str]:
        """The parameter names of the signature, in order."""
        inside = self.signature.split("(", 1)[1].rsplit(")", 1)[0]
        return [part.split("=")[0].strip() for part in inside.split(",") if part.strip()]

    def all_cases(self, seed: int | None) -> list[dict]:
        """The public cases, the boundary cases, then the hidden ones drawn from ``seed`` (none without)."""
        return [case.kwargs for case in self._base(seed)]

    def _base(self, seed: int | None) -> list[Case]:
        cases = [Case.from_dict(c, "public") for c in self.cases]
        cases += [Case.from_dict(c, "boundary") for c in self.boundaries]
        if seed is not None and self.hidden is not None:
            rng = np.random.default_rng([int(seed), zlib.crc32(self.name.encode())])
            cases += [Case.from_dict(c, "hidden") for c in self.hidden(rng)]
        return cases

    def plan(self, seed: int | None) -> list[Case]:
        """Every call of a check: base cases, each argument in each allowed form, reruns (see the module)."""
        if seed not in self._plans:
            self._plans[seed] = _plan(self, seed)
        return self._plans[seed]

    def contract(self) -> str:
        """The sentence of the task text that states the spec (a test checks the notebook holds it)."""
        groups: list[tuple[list[str], str]] = []
        for name in (p for p in self.parameters if p in self.args):
            what = self.args[name].describe()
            if groups and groups[-1][1] == what:
                groups[-1][0].append(name)
            else:
                groups.append(([name], what))
        inputs = "; ".join(
            ", ".join(f"`{n}`" for n in names) + (": each " if len(names) > 1 else ": ") + what
            for names, what in groups
        )
        text = f"*Checked with:* {inputs}. Return {_RETURNS[self.returns]}, compared with posenc to a relative "
        text += f"tolerance of {_number(self.rtol)} and an absolute one of {_number(self.atol)} (float32 results "
        text += "to float32 rounding)" + (f": {self.precision}." if self.precision else ".")
        text += " Leave the inputs unchanged; posenc is switched off while your function runs"
        if self.allowed:
            text += ", apart from " + _join([f"`{name}`" for name in self.allowed])
        return text + "."


class _Reference:
    """The reference's answer for a case, as a float array (NumPy or torch results alike)."""

    @staticmethod
    def call(exercise: Exercise, kwargs: dict) -> np.ndarray:
        return _as_array(exercise.reference(**{k: materialize(v, None) for k, v in kwargs.items()}))


def _as_array(value) -> np.ndarray:
    if hasattr(value, "detach"):
        import torch

        value = value.detach().cpu().to(torch.float64).numpy()
    return np.asarray(value, dtype=float)


def _differs(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape != b.shape or not np.allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True)


def _plan(exercise: Exercise, seed: int | None) -> list[Case]:
    base = exercise._base(seed)
    rng = np.random.default_rng([0 if seed is None else int(seed) + 1, zlib.crc32(exercise.name.encode()), 7])
    if exercise.domain is not None:  # hidden draws outside what the text describes are left out
        outside = [c for c in base if c.origin != "hidden" and not exercise.domain(c.kwargs)]
        if outside:
            raise ValueError(f"{exercise.name}: a declared case lies outside the domain: {outside[0].kwargs}")
        base = [c for c in base if exercise.domain(c.kwargs)]
    small = []  # cases cheap enough to run again: by size, not by time, so that the plan is reproducible
    for case in base:
        answer = _Reference.call(exercise, case.kwargs)  # a case the reference refuses is a bug of the exercise
        inputs = sum(np.size(v) for v in case.kwargs.values() if isinstance(v, np.ndarray | list))
        if answer.size + inputs <= _SMALL:
            small.append(case)
    small = small or base[:1]
    plan = list(base)
    # each argument in each form the text allows: once on a public or boundary case, once on a hidden one
    for name, arg in exercise.args.items():
        for form in arg.forms:
            applies = [c for c in small if name in c.kwargs and FORMS[form][0](c.kwargs[name]) is not None]
            chosen = [c for c in applies if c.origin != "hidden"][:1] + [c for c in applies if c.origin == "hidden"][:1]
            for case in chosen[: 1 + (seed is not None)]:
                plan.append(Case(case.kwargs, {name: form}, "form", case.hint, case.precision))
    # reruns with one argument changed, right after the case itself
    for index, (name, arg) in enumerate(exercise.args.items()):
        pool = [c for c in small if name in c.kwargs]
        if not pool:
            continue
        case = pool[(index + int(rng.integers(len(pool)))) % len(pool)]
        before = _Reference.call(exercise, case.kwargs)
        for candidate in arg.variants(case.kwargs[name], rng):
            changed = {**case.kwargs, name: candidate}
            if exercise.domain is not None and not exercise.domain(changed):
                continue
            try:
                after = _Reference.call(exercise, changed)
            except Exception:
                continue
            if _differs(before, after):
                plan += [Case(case.kwargs, {}, "rerun", case.hint), Case(changed, {}, "changed", case.hint)]
                break
    # the same cases again, in another order
    plan += [Case(small[i].kwargs, {}, "again", small[i].hint) for i in rng.permutation(len(small))]
    return plan


def course_seed(seed: int | str | None = None) -> int | None:
    """The course seed: ``seed`` if given, else ``POSENC_COURSE_SEED``, else None (no hidden cases)."""
    if seed is None:
        seed = os.environ.get("POSENC_COURSE_SEED") or None
    if seed is None:
        return None
    try:
        value = int(seed)
    except (TypeError, ValueError):
        raise ValueError(f"the course seed must be a whole number, got {seed!r}") from None
    if value < 0:
        raise ValueError(f"the course seed must be a whole number >= 0, got {seed!r}")
    return value


def _timeout(timeout: float | None) -> float:
    if timeout is None:
        timeout = os.environ.get("POSENC_CHECK_TIMEOUT") or DEFAULT_TIMEOUT
    try:
        value = float(timeout)
    except (TypeError, ValueError):
        raise ValueError(f"the time limit must be a number of seconds, got {timeout!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"the time limit must be a positive number of seconds, got {timeout!r}")
    return value


# --- showing values --------------------------------------------------------------------------------
def _show_value(value) -> str:
    if hasattr(value, "detach") or isinstance(value, np.ndarray):
        array = _as_array(value) if hasattr(value, "detach") else np.asarray(value)
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


def _show(kwargs: dict) -> str:
    return ", ".join(f"{key}={_show_value(value)}" for key, value in kwargs.items())


# --- reading and judging the return value ----------------------------------------------------------
@dataclass
class _Returned:
    """What the student's function returned, read into plain NumPy inside the window."""

    kind: str  # none, text, bool, number, array, strings, other, unreadable
    type_name: str
    dtype: str = ""
    array: np.ndarray | None = None
    error: str = ""


@switchoff.window_helper
def _read(raw) -> _Returned:
    """The returned value as a float (or complex) NumPy array, read while posenc is still switched off."""
    kind = type(raw).__name__
    try:
        if raw is None:
            return _Returned("none", kind)
        if isinstance(raw, str | bytes):
            return _Returned("text", kind, array=np.asarray([repr(raw)]))
        if isinstance(raw, bool | np.bool_):
            return _Returned("bool", kind)
        if hasattr(raw, "detach") and hasattr(raw, "dtype"):
            import torch

            tensor = raw.detach().cpu()
            target = torch.complex128 if tensor.is_complex() else torch.float64
            return _Returned("array", "tensor", str(tensor.dtype).replace("torch.", ""), tensor.to(target).numpy())
        if isinstance(raw, numbers.Number | np.generic):
            array = np.asarray(raw)
            target = complex if array.dtype.kind == "c" else float
            return _Returned("number", kind, str(array.dtype), array.astype(target))
        array = np.asarray(raw)
        if array.dtype.kind in "US" or (
            array.dtype.kind == "O" and array.size and all(isinstance(v, str) for v in array.ravel())
        ):
            return _Returned("strings", kind, str(array.dtype))
        if array.dtype.kind == "c":
            return _Returned("array", kind, str(array.dtype), array.astype(complex))
        return _Returned("array", kind, str(array.dtype), array.astype(float))
    except Exception as error:
        return _Returned("unreadable", kind, error=f"{type(error).__name__}: {error}")


@switchoff.window_helper
def _call(function, given: dict, before: dict):
    """Run the student's function; read its answer and check its inputs, all inside the window."""
    raw = function(**given)
    returned = _read(raw)
    changed = [k for k in given if not unchanged(before[k], given[k])]
    return returned, changed


class _Wrong(Exception):
    """A return value of the wrong type or shape: message and hint."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message, self.hint = message, hint


def _text_hint(exercise: Exercise) -> str:
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


def _coerce(exercise: Exercise, value: _Returned, expected: np.ndarray) -> np.ndarray:
    """The student's value as a float array, or :class:`_Wrong` saying why it is not acceptable."""
    kind = value.type_name
    wanted = "a number" if exercise.returns == "float" else "an array of numbers"
    if value.kind == "unreadable":
        raise _Wrong(
            f"the checker could not read the {kind} it returned as numbers ({value.error})",
            "return a NumPy array (or a number) of plain floats",
        )
    if value.kind == "none":
        raise _Wrong("it returned None", "end your function with `return` and the result")
    if value.kind == "text":
        raise _Wrong(f"it returned the string {value.array[0]}, not {wanted}", _text_hint(exercise))
    if value.kind == "strings":
        raise _Wrong(f"it returned a {kind} of strings, not an array of numbers", _text_hint(exercise))
    if value.kind == "bool":
        raise _Wrong(f"it returned a {kind}, not a number", "return the value as a number")
    if value.array is not None and value.array.dtype.kind == "c":
        raise _Wrong(*_COMPLEX)
    if exercise.returns == "float":
        one = value.kind == "array" and value.array.size == 1 and kind in ("ndarray", "tensor")
        if value.kind == "number" or one:
            return value.array.reshape(())
        raise _Wrong(f"it returned a {kind}, not one number", "return one float, e.g. float(value)")
    if value.kind == "other":
        raise _Wrong(f"it returned a {kind}, not an array of numbers", "return a NumPy array")
    if exercise.returns == "ndarray" and kind != "ndarray":
        hint = "return tensor.numpy()" if kind == "tensor" else "wrap the result in np.array(...)"
        raise _Wrong(f"it returned a {kind}; the exercise asks for a NumPy array", hint)
    got = value.array
    if got.shape != expected.shape:
        raise _Wrong(f"it returned shape {got.shape}, expected shape {expected.shape}")
    if exercise.binary and got.size and not np.isin(got, (0.0, 1.0)).all():
        raise _Wrong("it returned values other than 0 and 1", "each entry is one bit: 0 or 1")
    return got


def _tolerances(exercise: Exercise, value: _Returned, kwargs: dict, expected: np.ndarray):
    rtol, atol = exercise.rtol, exercise.atol
    if value.dtype == "float32":  # a float32 result (angles in float64, say) is fine to float32 rounding
        scale = max(1.0, float(np.max(np.abs(expected), initial=0)))
        rtol, atol = max(rtol, 2e-6), max(atol, 2e-6 * scale)
    if exercise.tolerance is not None:
        atol = atol + np.asarray(exercise.tolerance(kwargs, expected), dtype=float)
    return rtol, atol


def _close(got, expected, rtol, atol) -> bool:
    return got.shape == expected.shape and bool(np.all(np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)))


def _first_difference(got: np.ndarray, expected: np.ndarray, rtol, atol) -> str:
    wrong = ~np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    index = tuple(int(i) for i in np.argwhere(wrong)[0])
    where = f"at index {index}" if index else "the value"
    count = f" ({int(wrong.sum())} of {wrong.size} entries differ)" if wrong.size > 1 else ""
    return f"{where}: expected {expected[index]:.10g}, got {got[index]:.10g}{count}"


# --- diagnosis -------------------------------------------------------------------------------------
_LOW = {"float16": "float16 (about 3 significant digits; whole numbers exact only up to 2048)",
        "bfloat16": "bfloat16 (about 2 significant digits; whole numbers exact only up to 256)"}


def _dtype_hint(value: _Returned) -> str | None:
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


def _rounding_hint(exercise: Exercise, kwargs: dict, got: np.ndarray, expected: np.ndarray) -> str | None:
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
                model = _Reference.call(exercise, {**kwargs, name: rounded})
            except Exception:
                continue
            if model.shape == got.shape and float(np.max(np.abs(got - model), initial=0)) < 0.05 * error:
                return (
                    f"your answer is the right one for `{name}` rounded to {_LOW[dtype]}: form `{name}` in "
                    "float64 (np.asarray(..., dtype=np.float64)), not in the dtype of other inputs or activations"
                )
    return None


def _half_precision_hint(got: np.ndarray, expected: np.ndarray) -> str | None:
    """Right to about 3 significant digits everywhere: a step in float16 or bfloat16 (x, positions, angles)."""
    scale = max(1.0, float(np.max(np.abs(expected), initial=0)))
    error = float(np.max(np.abs(got - expected), initial=0)) / scale
    if np.all(np.isfinite(got)) and 2e-4 <= error <= 2e-2:
        digits = round(-math.log10(error))
        return (
            f"your answer agrees with posenc to only about {digits} significant digits, the precision of float16 "
            "or bfloat16: some step of your computation runs in one of them (an input, the positions, the angles, "
            "cos and sin); keep every step in a wider float type"
        )
    return None


def _diagnose(exercise: Exercise, case: Case, value: _Returned, got: np.ndarray, expected: np.ndarray) -> str | None:
    """The hint for a wrong answer of the right type and shape, or None when it is not recognised."""
    kwargs = case.kwargs
    hint = _dtype_hint(value)
    if hint:
        return hint
    for hint, detected in exercise.detectors.items():
        with contextlib.suppress(Exception):
            if detected(kwargs, got, expected):
                return hint
    for hint, mistake in exercise.mistakes.items():
        try:
            wrong = _as_array(mistake(**{k: materialize(v, None) for k, v in kwargs.items()}))
        except Exception:
            continue
        # looser than grading: a mistake written in float32 still matches its model
        if wrong.shape == got.shape and np.allclose(got, wrong, rtol=1e-5, atol=1e-6, equal_nan=True):
            if not _close(wrong, expected, exercise.rtol, exercise.atol):  # the model is wrong here
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


# --- one check -------------------------------------------------------------------------------------
def _passed_posenc(exercise: Exercise, function) -> CheckResult | None:
    code = getattr(function, "__code__", None)
    if code is None or not switchoff._is_posenc(code) or not SWITCH_OFF:
        return None
    if (code.co_filename, code.co_qualname) in switchoff._allowed_codes(exercise.allowed):
        return None
    return CheckResult(
        exercise.name,
        "failed",
        f"you passed posenc's own {switchoff.public_name(code)}: exercise {exercise.name!r} asks you to write it "
        "yourself",
        hint=_WRITE_IT,
    )


def _judge(exercise: Exercise, function, case: Case, number: int, total: int, notify) -> CheckResult | None:
    """Run one case; None when it passed, else the result that says why not."""
    name = exercise.name
    given = {k: materialize(v, case.forms.get(k)) for k, v in case.kwargs.items()}
    before = {k: snapshot(v) for k, v in given.items()}
    where = f"check {number} of {total}, input {_show(given)}"
    notify(("call", number, _show(given)))
    error = None
    try:
        with switchoff.window(name, exercise.allowed, enabled=SWITCH_OFF) as window:
            try:
                value, changed = _call(function, given, before)
            except BaseException as raised:  # judged below, once the window is closed
                if isinstance(raised, KeyboardInterrupt):
                    raise
                error = raised
    finally:
        notify(("returned", number))
    failed = number - 1
    if window.violation is not None:
        caught = "" if isinstance(error, HiddenFunctionError) else " (your function caught the error; it still counts)"
        return CheckResult(
            name,
            "failed",
            f"{where}: your function called {window.violation}, which is switched off{caught}: "
            + switchoff.why(name, exercise.allowed),
            hint=_WRITE_IT,
            checked=failed,
        )
    if window.tampered:
        return CheckResult(
            name,
            "failed",
            f"{where}: your function turned off the checker's tracing (sys.settrace) or changed its settings",
            hint="leave sys.settrace and the checker's state alone; the checker uses them to switch posenc off",
            checked=failed,
        )
    if isinstance(error, NotImplementedError):
        return CheckResult(name, "not attempted", f"replace the `raise NotImplementedError` in {exercise.signature}")
    if isinstance(error, SystemExit):
        return CheckResult(
            name,
            "exited",
            f"{where}: your function called sys.exit() or exit() (SystemExit: {error.code!r}); the check stopped "
            "there and nothing else was affected",
            hint="return the result instead of ending the program",
            checked=failed,
        )
    if error is not None:
        hint = next(
            (h for h, matches in exercise.error_hints.items() if _matches(matches, case.kwargs, error)),
            case.hint or "run it on that input in a cell of its own and read the traceback",
        )
        return CheckResult(name, "error", f"{where}: it raised {type(error).__name__}: {error}", hint=hint,
                           checked=failed)
    if changed:
        arg = changed[0]
        return CheckResult(
            name,
            "failed",
            f"{where}: your function changed its argument `{arg}` in place",
            hint=f"leave the inputs as they are: work on a copy ({arg} = {arg}.copy()) or build a new array "
            "(x * 2 instead of x *= 2; no assignment into x[...]; no out= pointing at an input)",
            checked=failed,
        )
    expected = _Reference.call(exercise, case.kwargs)
    try:
        got = _coerce(exercise, value, expected)
    except _Wrong as wrong:
        hint = wrong.hint
        if hint is None and value.array is not None:
            hint = _dtype_hint(value)
            for h, detected in exercise.detectors.items():
                with contextlib.suppress(Exception):
                    if hint is None and detected(case.kwargs, value.array, expected):
                        hint = h
        return CheckResult(name, "failed", f"{where}: {wrong.message}", hint=hint, checked=failed)
    rtol, atol = _tolerances(exercise, value, case.kwargs, expected)
    if _close(got, expected, rtol, atol):
        return None
    try:
        hint = _diagnose(exercise, case, value, got, expected)
    except Exception:  # a diagnosis that fails must not hide the failing input
        hint = None
    detail = _first_difference(got, expected, rtol, atol)
    return CheckResult(name, "failed", f"{where}: {detail}", hint=hint, checked=failed)


def _run_cases(exercise: Exercise, function, cases: list[Case], notify: Callable) -> CheckResult:
    """Call ``function`` on every case and judge it (runs in the child, or in-process)."""
    passed_own = _passed_posenc(exercise, function)
    if passed_own is not None:
        return passed_own
    total = len(cases)
    for number, case in enumerate(cases, start=1):
        result = _judge(exercise, function, case, number, total, notify)
        if result is not None:
            return result
    return CheckResult(exercise.name, "passed", f"all {total} checks agree with posenc", checked=total)


def _matches(predicate, kwargs, error) -> bool:
    try:
        return bool(predicate(kwargs, error))
    except Exception:
        return False


# --- isolation and time limits ---------------------------------------------------------------------
def _timed_out(exercise: Exercise, number: int, total: int, shown: str, limit: float) -> CheckResult:
    return CheckResult(
        exercise.name,
        "timed out",
        f"check {number} of {total}, input {shown}: your function did not return within {limit:g} seconds, "
        "so the check stopped it",
        hint="look for a loop that never ends (a while whose condition never changes), or a loop over far "
        "more values than needed; set POSENC_CHECK_TIMEOUT to allow more time",
        checked=number - 1,
    )


def _run_forked(exercise, function, cases, limit) -> tuple[CheckResult, str]:
    import multiprocessing.connection as mpc

    reader, writer = mpc.Pipe(duplex=False)
    pid = os.fork()
    if pid == 0:  # the child: run, report, and leave without running anything of the parent's
        status = 0
        try:
            reader.close()
            if "torch" in sys.modules:  # torch's OpenMP pool does not survive a fork
                sys.modules["torch"].set_num_threads(1)
            buffer = io.StringIO()
            sys.stdout = sys.stderr = buffer
            result = _run_cases(exercise, function, cases, writer.send)
            writer.send(("result", result, buffer.getvalue()[-_MAX_OUTPUT:]))
        except BaseException as error:  # anything at all must end in os._exit
            with contextlib.suppress(BaseException):
                writer.send(("crash", f"{type(error).__name__}: {error}", ""))
            status = 1
        finally:
            os._exit(status)
    writer.close()
    number, shown, deadline = 0, "", time.monotonic() + _OWN_TIMEOUT
    student_running = False
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not reader.poll(remaining):
                if student_running:
                    return _timed_out(exercise, number, len(cases), shown, limit), ""
                return CheckResult(exercise.name, "error", "the checker itself ran out of time", checked=number), ""
            try:
                message = reader.recv()
            except (EOFError, OSError):
                return (
                    CheckResult(
                        exercise.name,
                        "exited",
                        f"check {number} of {len(cases)}, input {shown}: the process running your function ended "
                        "without an answer (os._exit, a crash of the interpreter, or it was killed)",
                        hint="return the result; do not end the process",
                        checked=max(number - 1, 0),
                    ),
                    "",
                )
            if message[0] == "call":
                _, number, shown = message
                student_running, deadline = True, time.monotonic() + limit
            elif message[0] == "returned":
                student_running, deadline = False, time.monotonic() + _OWN_TIMEOUT
            elif message[0] == "result":
                return message[1], message[2]
            else:  # "crash": the checker itself failed
                return CheckResult(exercise.name, "error", f"the checker failed: {message[1]}", checked=number), ""
    finally:
        reader.close()
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(pid, 9)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def _run_threaded(exercise, function, cases, limit) -> tuple[CheckResult, str]:
    """Fallback without fork: a daemon thread; a function that never returns is left running."""
    progress = {"number": 0, "shown": "", "deadline": None}
    outcome: list = []

    def notify(message):
        if message[0] == "call":
            progress.update(number=message[1], shown=message[2], deadline=time.monotonic() + limit)
        elif message[0] == "returned":
            progress["deadline"] = None

    def target():
        try:
            outcome.append(_run_cases(exercise, function, cases, notify))
        except BaseException as error:
            outcome.append(CheckResult(exercise.name, "error", f"the checker failed: {error}"))

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.05)
        deadline = progress["deadline"]
        if deadline is not None and time.monotonic() > deadline and worker.is_alive():
            return _timed_out(exercise, progress["number"], len(cases), progress["shown"], limit), ""
    return outcome[0], ""


def run_check(
    exercise: Exercise, function, *, seed: int | None = None, timeout: float | None = None, quiet: bool = False
) -> CheckResult:
    """Check ``function`` against ``exercise`` (see the module's docstring); never raises for the student's faults."""
    if function is None or not callable(function):
        return CheckResult(exercise.name, "not attempted", f"pass your function, {exercise.signature}, to the checker")
    cases = exercise.plan(course_seed(seed))
    limit = _timeout(timeout)
    mode = os.environ.get("POSENC_CHECK_ISOLATION", "fork")
    if mode == "fork" and hasattr(os, "fork"):
        result, printed = _run_forked(exercise, function, cases, limit)
    else:
        result, printed = _run_threaded(exercise, function, cases, limit)
    if printed and not quiet:
        sys.stdout.write(printed)
    return result


def reference_calls(exercise: Exercise) -> list[str]:
    """The public posenc functions the reference reaches on the public cases (what a switch-off must cover)."""
    import posenc

    public = {}
    for module in [posenc, *(m for n, m in sys.modules.items() if n.startswith("posenc.") and m is not None)]:
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr, None)
            if inspect.isfunction(obj) and switchoff._is_posenc(obj.__code__):
                public.setdefault(obj.__code__, f"posenc.{attr}" if module is posenc else f"{module.__name__}.{attr}")
    seen: dict[str, None] = {}

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in public:
            seen.setdefault(public[frame.f_code])

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        for case in exercise.cases:
            _Reference.call(exercise, {k: v for k, v in case.items() if not k.startswith("_")})
    finally:
        sys.setprofile(previous)
    return list(seen)
