"""The checker engine: run a student's function on public, property and hidden cases, safely.

Each implementation exercise is data (an :class:`Exercise`: the reference, the public
cases the text shows, a generator of hidden cases drawn from the course seed, the
return type the text asks for, and the recognised mistakes). :func:`check` calls the
student's function on every case and compares with the reference. It never raises and
never stops the caller:

* the function runs in a forked child process (on POSIX), with a time limit per case
  (:data:`DEFAULT_TIMEOUT` seconds, or ``POSENC_CHECK_TIMEOUT``); an endless loop, a
  ``sys.exit()`` or a crash of the interpreter ends only the child, and the result
  says what happened;
* while it runs, the posenc function it re-implements is switched off (a stub that
  raises with a message saying why), in every ``posenc`` module and in the function's
  own globals; the child restores nothing because the parent never changed anything,
  and the in-process fallback restores everything in a ``finally``;
* the inputs are compared after the call: a function that modifies one fails;
* the return value must be of the type the text asks for (an array of the stated
  shape, a number and not a string, a NumPy array and not a list where the text
  says so);
* a wrong answer gets the hint of the mistake it matches (a model of the wrong
  function, or a detector of a wrong type, shape or overflow); an unrecognised one gets
  the first failing input with the expected and the returned values.

The hidden cases come from the course seed: ``POSENC_COURSE_SEED`` in the environment,
or ``seed=`` (the grader's ``--course-seed``). Without one, a student still gets the
public cases, which cover every regime the text asks for.
"""

from __future__ import annotations

import contextlib
import copy
import html
import io
import math
import numbers
import os
import sys
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

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

_HEADS = {
    "passed": "Correct",
    "failed": "Not yet",
    "not attempted": "Not attempted yet",
    "error": "Your function raised an error",
    "timed out": "Time limit reached",
    "exited": "Your function tried to end the program",
}


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
class Exercise:
    """An implementation exercise: what to compare, on which inputs, and the mistakes to recognise.

    ``cases`` are the public cases (dicts of keyword arguments; ``_hint`` is shown when the
    function raises on that case, ``_precision`` marks a case that only float32 angles
    fail). ``hidden(rng)`` returns more cases drawn from the course seed. ``returns`` is
    "array" (NumPy array or torch tensor), "ndarray" (a NumPy array only) or "float".
    ``mistakes`` maps a hint to a model of the wrong function; ``detectors`` maps a hint to
    a predicate ``(kwargs, got, expected) -> bool`` on a wrong answer; ``error_hints`` maps
    a hint to a predicate ``(kwargs, exception) -> bool``; ``properties`` maps a true
    statement about right answers to a predicate ``(kwargs, got) -> bool`` that is true
    when the answer violates it. ``hides`` names the posenc functions switched off while
    the student's function runs.
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
    hides: tuple[str, ...] = ()
    label: str = ""

    @property
    def function_name(self) -> str:
        """The name the chapter gives the student's function (``my_sinusoidal``)."""
        return self.signature.split("(", 1)[0].strip()

    def all_cases(self, seed: int | None) -> list[dict]:
        """The public cases, then the hidden ones drawn from ``seed`` (none without a seed)."""
        cases = list(self.cases)
        if seed is not None and self.hidden is not None:
            rng = np.random.default_rng([int(seed), zlib.crc32(self.name.encode())])
            cases += self.hidden(rng)
        return cases


class HiddenFunctionError(RuntimeError):
    """Raised by a posenc function that is switched off while a student's function runs."""


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
        array = np.asarray(value.detach().cpu() if hasattr(value, "detach") else value)
        if array.ndim == 0:
            return repr(array.item())
        if array.size <= 12:
            return np.array2string(array, separator=", ", precision=6, threshold=12).replace("\n", "")
        return f"<array of shape {array.shape}, {array.dtype}>"
    return repr(value)


def show_value(kwargs: dict) -> str:
    return ", ".join(f"{key}={_show_value(value)}" for key, value in kwargs.items() if not key.startswith("_"))


