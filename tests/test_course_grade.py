"""Grading a synthetic class: correct, wrong in known ways, crashing, looping, cells deleted."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from forked_commands import run_command

from posenc.course.editions import write_student_edition
from posenc.course.grade import grade_class

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "chapters" / "03_binary_analogy.ipynb"

RIGHT = """def my_binary(n_positions, n_bits):
    p = np.arange(n_positions)[:, None]
    return (p >> np.arange(n_bits)) & 1
"""
MSB_FIRST = """def my_binary(n_positions, n_bits):
    p = np.arange(n_positions)[:, None]
    return ((p >> np.arange(n_bits)) & 1)[:, ::-1]
"""
LOOPS_IN_CHECK = """def my_binary(n_positions, n_bits):
    while True:
        pass
"""


def submission(student_edition: Path, answer: str | None, *, extra: str | None = None, delete_stub=False):
    notebook = nbformat.read(student_edition, as_version=4)
    cells = []
    for cell in notebook.cells:
        if "student-stub" in cell.metadata.get("tags", []):
            if delete_stub:
                continue
            if answer is not None:
                cell.source = answer
            cells.append(cell)
            if extra is not None:
                cells.append(nbformat.v4.new_code_cell(extra))
            continue
        cells.append(cell)
    notebook.cells = cells
    return notebook


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("class")
    edition = base / "edition"
    write_student_edition(CHAPTER, edition)
    notebook = edition / CHAPTER.name
    class_dir = base / "submissions"
    students = {
        "alice": submission(notebook, RIGHT),
        "bob": submission(notebook, MSB_FIRST),
        "carol": submission(notebook, RIGHT, extra="raise RuntimeError('a cell that crashes')"),
        "dave": submission(notebook, LOOPS_IN_CHECK, extra="while True:\n    pass"),
        "erin": submission(notebook, None, delete_stub=True),
        "frank": submission(notebook, None),  # handed in untouched
    }
    for name, nb in students.items():
        (class_dir / name).mkdir(parents=True)
        nbformat.write(nb, class_dir / name / CHAPTER.name)
    out = base / "grades"
    grade_class(class_dir, out, seed=42, check_timeout=1, log=lambda text: None)
    with open(out / "grades.csv") as file:
        rows = {row["student"]: row for row in csv.DictReader(file)}
    return out, rows


def test_the_csv_has_a_row_per_student_and_a_column_per_exercise(graded):
    out, rows = graded
    assert set(rows) == {"alice", "bob", "carol", "dave", "erin", "frank"}
    assert list(rows["alice"]) == ["student", "ex-ch03-binary", "total", "possible", "notes"]
    points = {name: int(row["total"]) for name, row in rows.items()}
    assert points == {"alice": 4, "bob": 0, "carol": 4, "dave": 0, "erin": 0, "frank": 0}
    assert all(row["possible"] == "4" for row in rows.values())
    assert not list(out.rglob("*.tmp"))


def test_feedback_names_the_mistake(graded):
    out, _ = graded
    feedback = {path.stem: path.read_text() for path in (out / "feedback").glob("*.md")}
    assert "passed" in feedback["alice"]
    assert "most significant first" in feedback["bob"]
    assert "passed" in feedback["carol"]
    assert "timed out" in feedback["dave"] and "1 seconds" in feedback["dave"]
    assert "my_binary is not defined" in feedback["erin"]
    assert "not attempted" in feedback["frank"]


def test_the_command_line_checks_its_arguments(tmp_path):
    # each call a process of its own, forked from one that has imported the course's command
    # (tests/forked_commands.py); the first is a fresh interpreter
    fresh = [sys.executable, "-m", "posenc.course", "grade"]
    missing = subprocess.run([*fresh, str(tmp_path / "nope"), "--course-seed", "1"], capture_output=True, text=True)
    assert missing.returncode == 1 and "Traceback" not in missing.stderr and len(missing.stderr.splitlines()) == 1

    def course(*args, cwd=None, env=None):
        return run_command("posenc.course", *args, cwd=cwd, env=env, timeout=600)

    environment = {k: v for k, v in os.environ.items() if k != "POSENC_COURSE_SEED"}
    no_seed = course("grade", tmp_path, cwd=tmp_path, env=environment)
    assert no_seed.returncode == 1 and "python -m posenc.course seed" in no_seed.stderr
    assert len(no_seed.stderr.splitlines()) == 1 and not (tmp_path / "grades").exists()
    seed = course("seed", cwd=tmp_path)
    assert seed.returncode == 0 and (tmp_path / "posenc-course-seed.json").is_file()
    again = course("seed", cwd=tmp_path)
    assert again.returncode == 1 and "already has a seed" in again.stderr
    by_file = course("grade", tmp_path, "--out", tmp_path / "g0", cwd=tmp_path, env=environment)  # the file's seed
    assert by_file.returncode == 0 and (tmp_path / "g0" / "grades.csv").is_file(), by_file.stderr
    bad_seed = course("grade", tmp_path, "--course-seed", "x")
    assert bad_seed.returncode == 2 and "course seed" in bad_seed.stderr
    empty = course("grade", tmp_path, "--course-seed", "3", "--out", tmp_path / "g")
    assert empty.returncode == 0 and (tmp_path / "g" / "grades.csv").is_file()
