"""The student's entry point: ``posenc.exercises.check(name, function)``.

This is a real module, not an alias of :mod:`posenc.course`, for two reasons. DESIGN.md's
public API contract names ``posenc.exercises.check`` as the student entry point (students'
notebooks and the nbgrader export call it by that name, and every chapter imports
``from posenc import exercises``); and it is the part of the course machinery that a
student is meant to see, so that the machinery behind it (:mod:`posenc.course`: checker
engine, grading, editions) can change without breaking a student's notebook::

    from posenc import exercises
    exercises.check("sinusoidal", my_sinusoidal)      # shows the feedback

``exercises.check(...).passed`` is a bool (and the result is truthy only when it passed).
"""

from .course import EXERCISES as _EXERCISES
from .course import CheckResult, Exercise, check

#: Exercise name -> its :class:`Exercise`; defined one module per chapter in ``posenc.course.exercises``.
EXERCISES = _EXERCISES

__all__ = ["CheckResult", "Exercise", "EXERCISES", "check"]
