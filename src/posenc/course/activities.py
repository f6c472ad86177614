"""One exercise of the book as coursework: its kind, points, time, and checker or rubric.

Each chapter's module in :mod:`posenc.course.exercises` lists its exercises in the book's
order as ``ACTIVITIES``, built with :func:`implementation`, :func:`prediction` and
:func:`investigation`; :mod:`posenc.course.data` collects them. Implementation exercises
are graded by their checker (all points or none); prediction and investigation exercises
by hand with the rubric, written from the chapter's solution, which is the model answer
(the teacher edition prints the rubric under each exercise). Times are for a student who
has read the chapter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["POINTS", "Activity", "implementation", "investigation", "prediction"]

#: Points per kind of exercise.
POINTS = {"implementation": 4, "prediction": 2, "investigation": 3}


@dataclass(frozen=True)
class Activity:
    """One exercise: its ``{exercise}`` label, kind, points, minutes, and checker name or rubric."""

    label: str
    kind: str  # "implementation", "prediction" or "investigation"
    minutes: int
    check: str | None = None  # the checker of an implementation exercise
    rubric: tuple[str, ...] = ()  # what a full answer says, one point-earning item per line
    exercise: object = field(default=None, compare=False, repr=False)  # the Exercise it checks
    answer: object = field(default=None, compare=False, repr=False)  # a prediction's answer key (posenc.course.answers)

    def __post_init__(self):
        if self.kind not in POINTS:
            raise ValueError(f"kind must be one of {sorted(POINTS)}, got {self.kind!r}")
        if not (isinstance(self.label, str) and self.label.startswith("ex-ch") and self.label[5:7].isdigit()):
            raise ValueError(f"label must look like 'ex-ch08-name', got {self.label!r}")
        if not isinstance(self.minutes, int) or self.minutes <= 0:
            raise ValueError(f"minutes must be a positive whole number, got {self.minutes!r}")
        if (self.kind == "implementation") != (self.check is not None) or (self.check is None) != bool(self.rubric):
            raise ValueError(f"{self.label}: an implementation has a checker and no rubric; the others a rubric")
        if self.answer is not None:
            from .answers import Choices, Number

            if self.kind != "prediction" or not isinstance(self.answer, (Choices, Number)):
                raise TypeError(f"{self.label}: only a prediction takes an answer, a Choices or a Number")

    @property
    def points(self) -> int:
        return POINTS[self.kind]

    @property
    def chapter(self) -> str:
        return self.label.split("-")[1][2:]  # "ex-ch08-rope" -> "08"


def implementation(exercise, minutes: int) -> Activity:
    """The activity of an implementation exercise (an :class:`~posenc.course.engine.Exercise`)."""
    return Activity(exercise.label, "implementation", minutes, check=exercise.name, exercise=exercise)


def prediction(label: str, minutes: int, *rubric: str, answer=None) -> Activity:
    """A prediction exercise graded with ``rubric`` (one point-earning item per string).

    ``answer`` (a :class:`~posenc.course.answers.Choices` or :class:`~posenc.course.answers.Number`)
    is the question the website asks before it opens the solution.
    """
    return Activity(label, "prediction", minutes, rubric=rubric, answer=answer)


def investigation(label: str, minutes: int, *rubric: str) -> Activity:
    """An investigation exercise graded with ``rubric`` (one point-earning item per string)."""
    return Activity(label, "investigation", minutes, rubric=rubric)
