"""One exercise of the book as coursework: its kind, points, time, and checker or rubric.

Each chapter's module in :mod:`posenc.course.coursework` lists its exercises in the book's
order as ``CHAPTER_ACTIVITIES``, built with :func:`implementation`, :func:`prediction` and
:func:`investigation`; :data:`posenc.course.coursework.ACTIVITIES` collects them. Implementation exercises
are graded by their checker (all points or none); prediction and investigation exercises
by hand with the rubric, written from the chapter's solution, which is the model answer
(the teacher edition prints the rubric under each exercise). Times are for a student who
has read the chapter. The rubrics and the predictions' keys are part of the answer key, which is
not in the installed package: :attr:`Activity.rubric` and :attr:`Activity.answer` read them from
it (:mod:`posenc.course.key`), and are empty without it.
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
    exercise: object = field(default=None, compare=False, repr=False)  # the Exercise it checks

    def __post_init__(self):
        if self.kind not in POINTS:
            raise ValueError(f"kind must be one of {sorted(POINTS)}, got {self.kind!r}")
        if not (isinstance(self.label, str) and self.label.startswith("ex-ch") and self.label[5:7].isdigit()):
            raise ValueError(f"label must look like 'ex-ch08-name', got {self.label!r}")
        if not isinstance(self.minutes, int) or self.minutes <= 0:
            raise ValueError(f"minutes must be a positive whole number, got {self.minutes!r}")
        if (self.kind == "implementation") != (self.check is not None):
            raise ValueError(f"{self.label}: an implementation has a checker; the others are graded with a rubric")

    @property
    def rubric(self) -> tuple[str, ...]:
        """What a full answer says, one point-earning item per line (from the answer key; () without it)."""
        from .key import load_key

        return () if self.check else load_key().rubrics.get(self.label, ())

    @property
    def answer(self):
        """A prediction's key for the website's form (a ``Choices`` or a ``Number``; from the answer key)."""
        from .key import load_key

        return load_key().predictions.get(self.label) if self.kind == "prediction" else None

    @property
    def points(self) -> int:
        return POINTS[self.kind]

    @property
    def chapter(self) -> str:
        return self.label.split("-")[1][2:]  # "ex-ch08-rope" -> "08"


def implementation(exercise, minutes: int) -> Activity:
    """The activity of an implementation exercise (an :class:`~posenc.course.engine.Exercise`)."""
    return Activity(exercise.label, "implementation", minutes, check=exercise.name, exercise=exercise)


def prediction(label: str, minutes: int) -> Activity:
    """A prediction exercise: its rubric and the question the website asks before it opens the solution
    are in the answer key (``RUBRICS`` and ``PREDICTIONS`` of ``teacher/key/chNN.py``)."""
    return Activity(label, "prediction", minutes)


def investigation(label: str, minutes: int) -> Activity:
    """An investigation exercise: its rubric is in the answer key (``RUBRICS`` of ``teacher/key/chNN.py``)."""
    return Activity(label, "investigation", minutes)
