"""The sealed grader: a student's function judged from a process that student code cannot reach.

The grade must not depend on anything the student controls: their notebook's kernel, the
``posenc`` they installed, their machine. So the grader never runs the submitted notebook and
never calls a checker inside a student's kernel. For each implementation exercise:

1. it reads the function and what it needs out of the notebook's source
   (:func:`posenc.course.extract.extract_function`);
2. it starts a fresh Python process (:mod:`posenc.course.sandbox_child`) that holds no reference,
   no answer key and no course seed, with an audit hook installed before any student code, and
   sends it that code;
3. for each case of the exercise's plan (the public, boundary and hidden cases, their forms and
   reruns, as the student's self-check runs them) it sends the inputs as plain data
   (:mod:`posenc.course.wire`), waits at most the time limit for the answer, and judges the values
   that come back here, where the reference, the comparisons and the hints were loaded before any
   student code ran (:func:`posenc.course.engine.verdict`). A helper the task allows
   (``posenc.rope_inv_freq``, say) is computed here on request, on plain data.

Whatever the student's code does (replace ``check``, patch NumPy's comparisons, trace, re-import,
start a process, end the process, write a results file) happens in the other process and
changes at most the values it sends. The audit hook refuses what could reach an answer there and
records it: the result names it (:attr:`Sealed.refused`), and such an exercise gets no points.

Honest answers get the same verdicts as the self-check (:func:`posenc.course.check`): the same
plan, the same comparisons and hints.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import wire
from .engine import _NUMPY_DEFAULTS, Case, CheckResult, Exercise, Outcome, _timeout, course_seed, verdict
from .extract import Extracted, extract_function
from .inputs import materialize, snapshot, unchanged
from .isolation import _timed_out, ended_without_answer
from .judging import read_returned, show
from .switchoff import HiddenFunctionError

__all__ = ["SETUP_TIMEOUT", "Sealed", "forbidden_roots", "sealed_check"]

#: Seconds the notebook's kept definitions may take to run before the first case.
SETUP_TIMEOUT = 60.0
_CHILD = Path(__file__).with_name("sandbox_child.py")
_WIRE = Path(__file__).with_name("wire.py")
#: Seconds of the grader's own work per case (sending, reading) on top of the student's limit.
_SLACK = 10.0
_ENVIRONMENT = ("PATH", "LANG", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@dataclass
class Sealed:
    """One exercise graded sealed: the checker's result, what the hook refused, problems while defining."""

    result: CheckResult
    refused: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _posenc_dir() -> Path:
    import posenc

    return Path(posenc.__file__).resolve().parent


def forbidden_roots(*more: Path | str | None) -> list[str]:
    """Folders the student's process may not read: posenc's package (and the book's repository
    around an editable install, whose chapters hold the solutions), plus ``more``."""
    package = _posenc_dir()
    roots = [package]
    if package.parent.name == "src" and (package.parent.parent / "chapters").is_dir():
        roots.append(package.parent.parent)
    roots += [Path(p).resolve() for p in more if p]
    return sorted({str(r) for r in roots})


def _posenc_modules() -> list[str]:
    import pkgutil

    package = _posenc_dir()
    names = ["posenc"]
    for info in pkgutil.walk_packages([str(package)], prefix="posenc."):
        names.append(info.name)
    return names


def _helpers(exercise: Exercise) -> list[list[str]]:
    import posenc

    found = []
    for public in exercise.allowed:
        function = getattr(posenc, public.split(".", 1)[1])
        found.append([public, function.__module__, function.__name__])
    return found


def _call_helper(exercise: Exercise, name: str, value) -> object:
    import posenc

    if name not in exercise.allowed:
        raise PermissionError(f"{name} is not a helper this task allows")
    args, kwargs = value
    if not isinstance(args, list) or not isinstance(kwargs, dict) or not all(isinstance(k, str) for k in kwargs):
        raise TypeError("a helper's arguments must be plain values")
    return getattr(posenc, name.split(".", 1)[1])(*args, **kwargs)


