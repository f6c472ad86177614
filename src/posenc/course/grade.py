"""Grade a class: ``python -m posenc.course grade SUBMISSIONS --course-seed N``.

``SUBMISSIONS`` holds one folder per student (``alice/03_binary_analogy.ipynb``, ...) or
one notebook per student (``alice.ipynb``). The notebooks are never run and no checker runs
inside a student's kernel: for each implementation exercise of a notebook's chapter, the
function and what it needs are read out of the notebook's source and judged by the sealed
grader (:mod:`posenc.course.sealed`): the student's code runs in a fresh process that holds no
reference, no answer key and no course seed, under an audit hook; the verdict is computed in
this process from the values that come back, on the public cases and the hidden cases of the
course seed. Nothing a notebook does to ``check``, posenc, NumPy or its kernel changes a grade.

A function that is a copy of posenc's own code or of a model answer (:mod:`posenc.course.copies`),
or whose run the audit hook stopped (a process started, posenc's files read, code built at run
time, ...), gets no points for that exercise, and the report says why; ``accept`` (the
``--accept STUDENT:EXERCISE`` option) lets the teacher grade such an exercise as usual after a
look. What a notebook tried elsewhere (replacing the checker, tracing hooks, writing files) is
listed in the CSV's ``notes`` column and in the feedback, cell by cell.

Written to ``--out`` (default ``grades/``), each through a temporary file beside it:
``grades.csv`` (a row per student, a column per implementation exercise, the total, the
points possible and the notes) and ``feedback/<student>.md`` (each exercise's points,
status, message and hint).
"""

from __future__ import annotations

import csv
import functools
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .._files import write_atomic
from .coursework import ACTIVITIES, EXERCISES

__all__ = ["FLAGGED", "grade_class", "grade_notebook", "judge_notebook", "model_answers"]

_CHAPTER = re.compile(r"^(\d\d)")


def model_answers(chapters: Path | None = None) -> dict[str, str]:
    """The model answers a copy is compared with: each exercise's other styles and, where the book's
    chapters are at hand (``chapters``, or the repository around an editable posenc), their solution
    cells; label -> source."""
    from .editions import _walk

    answers: dict[str, str] = {}
    for exercise in EXERCISES.values():
        for number, source in enumerate(exercise.answers):
            answers[f"{exercise.label} ({number + 2})"] = source
    if chapters is None:
        import posenc

        root = Path(posenc.__file__).resolve().parents[2]
        chapters = root / "chapters" if (root / "_toc.yml").is_file() else None
    if chapters is not None and Path(chapters).is_dir():
        for path in sorted(Path(chapters).glob("[0-9][0-9]_*.ipynb")):
            notebook = nbformat.read(path, as_version=4)
            for role, cell, label in _walk(notebook):
                if role == "solution-code":
                    answers.setdefault(f"{label}", "")
                    answers[f"{label}"] += "\n\n" + cell.source
    return answers


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
    notes: list[str] = field(default_factory=list)


#: Statuses that give no points whatever the checker said, unless the teacher accepts the exercise.
FLAGGED = ("copied", "refused")


@functools.lru_cache(maxsize=1)
def _default_corpus():
    """posenc's functions and the book's model answers, read once per process."""
    from .copies import Corpus

    return Corpus.build(model_answers())


def judge_notebook(
    notebook,
    names: list[str],
    *,
    seed: int | None,
    check_timeout: float | None = None,
    corpus=None,
    forbidden: list[str] | None = None,
) -> dict[str, dict]:
    """Each exercise in ``names`` judged sealed for the function ``notebook`` (an nbformat node) defines:
    exercise name -> status, message, hint, what the checker said, flags and problems. The grade command,
    the Otter plugin and the nbgrader preprocessor all grade with this."""
    from .extract import extract_function
    from .sealed import forbidden_roots, sealed_check

    if isinstance(names, str) or not all(isinstance(n, str) and n in EXERCISES for n in names):
        raise ValueError(f"names must be a list of exercise names ({', '.join(EXERCISES)}), got {names!r}")
    if not hasattr(notebook, "get") or not isinstance(notebook.get("cells"), list):
        raise TypeError(
            f"notebook must be an nbformat notebook (a dict with a list of cells), got {type(notebook).__name__}"
        )
    corpus = corpus if corpus is not None else _default_corpus()
    forbidden = forbidden if forbidden is not None else forbidden_roots()
    results = {}
    for name in names:
        exercise = EXERCISES[name]
        extracted = extract_function(notebook, exercise.function_name)
        copies = [(f.name, corpus.match(f)) for f in extracted.functions] if extracted.defined else []
        copied = [(function, source) for function, source in copies if source]
        sealed = sealed_check(exercise, extracted=extracted, seed=seed, timeout=check_timeout, forbidden=forbidden)
        result = {"status": sealed.result.status, "message": sealed.result.message, "hint": sealed.result.hint,
                  "checker": sealed.result.status}
        if copied:
            function, source = copied[0]
            result.update(status="copied", message=f"{function} is a copy of {source} (names, numbers and layout "
                          f"aside); the checker said: {sealed.result.status}", hint=None)
        elif sealed.refused:
            result.update(status="refused", message=f"the grader stopped what your function did: "
                          f"{'; '.join(sealed.refused)}; the checker said: {sealed.result.message}", hint=None)
        result["flags"] = [f"{name}: {f} copied from {s}" for f, s in copied] + [f"{name}: {r}" for r in sealed.refused]
        result["problems"] = sealed.problems
        results[name] = result
    return results