def _as_array(value) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=float)


# --- return types ----------------------------------------------------------------------------------
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


def _coerce(exercise: Exercise, raw, expected: np.ndarray) -> np.ndarray:
    """The student's value as a float array, or :class:`_Wrong` saying why it is not acceptable."""
    kind = type(raw).__name__
    if exercise.returns == "float":
        if isinstance(raw, str | bytes):
            raise _Wrong(f"it returned the string {raw!r}, not a number", _text_hint(exercise))
        if isinstance(raw, bool | np.bool_) or raw is None:
            raise _Wrong(f"it returned {raw!r}, not a number", "return the value as a float")
        if isinstance(raw, numbers.Real):
            return np.asarray(float(raw))
        if (isinstance(raw, np.ndarray) or hasattr(raw, "detach")) and np.asarray(_as_array(raw)).size == 1:
            return _as_array(raw).reshape(())
        raise _Wrong(f"it returned {kind}, not a number", "return one float, e.g. float(value)")
    if raw is None:
        raise _Wrong("it returned None", "end your function with `return` and the result")
    if isinstance(raw, str | bytes):
        raise _Wrong(f"it returned the string {raw!r}, not an array of numbers", _text_hint(exercise))
    is_tensor = hasattr(raw, "detach") and hasattr(raw, "dtype")
    if not isinstance(raw, np.ndarray) and not is_tensor:
        try:
            probe = np.asarray(raw)
        except Exception:  # ragged, say
            probe = np.asarray([], dtype=object)
        if probe.dtype.kind in "USO" and probe.size and all(isinstance(v, str) for v in np.ravel(probe)):
            raise _Wrong(f"it returned a {kind} of strings, not an array of numbers", _text_hint(exercise))
        if isinstance(raw, list | tuple):
            raise _Wrong(
                f"it returned a {kind}; the exercise asks for a NumPy array",
                "wrap the result in np.array(...) (or build it with NumPy from the start)",
            )
        raise _Wrong(f"it returned {kind}, not an array of numbers", "return a NumPy array")
    if is_tensor and exercise.returns == "ndarray":
        raise _Wrong("it returned a torch tensor; the exercise asks for a NumPy array", "return tensor.numpy()")
    dtype = np.asarray(raw.detach().cpu()).dtype if is_tensor else raw.dtype
    if dtype.kind in "USO":
        raise _Wrong(f"it returned an array of {dtype} values, not numbers", _text_hint(exercise))
    if dtype.kind == "c":
        raise _Wrong(
            "it returned complex numbers; the answer is real",
            "the sum of e^{i k w} is complex: the dot product is its real part (.real), the sum of the cosines",
        )
    got = _as_array(raw)
    if got.shape != expected.shape:
        raise _Wrong(f"it returned shape {got.shape}, expected shape {expected.shape}")
    if exercise.binary and got.size and not np.isin(got, (0.0, 1.0)).all():
        raise _Wrong("it returned values other than 0 and 1", "each entry is one bit: 0 or 1")
    return got


def _tolerances(exercise: Exercise, raw, expected: np.ndarray) -> tuple[float, float]:
    dtype = getattr(raw, "dtype", None)
    if dtype is not None and "float32" in str(dtype):  # float32 output (angles in float64) is allowed
        scale = max(1.0, float(np.max(np.abs(expected), initial=0)))
        return max(exercise.rtol, 2e-6), max(exercise.atol, 2e-6 * scale)
    return exercise.rtol, exercise.atol


def _close(got, expected, rtol, atol) -> bool:
    return got.shape == expected.shape and bool(np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True))


def _first_difference(got: np.ndarray, expected: np.ndarray, rtol, atol) -> str:
    wrong = ~np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    index = tuple(int(i) for i in np.argwhere(wrong)[0])
    where = f"at index {index}" if index else "the value"
    count = f" ({int(wrong.sum())} of {wrong.size} entries differ)" if wrong.size > 1 else ""
    return f"{where}: expected {expected[index]:.10g}, got {got[index]:.10g}{count}"


