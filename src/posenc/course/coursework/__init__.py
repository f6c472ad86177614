"""The book's coursework, one module per chapter (``ch01`` ... ``ch16``), found here by their names.

A chapter's module holds all of its coursework: each implementation exercise (an
:class:`~posenc.course.engine.Exercise`: spec, reference, cases, mistakes) and, as
``CHAPTER_ACTIVITIES``, every exercise of the chapter in the book's order with its points, minutes
and rubric (:mod:`posenc.course.activities`). A new chapter's module ``chNN.py`` is picked
up without an edit here. Collected here: :data:`ACTIVITIES` (every exercise of the book in one
table: kind, points, time, checker or rubric) and :data:`EXERCISES` (the implementation exercises).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

from ..activities import Activity
from ..engine import Exercise

__all__ = ["ACTIVITIES", "CHAPTERS", "EXERCISES", "activities_for_chapter", "suggested_assignments"]

#: Chapter number ("08") -> its module, in the book's order.
CHAPTERS = {
    info.name[2:]: importlib.import_module(f"{__name__}.{info.name}")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name)
    if re.fullmatch(r"ch\d\d", info.name)
}


def _activities() -> dict[str, Activity]:
    activities: list[Activity] = []
    for chapter, module in CHAPTERS.items():
        for activity in module.CHAPTER_ACTIVITIES:
            if activity.chapter != chapter:
                raise ValueError(f"{module.__name__}: {activity.label} belongs to chapter {activity.chapter}")
            activities.append(activity)
    labels = [a.label for a in activities]
    if len(set(labels)) != len(labels):
        raise ValueError(f"an exercise label is used twice: {sorted(x for x in labels if labels.count(x) > 1)}")
    return {activity.label: activity for activity in activities}


def _exercises(activities: dict[str, Activity]) -> dict[str, Exercise]:
    exercises = {a.exercise.name: a.exercise for a in activities.values() if a.exercise is not None}
    if len(exercises) != sum(a.exercise is not None for a in activities.values()):
        raise ValueError("two implementation exercises share a checker name")
    return exercises


#: Exercise label (``ex-ch08-rope``) -> its :class:`~posenc.course.activities.Activity`: kind, points,
#: minutes, checker or rubric; every exercise of the book (implementation, prediction, investigation),
#: in the book's order.
ACTIVITIES: dict[str, Activity] = _activities()

#: Checker name -> its ``posenc.course.engine.Exercise``, in the book's order.
EXERCISES: dict[str, Exercise] = _exercises(ACTIVITIES)


def activities_for_chapter(chapter: str) -> list[Activity]:
    """The activities of a chapter (``"08"``), in the book's order."""
    return [a for a in ACTIVITIES.values() if a.chapter == chapter]


_COUNTS = {1: "", 2: "two ", 3: "three ", 4: "four "}


def _kinds(activities: list[Activity]) -> str:
    """``implementation (`rope`), prediction, two investigations``: the kinds in order of first appearance."""
    parts = []
    for kind in dict.fromkeys(a.kind for a in activities):
        of_kind = [a for a in activities if a.kind == kind]
        text = _COUNTS.get(len(of_kind), f"{len(of_kind)} ") + kind + ("s" if len(of_kind) > 1 else "")
        if kind == "implementation":
            text += " (" + ", ".join(f"`{a.check}`" for a in of_kind) + ")"
        parts.append(text)
    return ", ".join(parts)


def suggested_assignments(chapters: Path) -> str:
    """The teacher's guide's table (Markdown, MyST roles): per chapter its exercises, kinds, time and points.

    ``chapters`` is the folder of the chapter notebooks (``NN_name.ipynb``), which the rows link to.
    """
    rows = ["| Chapter | Exercises | Kinds | Time | Points |", "|---|---|---|---|---|"]
    for chapter, module in CHAPTERS.items():
        activities = activities_for_chapter(chapter)
        notebook = next(iter(sorted(Path(chapters).glob(f"{chapter}_*.ipynb"))), None)
        if notebook is None:
            raise FileNotFoundError(f"no notebook {chapter}_*.ipynb in {chapters}")
        title = f"{int(chapter)}. {{doc}}`{notebook.stem}`"
        labels = ", ".join(f"{{ref}}`{a.label}`" for a in activities)
        kinds = _kinds(activities) + (f" ({module.GUIDE_NOTE})" if getattr(module, "GUIDE_NOTE", None) else "")
        minutes, points = sum(a.minutes for a in activities), sum(a.points for a in activities)
        rows.append(f"| {title} | {labels} | {kinds} | {minutes} min | {points} |")
    return "\n".join(rows) + "\n"
