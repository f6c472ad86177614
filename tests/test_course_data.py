"""The chapters' coursework modules against the book: every exercise listed once, in its chapter's module,
with the right kind and checker; the teacher's guide's table generated from them."""

import re
from pathlib import Path

import nbformat
import pytest

from posenc.course.activities import POINTS, Activity
from posenc.course.coursework import ACTIVITIES, EXERCISES, activities_for_chapter, suggested_assignments
from posenc.course.coursework import CHAPTERS as MODULES
from posenc.course.engine import Exercise

from conftest import chapter_notebooks

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = chapter_notebooks()
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


def guide_table() -> dict[str, dict]:
    """The rows of the teacher's guide's table, as the page's code cell generates them, by chapter ("01")."""
    rows = [line for line in suggested_assignments(ROOT / "chapters").splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert header == ["Chapter", "Exercises", "Kinds", "Time", "Points"]
    table = {}
    for line in rows[2:]:
        chapter, exercises, _kinds, time, points = (cell.strip() for cell in line.strip("|").split("|"))
        number = re.fullmatch(r"(\d+)\. \{doc\}`(\d\d)_\w+`", chapter)
        minutes = re.fullmatch(r"(\d+) min", time)
        assert number and minutes and points.isdigit(), line
        assert f"{int(number.group(1)):02d}" == number.group(2), line
        table[number.group(2)] = {
            "labels": re.findall(r"\{ref\}`([^`]+)`", exercises),
            "minutes": int(minutes.group(1)),
            "points": int(points),
        }
    return table


BOOK = book_exercises()
TABLE = guide_table()


def test_every_exercise_of_the_chapters_is_an_activity_and_vice_versa():
    labels = [e["label"] for e in BOOK]
    assert len(labels) == len(set(labels)), "a label used twice"
    assert set(labels) - set(ACTIVITIES) == set(), "exercises missing from posenc.course.coursework.ACTIVITIES"
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


def test_the_guides_table_is_generated_from_the_chapters_modules():
    text = COURSEWORK.read_text()
    section = text.split("## Suggested assignments", 1)[1].split("\n## ", 1)[0]
    assert "suggested_assignments(Path(\".\"))" in section and "markdown_format: myst" in section
    assert "| Chapter |" not in section, "a hand-written table beside the generated one"
    assert text.startswith("---\njupytext:"), "the page must be a MyST notebook for its cell to run"
    chapters = sorted({a.chapter for a in ACTIVITIES.values()})
    assert sorted(TABLE) == chapters == sorted(MODULES)
    for chapter, row in TABLE.items():
        labels = [e["label"] for e in BOOK if e["chapter"] == chapter]
        assert row["labels"] == labels, f"chapter {chapter}: exercises"
        activities = activities_for_chapter(chapter)
        assert row["minutes"] == sum(a.minutes for a in activities), f"chapter {chapter}: time"
        assert row["points"] == sum(a.points for a in activities), f"chapter {chapter}: points"


def test_the_one_week_module_takes_about_four_hours():
    minutes = sum(TABLE[chapter]["minutes"] for chapter in ("01", "02", "04", "08"))
    assert "fits chapters 1, 2, 4 and 8 (about four hours of" in COURSEWORK.read_text()
    assert round(minutes / 60) == 4, minutes


def test_each_chapter_module_lists_every_exercise_it_defines():
    for chapter, module in MODULES.items():
        defined = {id(v) for v in vars(module).values() if isinstance(v, Exercise) and v.label[5:7] == chapter}
        listed = {id(a.exercise) for a in module.CHAPTER_ACTIVITIES if a.exercise is not None}
        assert defined == listed, f"ch{chapter}: an Exercise that is not in CHAPTER_ACTIVITIES (or the reverse)"
        assert all(a.chapter == chapter for a in module.CHAPTER_ACTIVITIES)
    assert list(EXERCISES) == [a.check for a in ACTIVITIES.values() if a.check]


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: Activity("ex-ch01-x", "essay", 10), "kind must be one of"),
        (lambda: Activity("chapter-one", "prediction", 10), "label must look like"),
        (lambda: Activity("ex-ch01-x", "prediction", 0), "minutes must be a positive"),
        (lambda: Activity("ex-ch01-x", "prediction", 10, check="binary"), "has a checker"),
        (lambda: Activity("ex-ch01-x", "implementation", 10), "has a checker"),
    ],
)
def test_a_badly_declared_activity_is_refused_with_a_reason(make, words):
    with pytest.raises(ValueError, match=words):
        make()


def test_the_gpt_oss_rubric_gives_the_reference_librarys_numbers():
    # ex-ch14-gpt-oss, rubric (b): how much rounding the ramp (truncate true) would change the blended speeds,
    # against the speeds gpt-oss ships (truncate false) and against the rounded ones; transformers computes both
    import numpy as np
    from transformers import GptOssConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    from posenc import MODELS

    zoo = MODELS["gpt-oss-20b"].config
    rope = {**zoo["rope_scaling"], "rope_theta": zoo["rope_theta"]}
    assert rope["truncate"] is False  # as gpt-oss ships it
    head = {key: zoo[key] for key in ("head_dim", "hidden_size", "num_attention_heads")}
    speeds = {}
    for truncate in (False, True):
        config = GptOssConfig(**head, rope_parameters={**rope, "truncate": truncate})
        speeds[truncate] = ROPE_INIT_FUNCTIONS["yarn"](config, "cpu")[0].double().numpy()
    shipped = np.abs(speeds[True] / speeds[False] - 1).max()
    rounded = np.abs(speeds[False] / speeds[True] - 1).max()
    (activity,) = [a for a in MODULES["14"].CHAPTER_ACTIVITIES if a.label == "ex-ch14-gpt-oss"]
    text = " ".join(activity.rubric)
    assert f"about {100 * shipped:.0f}% of the speeds gpt-oss ships" in text
    assert f"about {100 * rounded:.0f}% measured against the rounded" in text


def test_the_answer_key_covers_every_exercise_and_nothing_else():
    """Every prediction and investigation has its rubric in the answer key (teacher/key), every key names an
    exercise of its kind, and no chapter module of the package holds a rubric, a prediction's key or an answer."""
    from posenc.course.key import load_key

    key = load_key()
    assert key.folder is not None and key.folder.parent.name == "teacher"
    graded_by_hand = {label for label, a in ACTIVITIES.items() if a.kind != "implementation"}
    assert set(key.rubrics) == graded_by_hand
    assert all(key.rubrics[label] and all(isinstance(i, str) and i.strip() for i in key.rubrics[label])
               for label in graded_by_hand)
    assert set(key.predictions) <= {label for label, a in ACTIVITIES.items() if a.kind == "prediction"}
    assert set(key.answers) <= set(EXERCISES)
    for label in graded_by_hand:
        assert ACTIVITIES[label].rubric == key.rubrics[label]


def test_without_the_key_there_is_no_rubric_no_prediction_key_and_no_answer(monkeypatch):
    monkeypatch.setenv("POSENC_COURSE_KEY", "none")
    assert all(a.rubric == () and a.answer is None for a in ACTIVITIES.values())
    assert all(e.answers == () for e in EXERCISES.values())
