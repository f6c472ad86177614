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

Declaring an exercise (a new chapter's ``course/coursework/chNN.py``)
-----------------------------------------------------------------------
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
   hook; ``mistakes`` (hint -> a model of the wrong function) and other detectors.
   More correct solutions in other styles (loops, bisection, torch), mutated too, go into the answer
   key, not the package: ``ANSWERS`` of ``teacher/key/chNN.py`` (:mod:`posenc.course.key`).
3. List it in the module's ``CHAPTER_ACTIVITIES`` with ``implementation(EXERCISE, minutes=...)``, beside
   the chapter's predictions and investigations (``prediction(label, minutes)``, ...), whose rubrics
   and website questions go into the answer key (``RUBRICS``, ``PREDICTIONS``).
4. Paste ``python -m posenc.course contract NAME`` (the "*Checked with:*" sentence that
   :meth:`Exercise.contract` writes) at the end of the task text: a test compares them.
5. Run ``python -m posenc.course mutants --exercise NAME``: every mutant that is not equivalent
   must be killed; a survivor's report names the input that shows it (add a boundary or a
   form). Each named hint needs a test that reproduces its mistake (``tests/test_course_mistakes.py``);
   the suite fails on a hint no test earns, and runs a seeded sample of every exercise's mutants.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import os
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import switchoff
from .check_result import CheckResult
from .inputs import FORMS, Arg, materialize, snapshot
from .isolation import run_forked, run_threaded
from .judging import (
    WrongType,
    call_student,
    close,
    coerce,
    diagnose,
    differs,
    dtype_hint,
    first_difference,
    reference_value,
    show,
    tolerances,
)
from .switchoff import HiddenFunctionError

__all__ = [
    "CheckResult",
    "Exercise",
    "HiddenFunctionError",
    "DEFAULT_TIMEOUT",
    "Outcome",
    "course_seed",
    "run_check",
    "verdict",
]

#: Seconds a student's function may take on one case (``POSENC_CHECK_TIMEOUT`` overrides it).
DEFAULT_TIMEOUT = 5.0
#: Cases with at most this many numbers in and out are run again (forms, reruns, shuffled order).
_SMALL = 20_000
#: Whether posenc is switched off while a student's function runs (tests of the references turn it off).
SWITCH_OFF = True

