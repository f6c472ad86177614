"""posenc.course.data against the book: every exercise listed once, with the right kind and checker,
and the teacher's guide's table of suggested assignments adding up to the same times and points."""

import re
from pathlib import Path

import nbformat
import pytest

from posenc.course.data import ACTIVITIES, POINTS, activities_for_chapter

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
COURSEWORK = ROOT / "chapters" / "coursework.md"

EXERCISE = re.compile(r"```\{exercise\}\s*(?P<title>[^\n]*)\n(?P<options>(?::[^\n]*\n)*)")
LABEL = re.compile(r"^:label:\s*(\S+)", re.MULTILINE)
CHECK = re.compile(r"exercises\.check\(\s*[\"'](\w+)[\"']")


def book_exercises() -> list[dict]:
    """Every ``{exercise}`` of the chapters in reading order: label, title, chapter, and the check cell's name."""
    found = []
    for path in CHAPTERS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                for match in EXERCISE.finditer(cell.source):
                    label = LABEL.search(match.group("options"))
                    assert label, f"{path.name}: exercise {match.group('title')!r} has no :label:"
                    title, chapter = match.group("title"), path.name[:2]
                    found.append({"label": label.group(1), "title": title, "chapter": chapter, "check": None})
            elif cell.cell_type == "code" and "solution" not in cell.metadata.get("tags", []):
                for name in CHECK.findall(cell.source):
                    assert found, f"{path.name}: a check cell before any exercise"
                    assert found[-1]["check"] is None, f"{found[-1]['label']}: two check cells"
                    found[-1]["check"] = name
    return found


def suggested_assignments() -> dict[str, dict]:
    """The rows of coursework.md's "Suggested assignments" table, by chapter ("01")."""
    text = COURSEWORK.read_text()
    section = text.split("## Suggested assignments", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert header == ["Chapter", "Exercises", "Kinds", "Time", "Points"]
    table = {}
    for line in rows[2:]:
        chapter, exercises, _kinds, time, points = (cell.strip() for cell in line.strip("|").split("|"))
        number = re.match(r"(\d+)\.", chapter)
        minutes = re.fullmatch(r"(\d+) min", time)
        assert number and minutes and points.isdigit(), line
        table[f"{int(number.group(1)):02d}"] = {
            "labels": re.findall(r"\{ref\}`([^`]+)`", exercises),
            "minutes": int(minutes.group(1)),
            "points": int(points),
        }
    return table


BOOK = book_exercises()
TABLE = suggested_assignments()


def test_every_exercise_of_the_chapters_is_an_activity_and_vice_versa():
    labels = [e["label"] for e in BOOK]
    assert len(labels) == len(set(labels)), "a label used twice"
    assert set(labels) - set(ACTIVITIES) == set(), "exercises missing from posenc.course.data"
    assert set(ACTIVITIES) - set(labels) == set(), "activities with no exercise in the chapters"
    assert labels == list(ACTIVITIES), "ACTIVITIES is not in the book's order"
    for exercise in BOOK:
        assert ACTIVITIES[exercise["label"]].chapter == exercise["chapter"], exercise["label"]


@pytest.mark.parametrize("exercise", BOOK, ids=lambda e: e["label"])
def test_kind_checker_and_rubric_fit_the_exercise(exercise):
    activity = ACTIVITIES[exercise["label"]]
    title = exercise["title"]
    kinds = {"Predict": "prediction", "Investigate": "investigation"}
    expected = next((kind for start, kind in kinds.items() if title.startswith(start)), "implementation")
    assert activity.kind == expected, f"{title!r}"
    assert activity.kind in POINTS and activity.minutes > 0
    if activity.kind == "implementation":
        assert activity.check == exercise["check"], "the check cell names another checker"
        assert not activity.rubric
    else:
        assert exercise["check"] is None and activity.check is None
        assert activity.rubric and all(item.strip() for item in activity.rubric)


def test_the_suggested_assignments_agree_with_the_data():
    chapters = sorted({a.chapter for a in ACTIVITIES.values()})
    assert sorted(TABLE) == chapters
    for chapter, row in TABLE.items():
        activities = activities_for_chapter(chapter)
        assert row["labels"] == [a.label for a in activities], f"chapter {chapter}: exercises"
        assert row["minutes"] == sum(a.minutes for a in activities), f"chapter {chapter}: time"
        assert row["points"] == sum(a.points for a in activities), f"chapter {chapter}: points"
