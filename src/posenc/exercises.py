"""Auto-checkers for the book's implementation exercises (kept for ``from posenc import exercises``).

The machinery lives in :mod:`posenc.course`; this module re-exports its entry points::

    from posenc import exercises
    exercises.check("sinusoidal", my_sinusoidal)      # shows the feedback

``exercises.check(...).passed`` is a bool (and the result is truthy only when it passed).
"""

from .course import EXERCISES as _EXERCISES
from .course import CheckResult, Exercise, check

#: Exercise name -> its :class:`Exercise` (reference, public and hidden cases, recognised
#: mistakes); defined one module per chapter in ``posenc.course.exercises``.
EXERCISES = _EXERCISES

__all__ = ["CheckResult", "Exercise", "EXERCISES", "check"]