# --- switching posenc functions off ----------------------------------------------------------------
def _targets(names: Sequence[str]) -> list[tuple[object, str]]:
    """(original object, attribute name) for each ``module:attr`` name that resolves."""
    found = []
    for name in names:
        module_name, _, attr = name.partition(":")
        module = sys.modules.get(module_name)
        if module is not None and hasattr(module, attr):
            found.append((getattr(module, attr), attr))
    return found


def _stub(attr: str, exercise: str):
    def switched_off(*args, **kwargs):
        raise HiddenFunctionError(
            f"posenc.{attr} is switched off while the checker runs your function: exercise "
            f"{exercise!r} asks you to write it yourself, so it cannot call posenc's own version"
        )

    switched_off.__name__ = attr
    return switched_off


@contextlib.contextmanager
def hidden_functions(names: Sequence[str], function, exercise: str):
    """Switch off the posenc functions ``names`` (``"module:attr"``) while the block runs; restore them after.

    They are replaced in every loaded ``posenc`` module that holds them and in the globals of
    ``function`` (a notebook's ``from posenc import sinusoidal``), and put back in a ``finally``.
    """
    saved: list[tuple[object, str, object]] = []  # (namespace, key, original); dicts and modules
    try:
        for original, attr in _targets(names):
            stub = _stub(attr, exercise)
            for module_name, module in list(sys.modules.items()):
                if module_name.split(".")[0] != "posenc" or module is None:
                    continue
                for key, value in list(vars(module).items()):
                    if value is original:
                        saved.append((module, key, original))
                        setattr(module, key, stub)
            namespace = getattr(function, "__globals__", None)
            if isinstance(namespace, dict):
                for key, value in list(namespace.items()):
                    if value is original:
                        saved.append((namespace, key, original))
                        namespace[key] = stub
        yield
    finally:
        for namespace, key, original in reversed(saved):
            if isinstance(namespace, dict):
                namespace[key] = original
            else:
                setattr(namespace, key, original)


# --- one check -------------------------------------------------------------------------------------
def _copy(value):
    if hasattr(value, "detach") and hasattr(value, "clone"):
        return value.detach().clone()
    if isinstance(value, np.ndarray):
        return value.copy()
    return copy.deepcopy(value)


def _same(before, after) -> bool:
    try:
        if hasattr(before, "detach"):
            before, after = before.detach().cpu().numpy(), after.detach().cpu().numpy()
        if isinstance(before, np.ndarray):
            return (
                isinstance(after, np.ndarray)
                and before.shape == after.shape
                and bool(np.array_equal(before, after, equal_nan=before.dtype.kind == "f"))
            )
        return bool(before == after)
    except Exception:
        return False


def _diagnose(exercise: Exercise, case: dict, kwargs: dict, got: np.ndarray, expected: np.ndarray) -> str | None:
    """The hint for a wrong answer of the right type and shape, or None when it is not recognised."""
    for hint, detected in exercise.detectors.items():
        with contextlib.suppress(Exception):
            if detected(kwargs, got, expected):
                return hint
    for hint, mistake in exercise.mistakes.items():
        try:
            wrong = _as_array(mistake(**{k: _copy(v) for k, v in kwargs.items()}))
        except Exception:
            continue
        # looser than grading: a mistake written in float32 still matches its model
        if wrong.shape == got.shape and np.allclose(got, wrong, rtol=1e-5, atol=1e-6, equal_nan=True):
            if not _close(wrong, expected, exercise.rtol, exercise.atol):  # the model is wrong here
                return hint
    for statement, violated in exercise.properties.items():
        with contextlib.suppress(Exception):
            if violated(kwargs, got):
                return statement
    if case.get("_precision") and np.all(np.isfinite(got)) and np.max(np.abs(got - expected)) < 0.2:
        return case["_precision"]
    return None


