"""posenc switched off while a student's function runs, wherever its functions are reached from.

While the window is open (:func:`window`), a trace function (``sys.settrace``, and
``threading.settrace`` for threads started inside) sees every Python function that starts.
One whose code comes from a file of the posenc package fails with
:class:`HiddenFunctionError`, unless it is an allowed helper (the exercise's ``allowed``),
runs inside one, or is module code being imported. The test is by file, not by object, so
it holds however the function was reached: a name imported earlier, a ``functools.partial``,
a default argument, a closure, a class attribute, a dict of helpers, ``getattr`` or an import
at call time, ``importlib.reload`` or a fresh load of the module file (new function objects
with the same file), a copy of a code object (``types.FunctionType(f.__code__, ...)``), a
sibling function that computes the same thing, the exercise's own reference and mistake
models (they live in ``posenc/course/coursework``), and posenc's classes in ``posenc.nn``.

The first call is remembered: a function that catches the error and goes on still fails the
check, and one that switches the trace off (``sys.settrace(None)``) is caught when the window
closes. The state lives on the ``sys`` module (:data:`STATE`), so reloading this module does
not reset it. Cost: about 2.5x on pure-Python loops while the window is open (the
interpreter's tracing mode); nothing outside it.

What it cannot see: posenc's source pasted (or compiled) under another file name, and
subprocesses. The checker's own helpers that run inside the window (reading the returned
value, comparing the inputs) are registered with :func:`window_helper`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import weakref
from dataclasses import dataclass, field

__all__ = [
    "HiddenFunctionError",
    "STATE",
    "abandon",
    "allowed_codes",
    "is_posenc",
    "public_name",
    "why",
    "window",
    "window_helper",
]

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../posenc
_PREFIX = _ROOT + os.sep
_OWN_FILE = os.path.abspath(__file__)  # the window's own code runs inside it


class HiddenFunctionError(RuntimeError):
    """Raised by a posenc function called while a student's function runs under the checker."""


@dataclass
class _State:
    """Kept on ``sys`` (not in this module) so that a reload of this module cannot reset it."""

    active: bool = False
    exercise: str = ""
    allowed: frozenset = frozenset()  # (file, qualname) of the allowed helpers
    allowed_names: tuple = ()
    violation: str | None = None
    helpers: set = field(default_factory=set)  # code objects of the checker's helpers (window_helper)
    owner: object = None  # the open window's token; a window given up (:func:`abandon`) no longer owns the state
    helpers_at_open: frozenset = frozenset()  # restored when a window closes with them changed, or is given up
    given_up: weakref.WeakSet = field(default_factory=weakref.WeakSet)  # threads whose window was given up
    lock: object = field(default_factory=threading.Lock)  # opening, closing and giving up exclude each other


STATE: _State = sys.__dict__.setdefault("_posenc_switch_off_state", _State())


def _module_name(filename: str) -> str:
    relative = os.path.relpath(filename, _ROOT)
    parts = relative[:-3].split(os.sep) if relative.endswith(".py") else relative.split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["posenc", *parts])


def public_name(code) -> str:
    """``posenc.rope.apply_rope`` for the code object of :func:`posenc.apply_rope`."""
    return f"{_module_name(code.co_filename)}.{code.co_qualname}"


def window_helper(function):
    """Mark one of the checker's own functions (and the comprehensions inside it) as allowed in the window."""
    codes = [function.__code__]
    while codes:
        code = codes.pop()
        STATE.helpers.add(code)
        codes += [c for c in code.co_consts if isinstance(c, type(code))]
    return function


def is_posenc(code) -> bool:
    return code.co_filename.startswith(_PREFIX) and code.co_filename != _OWN_FILE


def _permitted(code, frame) -> bool:
    if code in STATE.helpers or (code.co_filename, code.co_qualname) in STATE.allowed:
        return True
    if code.co_name == "<module>":  # a module being imported (its top-level code defines, not computes)
        return True
    if code.co_name in ("__getattr__", "__dir__") and code.co_qualname == code.co_name:
        return True  # a package's lazy loader (PEP 562; torch.compile reads modules this way): it computes nothing
    caller = frame.f_back
    while caller is not None:  # inside an allowed helper, or inside an import of a posenc module
        outer = caller.f_code
        if outer in STATE.helpers:  # the checker's frame that called the student's code: look no further
            return False
        if is_posenc(outer) and (
            (outer.co_filename, outer.co_qualname) in STATE.allowed or outer.co_name == "<module>"
        ):
            return True
        caller = caller.f_back
    return False


def why(exercise: str, allowed=()) -> str:
    """Why posenc is switched off, for the messages."""
    names = ", ".join(f"`{n}`" for n in allowed)
    return f"exercise {exercise!r} asks you to write the computation yourself, so your function may not call posenc" + (
        f" (apart from {names}, which the task allows)" if names else ""
    )


