"""The student's entry point: ``check(name, function)``."""

from __future__ import annotations

from .coursework import EXERCISES
from .engine import CheckResult, run_check

__all__ = ["check"]


def check(
    name: str, function, *, seed: int | None = None, timeout: float | None = None, quiet: bool = False
) -> CheckResult:
    """Check a student's ``function`` for exercise ``name`` (a key of ``posenc.course.coursework.EXERCISES``).

    Returns a :class:`CheckResult` whose ``status`` is "passed" when every case agrees with
    posenc. It never raises for anything the student's function does (an error, a wrong
    type, an endless loop, ``sys.exit()``); an unknown ``name`` is the caller's mistake and
    raises ``ValueError`` listing the known names. ``seed`` overrides the course seed
    (``POSENC_COURSE_SEED``) that draws the hidden cases; ``timeout`` the time limit per
    case in seconds (``POSENC_CHECK_TIMEOUT``, default 5).
    """
    if not isinstance(name, str) or name not in EXERCISES:
        raise ValueError(f"there is no exercise called {name!r}; the known exercises are: {', '.join(EXERCISES)}")
    return run_check(EXERCISES[name], function, seed=seed, timeout=timeout, quiet=quiet)