def _run_cases(exercise: Exercise, function, cases: list[dict], notify: Callable) -> CheckResult:
    """Call ``function`` on every case and judge it (runs in the child, or in-process)."""
    name, total = exercise.name, len(cases)
    if exercise.hides and any(function is original for original, _ in _targets(exercise.hides)):
        return CheckResult(
            name,
            "failed",
            f"you passed posenc's own {function.__name__}: exercise {name!r} asks you to write it yourself",
            hint="write the computation yourself (NumPy is fine); posenc's version is the answer key",
        )
    for number, case in enumerate(cases, start=1):
        kwargs = {k: v for k, v in case.items() if not k.startswith("_")}
        given = {k: _copy(v) for k, v in kwargs.items()}
        where = f"check {number} of {total}, input {show_value(kwargs)}"
        notify(("call", number, show_value(kwargs)))
        try:
            with hidden_functions(exercise.hides, function, name):
                raw = function(**given)
        except NotImplementedError:
            message = f"replace the `raise NotImplementedError` in {exercise.signature}"
            return CheckResult(name, "not attempted", message)
        except HiddenFunctionError as error:
            return CheckResult(
                name,
                "failed",
                f"{where}: your function called a posenc function: {error}",
                hint="write the computation yourself (NumPy is fine); posenc's version is the answer key",
                checked=number - 1,
            )
        except SystemExit as error:
            return CheckResult(
                name,
                "exited",
                f"{where}: your function called sys.exit() or exit() (SystemExit: {error.code!r}); the check stopped "
                "there and nothing else was affected",
                hint="return the result instead of ending the program",
                checked=number - 1,
            )
        except Exception as error:  # the student's bug, reported, never re-raised
            hint = next(
                (h for h, matches in exercise.error_hints.items() if _matches(matches, kwargs, error)),
                case.get("_hint") or "run it on that input in a cell of its own and read the traceback",
            )
            return CheckResult(
                name, "error", f"{where}: it raised {type(error).__name__}: {error}", hint=hint, checked=number - 1
            )
        finally:
            notify(("returned", number))
        changed = [k for k in kwargs if not _same(kwargs[k], given[k])]
        if changed:
            arg = changed[0]
            return CheckResult(
                name,
                "failed",
                f"{where}: your function changed its argument `{arg}` in place",
                hint=f"leave the inputs as they are: work on a copy ({arg} = {arg}.copy()) or build a new array "
                "(x * 2 instead of x *= 2; no assignment into x[...])",
                checked=number - 1,
            )
        expected = _as_array(exercise.reference(**{k: _copy(v) for k, v in kwargs.items()}))
        try:
            got = _coerce(exercise, raw, expected)
        except _Wrong as wrong:
            hint = wrong.hint
            if hint is None:
                for h, detected in exercise.detectors.items():
                    with contextlib.suppress(Exception):
                        if detected(kwargs, _as_array(raw), expected):
                            hint = h
                            break
            return CheckResult(name, "failed", f"{where}: {wrong.message}", hint=hint, checked=number - 1)
        rtol, atol = _tolerances(exercise, raw, expected)
        if _close(got, expected, rtol, atol):
            continue
        hint = _diagnose(exercise, case, kwargs, got, expected)
        detail = _first_difference(got, expected, rtol, atol)
        return CheckResult(name, "failed", f"{where}: {detail}", hint=hint, checked=number - 1)
    return CheckResult(name, "passed", f"all {total} checks agree with posenc", checked=total)


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
    cases = exercise.all_cases(course_seed(seed))
    limit = _timeout(timeout)
    mode = os.environ.get("POSENC_CHECK_ISOLATION", "fork")
    if mode == "fork" and hasattr(os, "fork"):
        result, printed = _run_forked(exercise, function, cases, limit)
    else:
        result, printed = _run_threaded(exercise, function, cases, limit)
    if printed and not quiet:
        sys.stdout.write(printed)
    return result
