"""Every exercise of the book in one table: kind, points, time, checker or rubric.

Collected from the chapters' modules (:mod:`posenc.course.exercises`), where each
chapter declares its exercises (``ACTIVITIES``); see :mod:`posenc.course.activities`.
"""

from __future__ import annotations

from pathlib import Path

from .activities import POINTS, Activity
from .exercises import ACTIVITIES as _ACTIVITIES

__all__ = ["Activity", "ACTIVITIES", "POINTS", "activities_for_chapter", "suggested_assignments"]

#: Exercise label (``ex-ch08-rope``) -> its :class:`Activity`: kind, points, minutes, checker or rubric.
ACTIVITIES: dict[str, Activity] = {activity.label: activity for activity in _ACTIVITIES}


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
    from .exercises import CHAPTERS

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
