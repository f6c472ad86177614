"""The Otter-Grader export: ``python -m posenc.course otter SOURCE OUT --course-seed N``.

For a course on Gradescope, whose autograders Otter-Grader builds. Each chapter with
implementation exercises becomes a *master notebook* in Otter Assign's notebook format (raw
boundary cells, the format of Otter-Grader 3 to 7; checked with ``otter assign`` and
``otter run`` of Otter-Grader 7.0.0), in a folder of its own::

    OUT/08_rope/08_rope.ipynb       the master notebook: the chapter with its questions
    OUT/08_rope/requirements.txt    the grading image's requirements (torch==2.13.0, posenc)
    OUT/08_rope/images/, data/      what the notebook shows or reads, listed in ``files:``

``otter assign OUT/08_rope/08_rope.ipynb dist/08_rope`` then writes the student notebook and
the autograder zip for Gradescope. In the master notebook:

* a raw ``# ASSIGNMENT CONFIG`` cell first: the assignment's name, ``requirements.txt``,
  exception-based tests (``tests: ok_format: false``), no PDF in the submission (every
  question is autograded), Python 3.11 (the version the book is tested with), and the sealed
  grader's plugin (:mod:`posenc.course.otter_plugin`) with the course seed and the exercises:
  it grades every question from the submission's source in a process the student's code
  cannot reach, on the public and the hidden cases, and no student code runs in Otter's kernel;
* each implementation exercise is a question (raw ``# BEGIN QUESTION`` with ``name`` = the
  checker's name, ``points`` from the chapter's ``CHAPTER_ACTIVITIES``, ``all_or_nothing: true``,
  as the checker gives all points or none): the task's text; the solution cell, whose
  function keeps its signature and docstring while its body sits between
  ``# BEGIN SOLUTION NO PROMPT`` and ``# END SOLUTION``, followed by the prompt the student
  gets instead (the student edition's ``raise NotImplementedError(...)``); a test that calls
  the checker, ``exercises.check(name, function)``, for the student's own ``grader.check``
  while working (the public cases); the grade comes from the plugin. The chapter's own check
  cell is replaced by Otter's;
* the solutions' prose and demonstrations are left out altogether (as in the nbgrader
  export), and the other exercises stay as prompts, graded by hand with the teacher edition.

The course seed is written only into the assignment config, which Otter keeps out of the student
notebook (it goes into the autograder zip's ``otter_config.json``): keep the master notebooks and
the autograder zip to yourself. Without ``--course-seed`` a new seed is drawn and recorded in the
export's manifest (an update of an earlier export keeps its seed). ``OUT`` must be new,
empty, or an earlier export of this command (it carries ``.posenc-otter.json``, the list of
the files it wrote); nothing else is ever overwritten. The export is written into a folder
beside ``OUT`` and moved into place, file by file.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import secrets
import shutil
from pathlib import Path

import nbformat

from .. import __version__
from .coursework import ACTIVITIES
from .editions import _BLOCK, _CHECK, _function_parts, _read, _walk, notebook_paths, stub_source
from .engine import course_seed

__all__ = ["otter_notebook", "otter_solution_source", "write_otter_source"]

#: The file that marks a folder as this command's export, with the files it wrote.
MANIFEST = ".posenc-otter.json"
#: The torch the book is tested with (requirements.txt): installs from a CPU wheel.
TORCH = "torch==2.13.0"
_PYTHON = "3.11"
_IMAGES = re.compile(r"\.\./images/([\w.-]+)")


def _raw(text: str):
    return nbformat.v4.new_raw_cell(text)


def otter_solution_source(source: str, label: str) -> str:
    """A solution cell in Otter's solution syntax: each top-level function keeps its signature and
    docstring, its body becomes a ``# BEGIN SOLUTION NO PROMPT`` region followed by a prompt that
    raises ``NotImplementedError`` (the student edition's stub); any other statement is a region
    with no prompt. Raises ``ValueError`` for a function whose body shares the ``def`` line."""
    tree = ast.parse(source)
    lines = source.splitlines()
    out: list[str] = []
    done = 0  # lines of the source written so far
    for node in tree.body:
        start = node.decorator_list[0].lineno if getattr(node, "decorator_list", None) else node.lineno
        out += lines[done : start - 1]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.body[0].lineno == node.lineno:
                raise ValueError(f"{label}: put the body of {node.name} on its own lines, below the def")
            header, indent, body_from, body_to = _function_parts(node, lines)
            message = f"Exercise {label}: write {node.name} here"
            out += [
                header,
                f"{indent}# BEGIN SOLUTION NO PROMPT",
                *lines[body_from:body_to],
                f"{indent}# END SOLUTION",
                f'{indent}""" # BEGIN PROMPT',
                f'{indent}raise NotImplementedError("{message}")',
                f'{indent}"""; # END PROMPT',
            ]
        else:
            out += ["# BEGIN SOLUTION NO PROMPT", *lines[start - 1 : node.end_lineno], "# END SOLUTION"]
        done = node.end_lineno
    out += lines[done:]
    return "\n".join(out).rstrip("\n") + "\n"