class _Child:
    """The student's process: started with its setup, asked one case at a time, always killed at the end."""

    def __init__(self, extracted: Extracted, exercise: Exercise, forbidden: list[str], preload: list[str]):
        self.folder = tempfile.TemporaryDirectory(prefix="posenc-sealed-")
        to_child, self.write_fd = os.pipe()
        self.read_fd, from_child = os.pipe()
        self.flag_read, flag_write = os.pipe()
        environment = {k: os.environ[k] for k in _ENVIRONMENT if k in os.environ}
        environment.update(HOME=self.folder.name, OMP_NUM_THREADS="1", LC_ALL="C.UTF-8")
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", str(_CHILD), str(to_child), str(from_child), str(flag_write)],
                pass_fds=(to_child, from_child, flag_write),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=self.folder.name,
                env=environment,
                start_new_session=True,
            )
        finally:
            for fd in (to_child, from_child, flag_write):
                os.close(fd)
        os.set_blocking(self.write_fd, False)
        os.set_blocking(self.flag_read, False)
        paths = [p for p in sys.path if p and os.path.isdir(p) and Path(p).resolve() != _posenc_dir().parent]
        setup = {
            "sys_path": paths,
            "wire": str(_WIRE),
            "source": extracted.source,
            "function": extracted.function,
            "helpers": _helpers(exercise),
            "forbidden": forbidden,
            "cwd": str(Path(self.folder.name).resolve()),
            "preload": preload,
            "posenc_modules": _posenc_modules(),
            "posenc_dir": str(_posenc_dir()),
        }
        data = json.dumps(setup).encode()
        self._write_raw(struct.pack("<Q", len(data)) + data, time.monotonic() + SETUP_TIMEOUT)

    def _write_raw(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            wire._wait(self.write_fd, deadline, write=True)
            with contextlib.suppress(BlockingIOError):
                view = view[os.write(self.write_fd, view) :]

    def send(self, message: dict, value=None, deadline: float | None = None) -> None:
        wire.write_message(self.write_fd, message, value, deadline=deadline)

    def receive(self, deadline: float):
        return wire.read_message(self.read_fd, deadline=deadline)

    def refused(self) -> list[str]:
        data = b""
        with contextlib.suppress(BlockingIOError, OSError):
            while chunk := os.read(self.flag_read, 65536):
                data += chunk
                if len(data) > 1 << 20:
                    break
        lines = data.decode("utf-8", "replace").splitlines()
        return list(dict.fromkeys(line.strip()[:200] for line in lines if line.strip()))[:20]

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, 9)
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        self.process.wait()
        for fd in (self.write_fd, self.read_fd, self.flag_read):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.folder.cleanup()


def _stand_in(found: dict) -> BaseException:
    """An exception of the built-in type the student's derives from, under the student's type's name."""
    import builtins

    base = next(
        (getattr(builtins, n) for n in found.get("bases", []) if isinstance(getattr(builtins, n, None), type)
         and issubclass(getattr(builtins, n), BaseException) and n not in ("BaseException", "object")),
        Exception,
    )
    if base is RuntimeError and found.get("name") == "HiddenFunctionError":
        base = HiddenFunctionError
    name = str(found.get("name", "Exception"))[:80]
    text = str(found.get("text", ""))
    if base is SystemExit:
        return SystemExit(found.get("code"))
    cls = base if name == base.__name__ else type(name if name.isidentifier() else base.__name__, (base,), {})
    try:
        error = cls(text)
    except Exception:  # a built-in whose constructor wants other arguments (UnicodeError's kin)
        error = type(cls.__name__, (Exception,), {})(text)
    return error


def _outcome(message: dict, value, given: dict, before: dict) -> Outcome:
    returned, after = (value if isinstance(value, list) and len(value) == 2 else (None, None))
    outcome = Outcome(violation=message.get("violation") if isinstance(message.get("violation"), str) else None)
    if message.get("op") == "raised":
        outcome.error = _stand_in(message.get("error") or {})
        return outcome
    outcome.value = read_returned(returned)
    after = after if isinstance(after, dict) else {}
    outcome.changed = [k for k in given if k not in after or not unchanged(before[k], after[k])]
    return outcome


def _run_cases(child: _Child, exercise: Exercise, cases: list[Case], limit: float) -> CheckResult:
    total = len(cases)
    for number, case in enumerate(cases, start=1):
        given = {k: materialize(v, case.forms.get(k)) for k, v in case.kwargs.items()}
        before = {k: snapshot(v) for k, v in given.items()}
        shown = show(given)
        deadline = time.monotonic() + limit + _SLACK
        try:
            child.send({"op": "call", "id": number}, given, deadline=deadline)
            deadline = time.monotonic() + limit
            while True:
                message, value = child.receive(deadline)
                if message.get("op") == "helper":
                    try:
                        answer = _call_helper(exercise, str(message.get("name")), value)
                        child.send({"op": "helper-result"}, answer, deadline=deadline + _SLACK)
                    except Exception as error:
                        child.send({"op": "helper-error", "error": f"{type(error).__name__}: {error}"},
                                   deadline=deadline + _SLACK)
                    continue
                if message.get("op") == "unreadable" or (
                    message.get("id") == number and message.get("op") in ("returned", "raised")
                ):
                    break
        except TimeoutError:
            return _timed_out(exercise, number, total, shown, limit)
        except (EOFError, OSError):
            return ended_without_answer(exercise, number, total, shown)
        except wire.WireError as error:
            return CheckResult(exercise.name, "error",
                               f"check {number} of {total}, input {shown}: the grader could not read the answer: "
                               f"{error}", checked=number - 1)
        if message["op"] == "unreadable":
            return CheckResult(exercise.name, "failed",
                               f"check {number} of {total}, input {shown}: the checker could not read what your "
                               f"function returned ({message.get('error', '')})",
                               hint="return a NumPy array (or a number) of plain floats", checked=number - 1)
        outcome = _outcome(message, value, given, before)
        where = f"check {number} of {total}, input {shown}"
        result = verdict(exercise, case, where, number - 1, outcome)
        if result is not None:
            return result
    return CheckResult(exercise.name, "passed", f"all {total} checks agree with posenc", checked=total)


