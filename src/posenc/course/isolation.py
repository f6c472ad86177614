"""Running a check isolated from the caller: a forked child with a time limit per case, or a thread.

``run_cases(exercise, function, cases, notify)`` runs in the child; ``notify`` tells the parent
when the student's function starts and returns on each case, so that only the student's time
counts against the limit. An endless loop, ``sys.exit()``, ``os._exit()`` or a crash of the
interpreter ends only the child, and the result says what happened.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import sys
import threading
import time

from . import switchoff
from .check_result import CheckResult

__all__ = ["run_forked", "run_threaded"]

#: Seconds the checker's own work on one case (reference, diagnosis) may take in the child.
_OWN_TIMEOUT = 120.0
_MAX_OUTPUT = 20_000


def _timed_out(exercise, number: int, total: int, shown: str, limit: float, left_running: bool = False) -> CheckResult:
    # a forked check kills its process; a thread cannot be stopped, and the reader must know it still runs
    stopped = (
        "so the check stopped waiting for it; it may still be running in the background (without fork the "
        "check cannot stop it): restart the kernel to stop it"
        if left_running
        else "so the check stopped it"
    )
    return CheckResult(
        exercise.name,
        "timed out",
        f"check {number} of {total}, input {shown}: your function did not return within {limit:g} seconds, {stopped}",
        hint="look for a loop that never ends (a while whose condition never changes), or a loop over far "
        "more values than needed; set POSENC_CHECK_TIMEOUT to allow more time",
        checked=number - 1,
    )


def ended_without_answer(exercise, number: int, total: int, shown: str) -> CheckResult:
    """The process running the student's function ended before it answered case ``number``."""
    return CheckResult(
        exercise.name,
        "exited",
        f"check {number} of {total}, input {shown}: the process running your function ended without an answer "
        "(os._exit, a crash of the interpreter, or it was killed)",
        hint="return the result; do not end the process",
        checked=max(number - 1, 0),
    )


def run_forked(exercise, function, cases, limit, run_cases) -> tuple[CheckResult, str]:
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
            result = run_cases(exercise, function, cases, writer.send)
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
                return ended_without_answer(exercise, number, len(cases), shown), ""
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


class _GivenUp(BaseException):
    """Ends a check's thread at its next step once the checker has stopped waiting for it."""


def run_threaded(exercise, function, cases, limit, run_cases) -> tuple[CheckResult, str]:
    """Fallback without fork: a daemon thread. A function that never returns is left running; its
    switch-off window is given up (:func:`~posenc.course.switchoff.abandon`), so the next check starts
    clean, and its thread ends at its next step if the function ever returns. The result makes the
    round trip through pickle that the forked check's pipe makes."""
    progress = {"number": 0, "shown": "", "deadline": None}
    outcome: list = []
    given_up = threading.Event()

    def notify(message):
        if given_up.is_set():
            raise _GivenUp
        if message[0] == "call":
            progress.update(number=message[1], shown=message[2], deadline=time.monotonic() + limit)
        elif message[0] == "returned":
            progress["deadline"] = None

    def target():
        try:
            outcome.append(run_cases(exercise, function, cases, notify))
        except BaseException as error:
            outcome.append(CheckResult(exercise.name, "error", f"the checker failed: {error}"))

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.05)
        deadline = progress["deadline"]
        if deadline is not None and time.monotonic() > deadline and worker.is_alive():
            given_up.set()
            switchoff.abandon(worker)
            shown = progress["shown"]
            return _timed_out(exercise, progress["number"], len(cases), shown, limit, left_running=True), ""
    if not outcome:  # the thread ended before it could record anything
        return CheckResult(exercise.name, "error", "the checker failed: its thread ended without a result"), ""
    try:  # the forked check sends its result through a pipe: a result that cannot be pickled fails alike here
        return pickle.loads(pickle.dumps(outcome[0])), ""
    except Exception as error:
        return CheckResult(exercise.name, "error", f"the checker failed: {type(error).__name__}: {error}"), ""