def grade_notebook(
    path: Path,
    *,
    seed: int | None,
    check_timeout: float | None = None,
    corpus=None,
    forbidden: list[str] | None = None,
) -> NotebookGrade:
    """Judge the functions one submitted notebook defines, sealed (see the module)."""
    from .extract import tamper_notes
    from .sealed import forbidden_roots

    grade = NotebookGrade(Path(path))
    try:
        notebook = nbformat.read(path, as_version=4)
    except Exception as error:
        grade.problem = f"not a readable notebook ({type(error).__name__})"
        return grade
    names = _chapter_exercises(Path(path), notebook)
    if not names:
        return grade
    forbidden = forbidden if forbidden is not None else forbidden_roots(Path(path).parent)
    try:
        grade.notes = tamper_notes(notebook)
        grade.results = judge_notebook(notebook, names, seed=seed, check_timeout=check_timeout, corpus=corpus,
                                       forbidden=forbidden)
    except Exception as error:  # one notebook the grader cannot read must not stop the class
        grade.problem = f"the grader could not read this notebook ({type(error).__name__}: {str(error)[:200]})"
        grade.results = {n: {"status": "error", "message": grade.problem, "hint": None} for n in names}
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


def _points(student: str, name: str, result: dict, accepted: set[tuple[str, str]]) -> int:
    """All of the exercise's points when the checker passed it (and, for a flagged exercise, the teacher
    accepted it), none otherwise."""
    full = ACTIVITIES[EXERCISES[name].label].points
    if result.get("status") == "passed":
        return full
    if result.get("status") in FLAGGED and (student, name) in accepted and result.get("checker") == "passed":
        return full
    return 0


def _feedback(
    student: str, grades: list[NotebookGrade], columns: list[str], points: dict[str, int], accepted: set
) -> str:
    lines = [f"# Feedback for {student}", ""]
    total = sum(points.values())
    possible = sum(ACTIVITIES[EXERCISES[n].label].points for n in columns)
    lines += [f"Implementation exercises: {total} of {possible} points.", ""]
    results = {name: result for grade in grades for name, result in grade.results.items()}
    for name in columns:
        exercise = EXERCISES[name]
        result = results.get(name, {"status": "missing", "message": "no notebook for this chapter", "hint": None})
        status = result["status"] + (" (accepted by the teacher)" if (student, name) in accepted else "")
        lines.append(f"## {exercise.label} ({exercise.function_name}): {points[name]} points, {status}")
        lines.append("")
        lines.append(result["message"])
        if result.get("hint"):
            lines += ["", f"Hint: {result['hint']}"]
        for problem in result.get("problems", []):
            lines += ["", f"While defining it: {problem}"]
        lines.append("")
    for grade in grades:
        if grade.problem:
            lines += [f"Note on {grade.path.name}: {grade.problem}", ""]
        if grade.notes:
            lines += [f"What {grade.path.name} does that the grader looked at (the grade is computed without it):"]
            lines += [f"- {note}" for note in grade.notes] + [""]
    lines.append("Prediction and investigation exercises are graded by hand with the rubrics of the teacher edition.")
    return "\n".join(lines) + "\n"


def _accepted(accept) -> set[tuple[str, str]]:
    pairs = set()
    for item in accept or ():
        student, sep, exercise = str(item).partition(":")
        if not sep or not student or exercise not in EXERCISES:
            raise ValueError(
                f"accept takes STUDENT:EXERCISE with a known exercise ({', '.join(EXERCISES)}), got {item!r}"
            )
        pairs.add((student, exercise))
    return pairs


def grade_class(
    submissions: Path,
    out: Path,
    *,
    seed: int | None,
    check_timeout: float | None = None,
    accept=(),
    chapters: Path | None = None,
    log=print,
) -> Path:
    """Grade every student in ``submissions``; write ``out/grades.csv`` and ``out/feedback/*.md``.

    ``accept`` lists ``"student:exercise"`` pairs whose copy or refusal the teacher has looked at and
    accepts; ``chapters`` is the folder of the teacher's chapters whose solutions are the model answers
    (default: the book's, next to an editable posenc)."""
    from .copies import Corpus
    from .sealed import forbidden_roots

    submissions, out = Path(submissions), Path(out)
    accepted = _accepted(accept)
    students = _students(submissions)
    corpus = Corpus.build(model_answers(chapters))
    forbidden = forbidden_roots(submissions, out, chapters)
    graded: dict[str, list[NotebookGrade]] = {}
    for student, paths in students.items():
        graded[student] = []
        for path in paths:
            log(f"grading {student}: {path.name}")
            graded[student].append(
                grade_notebook(path, seed=seed, check_timeout=check_timeout, corpus=corpus, forbidden=forbidden)
            )
    seen = {name for grades in graded.values() for grade in grades for name in grade.results}
    columns = [name for name in EXERCISES if name in seen]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", *(EXERCISES[n].label for n in columns), "total", "possible", "notes"])
    possible = sum(ACTIVITIES[EXERCISES[n].label].points for n in columns)
    for student, grades in graded.items():
        results = {name: result for grade in grades for name, result in grade.results.items()}
        points = {n: _points(student, n, results.get(n, {}), accepted) for n in columns}
        flags = [flag for n in columns for flag in results.get(n, {}).get("flags", [])]
        notes = flags + [note for grade in grades for note in grade.notes]
        writer.writerow([student, *(points[n] for n in columns), sum(points.values()), possible, "; ".join(notes)])
        write_atomic(out / "feedback" / f"{student}.md", _feedback(student, grades, columns, points, accepted))
    write_atomic(out / "grades.csv", buffer.getvalue())
    return out / "grades.csv"
