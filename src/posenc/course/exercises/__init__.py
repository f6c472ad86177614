"""The book's exercises, one module per chapter (``ch01`` ... ``ch16``), found here by their names.

A chapter's module holds all of its coursework: each implementation exercise (an
:class:`~posenc.course.engine.Exercise`: spec, reference, cases, mistakes) and, as
``ACTIVITIES``, every exercise of the chapter in the book's order with its points, minutes
and rubric (:mod:`posenc.course.activities`). A new chapter's module ``chNN.py`` is picked
up without an edit here.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

from ..activities import Activity
from ..engine import Exercise

__all__ = ["ACTIVITIES", "CHAPTERS", "EXERCISES"]

#: Chapter number ("08") -> its module, in the book's order.
CHAPTERS = {
    info.name[2:]: importlib.import_module(f"{__name__}.{info.name}")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name)
    if re.fullmatch(r"ch\d\d", info.name)
}


def _collect() -> tuple[list[Activity], dict[str, Exercise]]:
    activities: list[Activity] = []
    for chapter, module in CHAPTERS.items():
        for activity in module.ACTIVITIES:
            if activity.chapter != chapter:
                raise ValueError(f"{module.__name__}: {activity.label} belongs to chapter {activity.chapter}")
            activities.append(activity)
    labels = [a.label for a in activities]
    if len(set(labels)) != len(labels):
        raise ValueError(f"an exercise label is used twice: {sorted(x for x in labels if labels.count(x) > 1)}")
    exercises = {a.exercise.name: a.exercise for a in activities if a.exercise is not None}
    if len(exercises) != sum(a.exercise is not None for a in activities):
        raise ValueError("two implementation exercises share a checker name")
    return activities, exercises


#: ``ACTIVITIES``: every exercise of the book (implementation, prediction, investigation) in the book's
#: order; ``EXERCISES``: checker name -> its :class:`~posenc.course.engine.Exercise`, in the same order.
ACTIVITIES, EXERCISES = _collect()