def _preload(extracted: Extracted, cases: list[Case]) -> list[str]:
    """What the student's process imports before any student code runs: NumPy and the standard modules a
    numeric function uses, torch where the code or a case's form (a tensor) needs it, and what the kept
    code imports. (Once the audit hook is in, a module that is not loaded yet cannot be: loading one runs
    code built at run time, which the hook refuses.)"""
    modules = ["numpy", "numpy.linalg", "numpy.fft", "numpy.random", "numpy.char", "numpy.strings", "numpy.ma",
               "numpy.polynomial", "numpy.lib.stride_tricks", "math", "cmath", "functools", "itertools",
               "collections", "dataclasses", "fractions", "decimal", "numbers", "operator", "typing", "statistics",
               "bisect", "heapq", "array", "copy", "string", "re"]
    tensors = any(form == "tensor" for case in cases for form in case.forms.values())
    if "torch" in extracted.source or tensors:
        modules += ["torch", "torch.nn", "torch.nn.functional", "torch.fft", "torch.linalg"]
    return list(dict.fromkeys(modules + extracted.modules))


def sealed_check(
    exercise: Exercise,
    notebook=None,
    *,
    extracted: Extracted | None = None,
    seed: int | None = None,
    timeout: float | None = None,
    forbidden: list[str] | None = None,
) -> Sealed:
    """Grade ``exercise`` for the function a ``notebook`` (an nbformat node) defines, sealed (see the
    module). ``seed`` draws the hidden cases, ``timeout`` is the limit per case in seconds."""
    if not isinstance(exercise, Exercise):
        raise TypeError(f"exercise must be a posenc.course.engine.Exercise, got {type(exercise).__name__}")
    if extracted is None:
        if notebook is None or not hasattr(notebook, "get") or not isinstance(notebook.get("cells"), list):
            raise TypeError(
                f"notebook must be an nbformat notebook (or pass extracted=), got {type(notebook).__name__}"
            )
        extracted = extract_function(notebook, exercise.function_name)
    if not extracted.defined:
        result = CheckResult(exercise.name, "missing", f"{exercise.function_name} is not defined")
        return Sealed(result)
    with np.errstate(**_NUMPY_DEFAULTS):
        cases = exercise.plan(course_seed(seed))
    limit = _timeout(timeout)
    forbidden = forbidden if forbidden is not None else forbidden_roots()
    child = _Child(extracted, exercise, forbidden, _preload(extracted, cases))
    problems: list[str] = []
    try:
        try:
            ready, _ = child.receive(time.monotonic() + SETUP_TIMEOUT)
        except TimeoutError:
            ready = {"op": "late"}
        except (EOFError, OSError, wire.WireError):
            ready = {"op": "ended"}
        if ready.get("op") != "ready":
            words = {"late": f"did not finish within {SETUP_TIMEOUT:g} seconds", "ended": "ended the process"}
            result = CheckResult(
                exercise.name, "error",
                f"running the notebook's definitions that {exercise.function_name} needs "
                f"{words.get(ready.get('op'), 'failed')}",
                hint="keep long computations out of the cells that define your function and its constants",
            )
        else:
            for problem in ready.get("problems") or []:
                if isinstance(problem, dict):
                    problems.append(f"cell {problem.get('cell', '?')}: {problem.get('name')}: "
                                    f"{str(problem.get('text', ''))[:200]}")
            if not ready.get("defined"):
                result = CheckResult(exercise.name, "missing",
                                     f"{exercise.function_name} is not defined (its definition raised an error)")
            elif isinstance(ready.get("own"), str):
                result = CheckResult(
                    exercise.name, "failed",
                    f"you passed posenc's own {ready['own']}: exercise {exercise.name!r} asks you to write it "
                    "yourself",
                    hint="write the computation yourself (NumPy is fine); posenc's version is the answer key",
                )
            else:
                result = _run_cases(child, exercise, cases, limit)
                with contextlib.suppress(Exception):
                    child.send({"op": "stop"}, deadline=time.monotonic() + 1)
    finally:
        refused = child.refused()
        child.close()
    return Sealed(result, refused, problems)