def _test_cell(name: str, function: str) -> str:
    """An exception-based Otter test for the student's ``grader.check``: posenc's checker on the public cases."""
    return (
        f'""" # BEGIN TEST CONFIG\nname: {name}-public\n""" # END TEST CONFIG\n'
        f"def test_{name}_public({function}):\n"
        f"    from posenc import exercises\n\n"
        f'    result = exercises.check("{name}", {function}, quiet=True)\n'
        f"    assert result.passed, str(result)\n\n"
        f"test_{name}_public({function})\n"
    )


def _question(activity, prompt, solutions, seed: int) -> list:
    exercise = activity.exercise
    config = f"# BEGIN QUESTION\nname: {activity.check}\npoints: {activity.points}\nall_or_nothing: true"
    cells = [_raw(config), nbformat.v4.new_markdown_cell(_BLOCK.sub("", prompt.source)), _raw("# BEGIN SOLUTION")]
    cells += [nbformat.v4.new_code_cell(otter_solution_source(c.source, activity.label)) for c in solutions]
    cells += [_raw("# END SOLUTION"), _raw("# BEGIN TESTS")]
    # the student's own check (public cases): the grade itself comes from the sealed grader's plugin
    cells += [nbformat.v4.new_code_cell(_test_cell(exercise.name, exercise.function_name))]
    cells += [_raw("# END TESTS"), _raw("# END QUESTION")]
    return cells


def _quoted(text: str) -> str:
    return json.dumps(text)  # a JSON string is a YAML double-quoted scalar


#: The Otter plugin that grades the questions sealed (posenc.course.otter_plugin).
PLUGIN = "posenc.course.otter_plugin.SealedGrades"


def _assignment_config(name: str, files: list[str], seed: int, exercises: list[str]) -> str:
    """The ``# ASSIGNMENT CONFIG`` cell's YAML: the sealed grader's plugin carries the course seed, which
    Otter writes only into the autograder zip's ``otter_config.json``."""
    lines = [
        "# ASSIGNMENT CONFIG",
        "# Written by `python -m posenc.course otter`: the implementation exercises, graded by posenc's checkers.",
        f"name: {_quoted(name)}",
        'requirements: "requirements.txt"',
        f"python_version: {_quoted(_PYTHON)}",
        "tests:",
        "  ok_format: false",
        "export_cell:",
        "  pdf: false",
    ]
    if files:
        lines += ["files:", *(f"  - {_quoted(f)}" for f in files)]
    lines += ["plugins:", f"  - {PLUGIN}:", f"      course_seed: {int(seed)}", "      exercises:"]
    lines += [f"        - {_quoted(e)}" for e in exercises]
    return "\n".join(lines)


