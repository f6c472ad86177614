"""The editions of the chapters: student (solutions removed), teacher (rubrics and points), nbgrader, website.

``python -m posenc.course student chapters _build/student`` (``make student``) copies every chapter
notebook, or one, and in the copy:

* removes every solution: the cells from a ``{solution-start}`` marker to its
  ``{solution-end}``, and any ``{solution}`` block inside a markdown cell;
* keeps each code cell tagged ``solution`` (the function the exercise asks for) as a
  stub: its signature and docstring stay, its body becomes
  ``raise NotImplementedError("Exercise <label>: ...")``, so the notebook still runs
  top to bottom and the checkers report "not attempted yet";
* strips outputs, adds a note at the top, and copies what the notebooks read
  (``data/``, and ``images/`` with the links rewritten), so that the edition runs
  from its own folder.

``teacher`` writes the chapters with their solutions and, under each exercise, its
points, time and rubric (from the chapter's module in :mod:`posenc.course.coursework`). ``nbgrader`` writes an nbgrader
source version: solution regions between ``### BEGIN SOLUTION`` and ``### END SOLUTION``
with nbgrader's cell metadata, check cells as autograded tests, an answer cell for each
prediction and investigation, and no solution prose or demonstration at all. ``site``
writes a copy of the book whose chapters are the student edition, for ``make book-student``.
Every file is written to a temporary name beside it and moved into place.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
from pathlib import Path

import nbformat

from .._files import write_atomic

__all__ = [
    "stub_source",
    "student_notebook",
    "teacher_notebook",
    "nbgrader_notebook",
    "write_student_edition",
    "write_teacher_edition",
    "write_nbgrader_source",
    "write_site_source",
    "notebook_paths",
]

_START = re.compile(r"^\s*[`:]{3,}\s*\{solution-start\}\s*(\S+)", re.M)
_END = re.compile(r"^\s*[`:]{3,}\s*\{solution-end\}", re.M)
_BLOCK = re.compile(r"^(?P<fence>[`:]{3,})\s*\{solution\}.*?^(?P=fence)\s*$\n?", re.M | re.S)
_EXERCISE = re.compile(r"\{exercise\}.*?:label:\s*(ex-[\w-]+)", re.S)
_CHECK = re.compile(r"""exercises\.check\(\s*["'](\w+)["']\s*,\s*(\w+)""")

NOTE = (
    "**Student edition.** The solutions are removed. Each exercise that asks you to write a function "
    "has a cell that raises `NotImplementedError`: replace that line with your code, run the cell, "
    "and run the check cell after it. Until then the checker says *not attempted yet* and the rest "
    "of the notebook still runs."
)


def _write_notebook(notebook, path: Path) -> None:
    write_atomic(path, nbformat.writes(notebook))


def _copy_tree(source: Path, target: Path) -> None:
    """Copy a folder into place through a temporary folder beside the target."""
    temporary = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    shutil.rmtree(temporary, ignore_errors=True)
    shutil.copytree(source, temporary)
    shutil.rmtree(target, ignore_errors=True)
    os.replace(temporary, target)


def _function_parts(node, lines):
    """(header lines up to the docstring, indent, body start line, body end line) of a function node."""
    first_body = node.body[0]
    has_doc = isinstance(first_body, ast.Expr) and isinstance(getattr(first_body, "value", None), ast.Constant)
    has_doc = has_doc and isinstance(first_body.value.value, str)
    keep_until = first_body.end_lineno if has_doc else first_body.lineno - 1
    start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
    header = "\n".join(lines[start - 1 : keep_until])
    return header, " " * first_body.col_offset, keep_until, node.end_lineno


def stub_source(source: str, label: str) -> str:
    """The stub of a solution cell: every top-level function keeps its signature and docstring;
    its body becomes a ``NotImplementedError`` naming the exercise; other statements are dropped."""
    tree = ast.parse(source)
    lines = source.splitlines()
    stubs = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        header, indent, _, _ = _function_parts(node, lines)
        message = f"Exercise {label}: write {node.name} here"
        stubs.append(f'{header}\n{indent}raise NotImplementedError("{message}")')
    if not stubs:
        return f'# Exercise {label}: write your code here\nraise NotImplementedError("Exercise {label}")'
    return "\n\n\n".join(stubs) + "\n"


def _label_from_tags(cell) -> str | None:
    for tag in cell.metadata.get("tags", []):
        if tag.startswith("exercise:"):
            return tag.split(":", 1)[1]
    return None


def _walk(notebook):
    """Yield (role, cell, label) for each cell: "solution-prose", "solution-code", "exercise", "check", "other"."""
    inside: str | None = None  # the label of the open solution block
    last_exercise: str | None = None
    for cell in notebook.cells:
        source = cell.source
        if cell.cell_type == "markdown":
            start, end = _START.search(source), _END.search(source)
            if start:
                inside = start.group(1)
            if inside is not None or start:
                if end:
                    inside = None
                yield "solution-prose", cell, inside
                continue
            found = _EXERCISE.search(source)
            if found:
                last_exercise = found.group(1)
                yield "exercise", cell, last_exercise
                continue
            yield "other", cell, None
            continue
        if "solution" in cell.metadata.get("tags", []):
            yield "solution-code", cell, inside or _label_from_tags(cell) or last_exercise or "exercise"
            continue
        if inside is not None:
            yield "solution-prose", cell, inside  # code that demonstrates a solution goes with it
            continue
        if _CHECK.search(source):
            yield "check", cell, last_exercise
            continue
        yield "other", cell, None


def _markdown(cell, source=None):
    return nbformat.v4.new_markdown_cell(cell.source if source is None else source, metadata=dict(cell.metadata))


def _code(cell, source=None):
    return nbformat.v4.new_code_cell(cell.source if source is None else source, metadata=dict(cell.metadata))


def _unfolded(cell):
    """``cell`` opened in JupyterLab: a solution's stub is where the student writes, so it must not
    open folded as the solution did (``metadata.jupyter``, see :mod:`posenc.course.folding`)."""
    folds = ("source_hidden", "outputs_hidden")
    jupyter = {k: v for k, v in cell.metadata.get("jupyter", {}).items() if k not in folds}
    if jupyter:
        cell.metadata["jupyter"] = jupyter
    else:
        cell.metadata.pop("jupyter", None)
    return cell


def _with_note(notebook, cells, note: str):
    result = nbformat.v4.new_notebook(metadata=notebook.metadata)
    first_heading = next((i for i, c in enumerate(cells) if c.cell_type == "markdown"), 0)
    cells.insert(first_heading + 1, nbformat.v4.new_markdown_cell(note))
    result.cells = cells
    return result


def student_notebook(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``notebook`` with its solutions removed and its solution cells stubbed."""
    cells = []
    for role, cell, label in _walk(notebook):
        if role == "solution-prose":
            continue
        if role == "solution-code":
            stub = _unfolded(_code(cell, stub_source(cell.source, label)))
            stub.metadata["tags"] = [t for t in cell.metadata.get("tags", []) if t != "solution"] + ["student-stub"]
            cells.append(stub)
        elif cell.cell_type == "markdown":
            source = _BLOCK.sub("", cell.source)
            if source.strip():
                cells.append(_markdown(cell, source))
        else:
            cells.append(_code(cell))
    return _with_note(notebook, cells, NOTE)


def _activities():
    """Every exercise's points and rubric; imported on first use, so the student edition and
    the fold command start without the checkers (and torch)."""
    from .coursework import ACTIVITIES

    return ACTIVITIES


def _teacher_note(label: str) -> str:
    activity = _activities().get(label)
    if activity is None:
        return (
            f"**Teacher's note ({label}):** not in its chapter's CHAPTER_ACTIVITIES (posenc.course.coursework.ch"
            f"{label[5:7]}); give it points and a rubric there."
        )
    head = f"**Teacher's note: {activity.kind}, {activity.points} points, about {activity.minutes} minutes.**"
    if activity.check:
        return (
            f'{head} Graded by the checker `exercises.check("{activity.check}", ...)` on the public and the '
            "hidden cases of the course seed: all points when it passes, none otherwise."
        )
    items = "\n".join(f"- ({activity.points / len(activity.rubric):.3g} pt) {item}" for item in activity.rubric)
    return f"{head} Rubric (the model answer is the solution below):\n\n{items}"


def teacher_notebook(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``notebook`` with its solutions, and each exercise's points, time and rubric under it."""
    cells = []
    for role, cell, label in _walk(notebook):
        cells.append(_markdown(cell) if cell.cell_type == "markdown" else _code(cell))
        if role == "exercise":
            cells.append(nbformat.v4.new_markdown_cell(_teacher_note(label), metadata={"tags": ["teacher-note"]}))
    return _with_note(notebook, cells, "**Teacher edition.** Solutions, points, times and rubrics; do not hand out.")


def _nbgrader(grade_id: str, *, solution: bool, grade: bool, points: float | None = None, locked: bool = False):
    meta = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if grade:
        meta["points"] = points
    return meta


def _solution_regions(source: str) -> str:
    """Each top-level function keeps its signature and docstring; its body is wrapped in solution markers."""
    tree = ast.parse(source)
    lines = source.splitlines()
    parts = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        header, indent, body_from, body_to = _function_parts(node, lines)
        body = "\n".join(lines[body_from:body_to])
        parts.append(f"{header}\n{indent}### BEGIN SOLUTION\n{body}\n{indent}### END SOLUTION")
    if not parts:
        return f"### BEGIN SOLUTION\n{source}\n### END SOLUTION"
    return "\n\n\n".join(parts) + "\n"


def nbgrader_notebook(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The nbgrader source version of ``notebook``: only marked solution regions carry solutions."""
    cells = []
    for role, cell, label in _walk(notebook):
        if role == "solution-prose":
            continue
        if role == "solution-code":
            new = _unfolded(_code(cell, _solution_regions(cell.source)))
            new.metadata["nbgrader"] = _nbgrader(f"{label}-solution", solution=True, grade=False)
            cells.append(new)
        elif role == "check":
            name, function = _CHECK.search(cell.source).groups()
            points = _activities()[label].points if label in _activities() else 1
            source = f'result = exercises.check("{name}", {function})\nprint(result)\nassert result.passed'
            new = _code(cell, source)
            new.metadata["nbgrader"] = _nbgrader(
                f"{label}-check", solution=False, grade=True, points=points, locked=True
            )
            cells.append(new)
        elif cell.cell_type == "markdown":
            source = _BLOCK.sub("", cell.source)
            if source.strip():
                cells.append(_markdown(cell, source))
            activity = _activities().get(label) if role == "exercise" else None
            if activity is not None and activity.check is None:
                answer = nbformat.v4.new_markdown_cell("YOUR ANSWER HERE")
                answer.metadata["nbgrader"] = _nbgrader(
                    f"{label}-answer", solution=True, grade=True, points=activity.points
                )
                cells.append(answer)
        else:
            cells.append(_code(cell))
    result = nbformat.v4.new_notebook(metadata=notebook.metadata)
    result.cells = cells
    return result


def notebook_paths(source: Path) -> list[Path]:
    """The notebooks ``source`` names: itself if it is a ``.ipynb`` file, else the ``*.ipynb`` in the folder.

    Raises ``FileNotFoundError`` for a path that does not exist and ``ValueError`` for one that is
    neither a notebook nor a folder.
    """
    source = Path(source)
    if not source.exists():
        raise FileNotFoundError(f"{source} does not exist")
    if source.is_dir():
        return sorted(source.glob("*.ipynb"))
    if source.suffix != ".ipynb":
        raise ValueError(f"{source} is not a notebook (.ipynb) or a folder of notebooks")
    return [source]


def _read(path: Path):
    try:
        return nbformat.read(path, as_version=4)
    except Exception as error:  # nbformat raises several kinds for a file that is not a notebook
        raise ValueError(f"{path} is not a readable notebook ({type(error).__name__}: {error})") from None


def _rewrite_images(notebook) -> bool:
    """Point ``../images/`` links at ``images/`` (the edition carries its own copy); True if any."""
    found = False
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and "../images/" in cell.source:
            cell.source = cell.source.replace("../images/", "images/")
            found = True
    return found


def _write_edition(source: Path, output_dir: Path, transform) -> list[Path]:
    paths = notebook_paths(source)
    folder = Path(source) if Path(source).is_dir() else Path(source).parent
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    written, images, data = [], False, False
    for path in paths:
        notebook = _read(path)
        data = data or any("data/" in cell.source for cell in notebook.cells)
        result = transform(notebook)
        images = _rewrite_images(result) or images
        target = output_dir / path.name
        _write_notebook(result, target)
        written.append(target)
    if data and (folder / "data").is_dir():
        _copy_tree(folder / "data", output_dir / "data")
    if images and (folder.parent / "images").is_dir():
        _copy_tree(folder.parent / "images", output_dir / "images")
    return written


def write_student_edition(source: Path, output_dir: Path) -> list[Path]:
    """Write the student edition of a notebook, or of every ``*.ipynb`` in a folder, to ``output_dir``.

    What the notebooks read comes along (``data/``, ``images/``), so the edition runs from
    ``output_dir``. Returns the notebooks written.
    """
    return _write_edition(source, output_dir, student_notebook)


def write_teacher_edition(source: Path, output_dir: Path) -> list[Path]:
    """Write the teacher edition (solutions, points, times, rubrics) and ``points.md`` to ``output_dir``."""
    written = _write_edition(source, output_dir, teacher_notebook)
    rows = ["| Exercise | Kind | Points | Minutes | Graded by |", "|---|---|---|---|---|"]
    for activity in _activities().values():
        how = f"checker `{activity.check}`" if activity.check else "rubric"
        rows.append(f"| {activity.label} | {activity.kind} | {activity.points} | {activity.minutes} | {how} |")
    write_atomic(Path(output_dir) / "points.md", "# Points and times\n\n" + "\n".join(rows) + "\n")
    return written


def write_nbgrader_source(source: Path, output_dir: Path) -> list[Path]:
    """Write the nbgrader source version of the notebooks to ``output_dir`` (e.g. ``source/<assignment>/``)."""
    return _write_edition(source, output_dir, nbgrader_notebook)


#: The first line of the nbgrader grading config this command writes (it rewrites only such a file).
NBGRADER_CONFIG_MARK = "# Written by `python -m posenc.course nbgrader`"


def nbgrader_config_path(output_dir: Path) -> Path:
    """Where the grading config goes: the course's root folder (above ``source/``), never inside a folder
    nbgrader releases to students."""
    output_dir = Path(output_dir).resolve()
    for folder in (output_dir, *output_dir.parents):
        if folder.name == "source":
            return folder.parent / "posenc_grading.py"
    return output_dir.parent / "posenc_grading.py"


def check_nbgrader_config(path: Path) -> Path:
    """``path`` as a ``Path``; ``FileExistsError`` if a file there was not written by this command."""
    path = Path(path)
    if path.exists() and not path.read_text(encoding="utf-8", errors="replace").startswith(NBGRADER_CONFIG_MARK):
        raise FileExistsError(f"{path} exists and was not written by this command: choose another --config")
    return path


def nbgrader_config_seed(path: Path) -> int | None:
    """The course seed of an earlier grading config this command wrote at ``path``, or None."""
    path = check_nbgrader_config(path)
    if not path.exists():
        return None
    found = re.search(r"^c\.SealedChecks\.course_seed = (\d+)$", path.read_text(encoding="utf-8"), re.M)
    return int(found.group(1)) if found else None


def write_nbgrader_config(path: Path, seed: int) -> Path:
    """Write the grading config that makes ``nbgrader autograde`` grade sealed, with the course seed.

    Load it from ``nbgrader_config.py`` with ``load_subconfig("posenc_grading.py")``. A file at ``path``
    that this command did not write is never overwritten (``FileExistsError``)."""
    path = check_nbgrader_config(path)
    text = (
        f"{NBGRADER_CONFIG_MARK}: grade the implementation exercises with posenc's\n"
        "# sealed grader. It holds the course seed: keep it on the grading machine, out of source/ and release/.\n"
        "# In nbgrader_config.py: load_subconfig(\"posenc_grading.py\")\n"
        "from posenc.course.nbgrader_plugin import autograde_preprocessors\n\n"
        "c = get_config()  # noqa: F821 (traitlets config files provide it)\n"
        "# nbgrader's Execute is replaced: no student code runs in a kernel on this machine\n"
        "c.Autograde.autograde_preprocessors = autograde_preprocessors()\n"
        f"c.SealedChecks.course_seed = {int(seed)}\n"
    )
    write_atomic(path, text)
    return path


def write_site_source(book_root: Path, output_dir: Path) -> Path:
    """A copy of the book at ``book_root`` whose chapter notebooks are the student edition.

    ``jupyter-book build output_dir`` then builds the website without solutions.
    """
    book_root, output_dir = Path(book_root), Path(output_dir)
    if not (book_root / "_toc.yml").is_file():
        raise FileNotFoundError(f"{book_root} is not a book (no _toc.yml)")
    skip = {".git", ".venv", ".venv-lab", "_build", "src", "tests", "benchmarks", ".pytest_cache", ".hypothesis"}
    output_dir.mkdir(parents=True, exist_ok=True)
    for item in book_root.iterdir():
        if item.name in skip or item.name.startswith(".") or item.resolve() == output_dir.resolve():
            continue
        target = output_dir / item.name
        if item.is_dir():
            _copy_tree(item, target)
        else:
            shutil.copy2(item, target)
    for path in (book_root / "chapters").glob("*.ipynb"):
        _write_notebook(student_notebook(_read(path)), output_dir / "chapters" / path.name)
    for path in output_dir.rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        if TEACHER_ONLY.search(text):
            path.write_text(without_teacher_only(text), encoding="utf-8")
    config = output_dir / "_config.yml"
    text = config.read_text(encoding="utf-8")
    if "\n  config:\n" not in text:
        raise ValueError(f"{config}: no `sphinx: config:` section to switch the answer forms off in")
    # no prediction's answer form: its key would be in the page
    text = text.replace("\n  config:\n", "\n  config:\n    posenc_answer_forms: false\n", 1)
    config.write_text(text, encoding="utf-8")
    return output_dir


#: A part of a page that quotes an exercise's solution (the corrections page's entries about solutions):
#: ``<!-- teacher-only: why -->`` ... ``<!-- /teacher-only -->``, left out of the student website.
TEACHER_ONLY = re.compile(r"^<!-- teacher-only:.*?-->\n.*?^<!-- /teacher-only -->\n?", re.S | re.M)


def without_teacher_only(text: str) -> str:
    """``text`` without its teacher-only parts, and a line that says where they are, once."""
    note = (
        "Corrections that quote an exercise's solution are in the teacher edition "
        "(`make teacher`, or the book's own website).\n"
    )
    stripped = TEACHER_ONLY.sub("", text)
    return stripped if note in stripped else stripped.rstrip("\n") + "\n\n" + note
