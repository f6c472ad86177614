"""The student's entry point: ``posenc.exercises.check(name, function)``.

This is a real module, not an alias of :mod:`posenc.course`, for two reasons. It is part of the
public API (the reference page ``api.md``): students' notebooks and the nbgrader and Otter exports call
``posenc.exercises.check`` by that name, and every chapter imports ``from posenc import exercises``,
so the name stays while the machinery behind it (:mod:`posenc.course`) changes. And it is the part
of the course machinery that a student is meant to see, so it shows only what a student may see:
the checker, its result, and each exercise's task as stated (:class:`TaskStatement`: name,
signature, the spec's sentence, the public inputs), never the reference, the mistakes or the
hidden cases::

    from posenc import exercises
    exercises.check("sinusoidal", my_sinusoidal)      # shows the feedback

``exercises.check(...).passed`` is a bool (and the result is truthy only when it passed).
"""

from __future__ import annotations

from dataclasses import dataclass

from .course import EXERCISES as _COURSE_EXERCISES
from .course import CheckResult, check

__all__ = ["CheckResult", "TASK_STATEMENTS", "TaskStatement", "check"]


@dataclass(frozen=True)
class TaskStatement:
    """An implementation exercise as its task states it: no reference, no hidden cases, no mistakes.

    The full exercise (reference, cases, mistakes) is a ``posenc.course.engine.Exercise``; a
    student sees only this."""

    name: str
    signature: str
    label: str
    checked_with: str  # what the checker passes, expects back, and allows (the task text's "Checked with")
    cases: tuple  # the public inputs, as dicts of keyword arguments

    @property
    def function_name(self) -> str:
        """The name the chapter gives the student's function (``my_sinusoidal``)."""
        return self.signature.split("(", 1)[0].strip()


#: Exercise name -> its :class:`TaskStatement`, as the task states it; the checkers are in ``posenc.course``.
TASK_STATEMENTS = {
    name: TaskStatement(
        name,
        exercise.signature,
        exercise.label,
        exercise.contract(),
        tuple({k: v for k, v in case.items() if not k.startswith("_")} for case in exercise.cases),
    )
    for name, exercise in _COURSE_EXERCISES.items()
}