def _message(name: str) -> str:
    return f"{name} is switched off while the checker runs your function: {why(STATE.exercise, STATE.allowed_names)}"


def _tracer_of(token):
    """The trace function of one window: it judges only while that window owns the state, so a function
    left running by a check that gave up (:func:`abandon`) cannot mark a later check."""

    def _tracer(frame, event, arg):
        if event != "call" or STATE.owner is not token:  # (a window whose owner changed is reported on close)
            return None
        code = frame.f_code
        if not is_posenc(code) or _permitted(code, frame):
            return None
        name = public_name(code)
        if STATE.violation is None:
            STATE.violation = name
        raise HiddenFunctionError(_message(name))

    return _tracer


def allowed_codes(names) -> frozenset:
    """(file, qualname) of each allowed helper (``"posenc.rope_inv_freq"``) and of its methods."""
    import importlib

    found = set()
    for dotted in names:
        module_name, _, attr = dotted.rpartition(".")
        obj = getattr(importlib.import_module(module_name), attr)
        functions = [obj]
        if isinstance(obj, type):
            functions = [v for v in vars(obj).values() if hasattr(v, "__code__")]
        for function in functions:
            code = function.__code__
            found.add((code.co_filename, code.co_qualname))
    return frozenset(found)


@dataclass
class Window:
    """What happened while the window was open: ``violation`` names the first posenc function called."""

    violation: str | None = None
    tampered: bool = False


@contextlib.contextmanager
def window(exercise: str, allowed=(), enabled: bool = True):
    """Run the block with posenc switched off (except ``allowed``); yields a :class:`Window` filled on exit."""
    outcome = Window()
    if not enabled:
        yield outcome
        return
    me = threading.current_thread()
    token = object()
    tracer = _tracer_of(token)
    names = allowed_codes(allowed)
    with STATE.lock:
        given_up = me in STATE.given_up  # the checker stopped waiting for this thread: judge nothing more in it
        if not given_up:
            STATE.allowed, STATE.allowed_names = names, tuple(allowed)
            STATE.exercise, STATE.violation, STATE.active, STATE.owner = exercise, None, True, token
            STATE.helpers_at_open = frozenset(STATE.helpers)
            settings = (STATE.allowed, STATE.helpers_at_open)
            threading.settrace(tracer)
    if given_up:
        outcome.tampered = True  # (the checker no longer waits for this thread)
        yield outcome
        return
    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        yield outcome
    finally:
        still = sys.gettrace()
        sys.settrace(previous)
        with STATE.lock:
            if me in STATE.given_up and STATE.owner is not token:  # given up (abandon clears the owner):
                outcome.tampered = True  # a later check may own the state by now, so leave it alone
            else:
                outcome.violation = STATE.violation
                # the tracer unsets itself when it raises; otherwise it must still be there, with its
                # settings, and own the state
                changed = settings != (STATE.allowed, frozenset(STATE.helpers))
                replaced = STATE.owner is not token
                outcome.tampered = (STATE.violation is None and still is not tracer) or changed or replaced
                _close_state(settings[1])


def _close_state(helpers: frozenset) -> None:
    """No window open: new threads untraced, the checker's helpers as ``helpers`` (a student's function
    may have added to them)."""
    threading.settrace(None)
    if frozenset(STATE.helpers) != helpers:
        STATE.helpers = set(helpers)
    STATE.active, STATE.owner, STATE.violation = False, None, None


def _new_lock() -> None:
    STATE.lock = threading.Lock()


if hasattr(os, "register_at_fork"):  # a thread left running may hold the lock when a check forks
    os.register_at_fork(after_in_child=_new_lock)


def abandon(thread: threading.Thread) -> None:
    """Give up the window open in ``thread``, whose function is still running and cannot be stopped (the
    checker's fallback without ``fork``, after a time-out): new threads start untraced, the state and the
    checker's helpers are as before the window, for the next check, and the window neither judges nor
    touches the state again, nor does any window that ``thread`` opens later.

    What stays out of reach: a thread that the function left running starts while a later check runs is
    traced by that check's window, which judges it as part of that check; and a function that rewrites
    the state's own record of the helpers (``helpers_at_open``) before it times out.
    """
    if not isinstance(thread, threading.Thread):
        raise TypeError(f"thread must be the threading.Thread whose window to give up, got {type(thread).__name__}")
    locked = STATE.lock.acquire(timeout=1.0)  # a student's function could hold it and never let go
    try:
        STATE.given_up.add(thread)
        _close_state(STATE.helpers_at_open)
    finally:
        if locked:
            STATE.lock.release()