_WRITE_IT = "write the computation yourself (NumPy is fine); posenc's version is the answer key"


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
    :attr:`answers` are more model answers (source text defining the function, in other styles than
    the notebook's solution) for the mutation test, read from the answer key.
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
    _plans: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def answers(self) -> tuple[str, ...]:
        """More model answers in other styles (source text), from the answer key (:mod:`posenc.course.key`):
        not in the installed package; () without the key."""
        from .key import load_key

        return load_key().answers.get(self.name, ())

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
        answer = reference_value(exercise, case.kwargs)  # a case the reference refuses is a bug of the exercise
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
        before = reference_value(exercise, case.kwargs)
        for candidate in arg.variants(case.kwargs[name], rng):
            changed = {**case.kwargs, name: candidate}
            if exercise.domain is not None and not exercise.domain(changed):
                continue
            try:
                after = reference_value(exercise, changed)
            except Exception:
                continue
            if differs(before, after):
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


# --- one check -------------------------------------------------------------------------------------
def _passed_posenc(exercise: Exercise, function) -> CheckResult | None:
    code = getattr(function, "__code__", None)
    if code is None or not switchoff.is_posenc(code) or not SWITCH_OFF:
        return None
    if (code.co_filename, code.co_qualname) in switchoff.allowed_codes(exercise.allowed):
        return None
    return CheckResult(
        exercise.name,
        "failed",
        f"you passed posenc's own {switchoff.public_name(code)}: exercise {exercise.name!r} asks you to write it "
        "yourself",
        hint=_WRITE_IT,
    )


@dataclass
class Outcome:
    """What one call of the student's function came to, before it is judged.

    In the student's own check the call runs in this process (:func:`_judge`); in the sealed grader
    (:mod:`posenc.course.sealed`) it runs in another process and this is rebuilt from the values that
    process sent back (``error`` is then a stand-in of the built-in type the raised exception derives from).
    """

    value: object = None  # a Returned, when the function returned
    changed: list = field(default_factory=list)  # the arguments it changed in place
    error: BaseException | None = None
    violation: str | None = None  # the switched-off posenc function it called
    tampered: bool = False  # it turned off the tracing the switch-off relies on


def _judge(exercise: Exercise, function, case: Case, number: int, total: int, notify) -> CheckResult | None:
    """Run one case; None when it passed, else the result that says why not."""
    name = exercise.name
    given = {k: materialize(v, case.forms.get(k)) for k, v in case.kwargs.items()}
    before = {k: snapshot(v) for k, v in given.items()}
    where = f"check {number} of {total}, input {show(given)}"
    notify(("call", number, show(given)))
    outcome = Outcome()
    try:
        with switchoff.window(name, exercise.allowed, enabled=SWITCH_OFF) as window:
            try:
                outcome.value, outcome.changed = call_student(function, given, before)
            except BaseException as raised:  # judged below, once the window is closed
                if isinstance(raised, KeyboardInterrupt):
                    raise
                outcome.error = raised
    finally:
        notify(("returned", number))
    outcome.violation, outcome.tampered = window.violation, window.tampered
    return verdict(exercise, case, where, number - 1, outcome)


#: NumPy's default floating-point error handling: the checker's own computations run under it, whatever the
#: notebook set with ``np.seterr`` (a notebook's ``np.seterr(all="raise")`` must not break the check).
_NUMPY_DEFAULTS = {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}


def verdict(exercise: Exercise, case: Case, where: str, failed: int, outcome: Outcome) -> CheckResult | None:
    """Judge one call's :class:`Outcome` against the reference: None when right, else why not."""
    with np.errstate(**_NUMPY_DEFAULTS):
        return _verdict(exercise, case, where, failed, outcome)


def _verdict(exercise: Exercise, case: Case, where: str, failed: int, outcome: Outcome) -> CheckResult | None:
    name, error = exercise.name, outcome.error
    if outcome.violation is not None:
        caught = "" if isinstance(error, HiddenFunctionError) else " (your function caught the error; it still counts)"
        return CheckResult(
            name,
            "failed",
            f"{where}: your function called {outcome.violation}, which is switched off{caught}: "
            + switchoff.why(name, exercise.allowed),
            hint=_WRITE_IT,
            checked=failed,
        )
    if outcome.tampered:
        return CheckResult(
            name,
            "failed",
            f"{where}: the checker's tracing (sys.settrace) was turned off or its settings changed while your function "
            "ran",
            hint="leave sys.settrace and the checker's state alone; the checker uses them to switch posenc off. A "
            "function that recurses past Python's recursion limit also turns the tracing off (even when it catches "
            "the RecursionError): recurse less deeply or loop. The grader (python -m posenc.course grade) does not "
            "trace, so this check does not affect a grade",
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
    if outcome.changed:
        arg = outcome.changed[0]
        return CheckResult(
            name,
            "failed",
            f"{where}: your function changed its argument `{arg}` in place",
            hint=f"leave the inputs as they are: work on a copy ({arg} = {arg}.copy()) or build a new array "
            "(x * 2 instead of x *= 2; no assignment into x[...]; no out= pointing at an input)",
            checked=failed,
        )
    value = outcome.value
    expected = reference_value(exercise, case.kwargs)
    try:
        got = coerce(exercise, value, expected)
    except WrongType as wrong:
        hint = wrong.hint
        if hint is None and value.array is not None:
            hint = dtype_hint(value)
            for h, detected in exercise.detectors.items():
                with contextlib.suppress(Exception):
                    if hint is None and detected(case.kwargs, value.array, expected):
                        hint = h
        return CheckResult(name, "failed", f"{where}: {wrong.message}", hint=hint, checked=failed)
    rtol, atol = tolerances(exercise, value, case.kwargs, expected)
    if close(got, expected, rtol, atol):
        return None
    try:
        hint = diagnose(exercise, case, value, got, expected)
    except Exception:  # a diagnosis that fails must not hide the failing input
        hint = None
    detail = first_difference(got, expected, rtol, atol)
    return CheckResult(name, "failed", f"{where}: {detail}", hint=hint, checked=failed)


def run_cases(exercise: Exercise, function, cases: list[Case], notify: Callable) -> CheckResult:
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


def run_check(
    exercise: Exercise, function, *, seed: int | None = None, timeout: float | None = None, quiet: bool = False
) -> CheckResult:
    """Check ``function`` against ``exercise`` (see the module's docstring); never raises for the student's faults."""
    if function is None or not callable(function):
        return CheckResult(exercise.name, "not attempted", f"pass your function, {exercise.signature}, to the checker")
    with np.errstate(**_NUMPY_DEFAULTS):
        cases = exercise.plan(course_seed(seed))
    limit = _timeout(timeout)
    mode = os.environ.get("POSENC_CHECK_ISOLATION", "fork")
    if mode == "fork" and hasattr(os, "fork"):
        result, printed = run_forked(exercise, function, cases, limit, run_cases)
    else:
        result, printed = run_threaded(exercise, function, cases, limit, run_cases)
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
            if inspect.isfunction(obj) and switchoff.is_posenc(obj.__code__):
                public.setdefault(obj.__code__, f"posenc.{attr}" if module is posenc else f"{module.__name__}.{attr}")
    seen: dict[str, None] = {}

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in public:
            seen.setdefault(public[frame.f_code])

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        for case in exercise.cases:
            reference_value(exercise, {k: v for k, v in case.items() if not k.startswith("_")})
    finally:
        sys.setprofile(previous)
    return list(seen)