def otter_notebook(
    notebook: nbformat.NotebookNode, *, seed: int, name: str = "assignment", files: tuple[str, ...] = ()
) -> nbformat.NotebookNode:
    """The Otter Assign master notebook of a chapter (see the module's docstring).

    ``seed`` is the course seed of the hidden tests; ``name`` the assignment's name; ``files`` what
    the notebook reads, relative to it (the config's ``files:``). Raises
    ``ValueError`` for a notebook without implementation exercises, or one whose implementation
    exercise is not its task, its solution cell and its check cell in that order.
    """
    seed = course_seed(seed)
    if seed is None:
        raise ValueError("the Otter export needs a course seed for its hidden tests (--course-seed N)")
    cells, open_question, solutions, questions, exercises = [], None, [], 0, []
    for role, cell, label in _walk(notebook):
        if open_question is not None:
            activity, prompt = open_question
            if role == "solution-prose":
                continue
            if role == "solution-code" and label == activity.label:
                solutions.append(cell)
                continue
            if role == "check" and _CHECK.search(cell.source).group(1) == activity.check and solutions:
                cells += _question(activity, prompt, solutions, seed)
                exercises.append(activity.check)
                open_question, solutions, questions = None, [], questions + 1
                continue
            raise ValueError(
                f"{activity.label}: expected its solution cell, then its check cell "
                f'exercises.check("{activity.check}", ...); found a {cell.cell_type} cell: {cell.source[:60]!r}'
            )
        activity = ACTIVITIES.get(label) if role == "exercise" else None
        if activity is not None and activity.check:
            open_question = (activity, cell)
        elif role == "solution-prose":
            continue
        elif role == "solution-code":  # a solution outside an implementation exercise: released as a stub
            cells.append(nbformat.v4.new_code_cell(stub_source(cell.source, label)))
        elif cell.cell_type == "markdown":
            source = _BLOCK.sub("", cell.source)
            if source.strip():
                cells.append(nbformat.v4.new_markdown_cell(source, metadata=dict(cell.metadata)))
        else:
            cells.append(nbformat.v4.new_code_cell(cell.source, metadata=dict(cell.metadata)))
    if open_question is not None:
        raise ValueError(f"{open_question[0].label}: no check cell after its solution")
    if not questions:
        raise ValueError("the notebook has no implementation exercise (none of its exercises has a checker)")
    result = nbformat.v4.new_notebook(metadata=notebook.metadata)
    result.cells = [_raw(_assignment_config(name, list(files), seed, exercises)), *cells]
    return result


def _requirements(posenc: str) -> str:
    return (
        "# The grading image's requirements (Otter adds otter-grader itself; comment lines are skipped).\n"
        "# torch is pinned exactly and comes before posenc, as in the book's requirements.txt: the book is\n"
        "# tested with torch 2.13.0 on the CPU, and installing posenc must never pull another torch build.\n"
        "# posenc is not on PyPI: replace the last line with where the image can get it (e.g.\n"
        '# "posenc[book] @ git+https://..." for the book\'s repository), or use --posenc.\n'
        f"{TORCH}\n{posenc}\n"
    )


def _local_files(notebook, folder: Path) -> dict[str, Path]:
    """Point the notebook's ``../images/`` links at ``images/`` (in place) and return what it shows or
    reads: ``images/X`` for each such link, ``data/X`` for each file under ``folder/data`` whose name
    a code cell holds."""
    files = {}
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            for image in _IMAGES.findall(cell.source):
                if (folder.parent / "images" / image).is_file():
                    files[f"images/{image}"] = folder.parent / "images" / image
            cell.source = cell.source.replace("../images/", "images/")
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    if (folder / "data").is_dir():
        for path in sorted((folder / "data").rglob("*")):
            if path.is_file() and path.name in code:
                files[f"data/{path.relative_to(folder / 'data').as_posix()}"] = path
    return files


