"""Grade a class: ``python -m posenc.course grade SUBMISSIONS --course-seed N``.

``SUBMISSIONS`` holds one folder per student (``alice/03_binary_analogy.ipynb``, ...) or
one notebook per student (``alice.ipynb``). Each notebook is executed in a kernel of its
own (nbclient, a time limit per cell, errors allowed so that one broken cell does not
cost the rest), then, in that kernel, every implementation exercise whose function the
notebook defines is checked on the public cases and the hidden cases of the course seed.
The grading kernel needs ``posenc`` installed with its ``book`` extra (``pip install -e ".[book]"``
from the book's repository), as the students' does.

Written to ``--out`` (default ``grades/``), each through a temporary file beside it:
``grades.csv`` (a row per student, a column per implementation exercise, the total) and
``feedback/<student>.md`` (each exercise's points, status, message and hint).
"""

from __future__ import annotations

import csv
import io
import json
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .._files import write_atomic
from .data import ACTIVITIES
from .exercises import EXERCISES

__all__ = ["grade_class", "grade_notebook", "check_namespace"]

_CHAPTER = re.compile(r"^(\d\d)")


def check_namespace(namespace: dict, names: list[str], seed: int | None, timeout: float | None) -> dict:
    """Check each exercise in ``names`` against the function the namespace defines (run inside the kernel)."""
    from .checker import check

    results = {}
    for name in names:
        function = namespace.get(EXERCISES[name].function_name)
        if function is None:
            results[name] = {
                "status": "missing",
                "message": f"{EXERCISES[name].function_name} is not defined",
                "hint": None,
            }
            continue
        result = check(name, function, seed=seed, timeout=timeout, quiet=True)
        results[name] = {"status": result.status, "message": result.message, "hint": result.hint}
    return results


def _chapter_exercises(path: Path, notebook) -> list[str]:
    """The implementation exercises a notebook is for: by its chapter number, else by what it mentions."""
    match = _CHAPTER.match(path.name)
    if match:
        names = [a.check for a in ACTIVITIES.values() if a.check and a.chapter == match.group(1)]
        if names:
            return names
    text = "\n".join(cell.source for cell in notebook.cells)
    return [name for name, exercise in EXERCISES.items() if exercise.function_name in text or f'"{name}"' in text]


@dataclass
class NotebookGrade:
    path: Path
    results: dict = field(default_factory=dict)
    problem: str | None = None


def grade_notebook(
    path: Path,
    *,
    seed: int | None,
    cell_timeout: float = 120,
    check_timeout: float | None = None,
    kernel_name: str = "python3",
) -> NotebookGrade:
    """Execute one submitted notebook in its own kernel and check the functions it defines."""
    from nbclient import NotebookClient

    grade = NotebookGrade(Path(path))
    try:
        notebook = nbformat.read(path, as_version=4)
    except Exception as error:
        grade.problem = f"not a readable notebook ({type(error).__name__})"
        return grade
    names = _chapter_exercises(Path(path), notebook)
    if not names:
        return grade
    marker = f"POSENC-GRADES-{secrets.token_hex(8)}:"
    source = (
        "import json as _posenc_json\n"
        "from posenc.course.grade import check_namespace as _posenc_check_namespace\n"
        f"print({marker!r} + _posenc_json.dumps(_posenc_check_namespace(globals(), {names!r}, {seed!r}, "
        f"{check_timeout!r})))"
    )
    notebook.cells.append(nbformat.v4.new_code_cell(source))
    client = NotebookClient(
        notebook,
        timeout=cell_timeout,
        kernel_name=kernel_name,
        allow_errors=True,
        interrupt_on_timeout=True,
        resources={"metadata": {"path": str(Path(path).parent)}},
    )
    try:
        client.execute()
    except Exception as error:  # the kernel died (os._exit in a cell, say) or could not start
        grade.problem = f"the notebook did not run to the end ({type(error).__name__}: {str(error)[:200]})"
    for output in notebook.cells[-1].get("outputs", []):
        text = output.get("text", "")
        if marker in text:
            grade.results = json.loads(text.split(marker, 1)[1].splitlines()[0])
    if not grade.results and grade.problem is None:
        grade.problem = "the grading cell did not run (the kernel stopped before the end)"
    for name in names:
        grade.results.setdefault(name, {"status": "missing", "message": grade.problem or "not graded", "hint": None})
    return grade


def _students(submissions: Path) -> dict[str, list[Path]]:
    students: dict[str, list[Path]] = {}
    for item in sorted(submissions.iterdir()):
        if item.name.startswith("."):
            continue
        if item.is_dir():
            students[item.name] = sorted(p for p in item.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        elif item.suffix == ".ipynb":
            students[item.stem] = [item]
    return students


def _feedback(student: str, grades: list[NotebookGrade], columns: list[str], points: dict[str, int]) -> str:
    lines = [f"# Feedback for {student}", ""]
    total = sum(points.values())
    possible = sum(ACTIVITIES[EXERCISES[n].label].points for n in columns)
    lines += [f"Implementation exercises: {total} of {possible} points.", ""]
    results = {name: result for grade in grades for name, result in grade.results.items()}
    for name in columns:
        exercise = EXERCISES[name]
        result = results.get(name, {"status": "missing", "message": "no notebook for this chapter", "hint": None})
        lines.append(f"## {exercise.label} ({exercise.function_name}): {points[name]} points, {result['status']}")
        lines.append("")
        lines.append(result["message"])
        if result.get("hint"):
            lines += ["", f"Hint: {result['hint']}"]
        lines.append("")
    for grade in grades:
        if grade.problem:
            lines += [f"Note on {grade.path.name}: {grade.problem}", ""]
    lines.append("Prediction and investigation exercises are graded by hand with the rubrics of the teacher edition.")
    return "\n".join(lines) + "\n"


def grade_class(
    submissions: Path,
    out: Path,
    *,
    seed: int | None,
    cell_timeout: float = 120,
    check_timeout: float | None = None,
    log=print,
) -> Path:
    """Grade every student in ``submissions``; write ``out/grades.csv`` and ``out/feedback/*.md``."""
    submissions, out = Path(submissions), Path(out)
    students = _students(submissions)
    graded: dict[str, list[NotebookGrade]] = {}
    for student, paths in students.items():
        graded[student] = []
        for path in paths:
            log(f"grading {student}: {path.name}")
            graded[student].append(
                grade_notebook(path, seed=seed, cell_timeout=cell_timeout, check_timeout=check_timeout)
            )
    seen = {name for grades in graded.values() for grade in grades for name in grade.results}
    columns = [name for name in EXERCISES if name in seen]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", *(EXERCISES[n].label for n in columns), "total", "possible"])
    possible = sum(ACTIVITIES[EXERCISES[n].label].points for n in columns)
    for student, grades in graded.items():
        results = {name: result for grade in grades for name, result in grade.results.items()}
        points = {
            n: ACTIVITIES[EXERCISES[n].label].points if results.get(n, {}).get("status") == "passed" else 0
            for n in columns
        }
        writer.writerow([student, *(points[n] for n in columns), sum(points.values()), possible])
        write_atomic(out / "feedback" / f"{student}.md", _feedback(student, grades, columns, points))
    write_atomic(out / "grades.csv", buffer.getvalue())
    return out / "grades.csv"