def _check_output(output_dir: Path) -> set[str]:
    """The files an earlier export wrote into ``output_dir`` (empty if it is new or empty); raises
    ``FileExistsError`` if it holds anything else."""
    if not output_dir.exists():
        return set()
    if not output_dir.is_dir():
        raise NotADirectoryError(f"{output_dir} is not a folder")
    if not any(output_dir.iterdir()):
        return set()
    manifest = output_dir / MANIFEST
    try:
        return set(json.loads(manifest.read_text(encoding="utf-8"))["files"])
    except (OSError, ValueError, KeyError, TypeError):
        raise FileExistsError(
            f"{output_dir} is not empty and is not an earlier Otter export (no readable {MANIFEST}): "
            "choose a new or empty folder"
        ) from None


def write_otter_source(
    source: Path, output_dir: Path, *, seed: int | str | None = None, posenc: str | None = None
) -> list[Path]:
    """Write the Otter Assign master notebooks of a chapter notebook, or of every chapter in a folder
    that has implementation exercises, to ``output_dir/<chapter>/`` (see the module's docstring).

    ``seed`` is the course seed of the hidden tests (default ``POSENC_COURSE_SEED``; one is
    required); ``posenc`` the requirement line that installs posenc in the grading image
    (default ``posenc[book]==<this version>``). Returns the master notebooks written.
    """
    seed = course_seed(seed)
    output_dir = Path(output_dir)
    if seed is None and (output_dir / MANIFEST).is_file():  # an earlier export's seed stays
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            seed = course_seed(json.loads((output_dir / MANIFEST).read_text(encoding="utf-8"))["course seed"])
    if seed is None:
        seed = secrets.randbelow(2**31)
    posenc = f"posenc[book]=={__version__}" if posenc is None else posenc.strip()
    if "\n" in posenc or "posenc" not in posenc:
        raise ValueError(f"posenc must be one requirement line that installs posenc, got {posenc!r}")
    paths = notebook_paths(source)
    folder = Path(source) if Path(source).is_dir() else Path(source).parent
    output_dir = Path(output_dir)
    earlier = _check_output(output_dir)
    staged: dict[str, str | bytes | Path] = {}
    for path in paths:
        notebook = _read(path)
        labels = [label for role, _, label in _walk(notebook) if role == "exercise"]
        if not any(label in ACTIVITIES and ACTIVITIES[label].check for label in labels):
            continue
        files = _local_files(notebook, folder)
        try:
            master = otter_notebook(notebook, seed=seed, name=path.stem, files=tuple(sorted(files)))
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None
        staged[f"{path.stem}/{path.name}"] = nbformat.writes(master)
        staged[f"{path.stem}/requirements.txt"] = _requirements(posenc)
        staged.update({f"{path.stem}/{name}": file for name, file in files.items()})
    if not staged:
        raise ValueError(f"{source}: no notebook with an implementation exercise")
    manifest = {
        "written by": "python -m posenc.course otter",
        "posenc": __version__,
        "course seed": seed,
        "files": sorted(staged),
    }
    staged[MANIFEST] = json.dumps(manifest, indent=1) + "\n"
    _move_into_place(staged, output_dir, earlier)
    return [output_dir / name for name in staged if name.endswith(".ipynb")]


def _move_into_place(staged: dict, output_dir: Path, earlier: set[str]) -> None:
    """Write every file into a new folder beside ``output_dir``, then move it into place."""
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = output_dir.parent / f".{output_dir.name}.otter-{os.getpid()}-{secrets.token_hex(4)}"
    staging.mkdir()
    try:
        for name, content in staged.items():
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, Path):
                shutil.copyfile(content, target)
            elif isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
        if not output_dir.exists():
            os.replace(staging, output_dir)
            return
        for name in staged:  # an empty folder, or an earlier export whose files these replace
            target = output_dir / name
            if target.exists() and name not in earlier and name != MANIFEST:
                raise FileExistsError(f"{target} exists and was not written by an earlier Otter export")
        for name in staged:
            (output_dir / name).parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / name, output_dir / name)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
