"""The student edition: solutions gone, stubs that still run, every student notebook executes."""

import ast
import subprocess
import sys

import nbformat
import pytest
from chapter_runs import student_run

from posenc.course.editions import stub_source, student_notebook

from conftest import ROOT, chapter_notebooks

CHAPTERS = chapter_notebooks()
STEMS = [p.stem for p in CHAPTERS]


def test_stub_keeps_signature_and_docstring_and_raises():
    source = '''import numpy as np

@staticmethod
def my_table(n, d, base=10000.0):
    """Return the table."""
    angles = np.arange(n)[:, None] / base
    return np.sin(angles)

HELPER = 3
'''
    stub = stub_source(source, "ex-demo")
    assert "def my_table(n, d, base=10000.0):" in stub and '"""Return the table."""' in stub
    assert "@staticmethod" in stub
    assert "np.sin" not in stub and "HELPER" not in stub and "import numpy" not in stub
    assert 'raise NotImplementedError("Exercise ex-demo: write my_table here")' in stub
    namespace = {}
    exec(stub, namespace)  # the stub is valid Python
    with pytest.raises(NotImplementedError, match="ex-demo"):
        namespace["my_table"].__func__(1, 2)


def test_stub_without_a_function_still_raises():
    assert "raise NotImplementedError" in stub_source("x = 1 + 1", "ex-demo")
    ast.parse(stub_source("x = 1", "ex-demo"))


def make_notebook():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        md("# Title"),
        md("```{exercise} Write it\n:label: ex-a\nWrite `f`.\n```"),
        md("```{solution-start} ex-a\n:class: dropdown\n```"),
        code("def f(x):\n    'Double x.'\n    return 2 * x  # SECRET-A", metadata={"tags": ["solution"]}),
        md("Why it works: SECRET-PROSE"),
        code("print(f(2))  # SECRET-DEMO"),
        md("```{solution-end}\n```"),
        code("print('check', f)"),
        md("Intro text.\n\n```{solution} ex-b\n:class: dropdown\nSECRET-INLINE\n```\n\nAfter."),
        md("```{solution} ex-c\nSECRET-ONLY\n```"),
    ]
    return nb


def test_student_notebook_removes_solutions_and_stubs_code():
    student = student_notebook(make_notebook())
    text = "\n".join(cell.source for cell in student.cells)
    for secret in ("SECRET-A", "SECRET-PROSE", "SECRET-DEMO", "SECRET-INLINE", "SECRET-ONLY", "{solution"):
        assert secret not in text
    assert "Intro text." in text and "After." in text and "print('check', f)" in text
    stubs = [c for c in student.cells if "student-stub" in c.metadata.get("tags", [])]
    assert len(stubs) == 1 and "Exercise ex-a" in stubs[0].source
    assert "Student edition" in student.cells[1].source
    assert all(not c.get("outputs") for c in student.cells if c.cell_type == "code")


def solution_lines(notebook):
    """The body lines of every solution cell (not signatures, docstrings, comments or blank lines)."""
    lines = set()
    for cell in notebook.cells:
        if cell.cell_type == "code" and "solution" in cell.metadata.get("tags", []):
            tree = ast.parse(cell.source)
            source_lines = cell.source.splitlines()
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef):
                    body = node.body[1:] if ast.get_docstring(node) else node.body
                    for statement in body:
                        for n in range(statement.lineno, statement.end_lineno + 1):
                            line = source_lines[n - 1].strip()
                            if line and not line.startswith("#"):
                                lines.add(line)
    return lines - public_lines(notebook)


def public_lines(notebook):
    """Lines that the chapter also shows outside its solutions (a solution may repeat a line of the text)."""
    from posenc.course.editions import _walk

    return {
        line.strip()
        for role, cell, _ in _walk(notebook)
        if role not in ("solution-code", "solution-prose")
        for line in cell.source.splitlines()
    }


@pytest.mark.parametrize("path", CHAPTERS, ids=STEMS)
def test_no_solution_code_survives(path, student_edition):
    book = nbformat.read(path, as_version=4)
    student = nbformat.read(student_edition / path.name, as_version=4)
    text = "\n".join(cell.source for cell in student.cells)
    for line in solution_lines(book):
        assert line not in text, f"{path.name}: solution line survives: {line}"
    assert "{solution" not in text


@pytest.mark.parametrize("chapter", STEMS)
def test_student_notebook_runs_top_to_bottom(chapter, student_edition):
    # one run per chapter, from the edition's own folder as a student runs it (data/ and images/ must be
    # there), shared with the checks of tests/test_glue_in_kernel.py and tests/test_explorer_titles.py
    run = student_run(student_edition, chapter)
    assert run.outputs.count("Not attempted yet") >= run.stubs


def test_the_edition_carries_what_the_notebooks_read(student_edition):
    assert (student_edition / "data" / "lab_results.json").is_file()
    assert (student_edition / "images").is_dir()
    rope = nbformat.read(student_edition / "08_rope.ipynb", as_version=4)
    text = "\n".join(cell.source for cell in rope.cells)
    assert "../images/" not in text and "images/rope_rotation.svg" in text


def test_one_chapter_can_be_handed_out(tmp_path):
    chapter = str(ROOT / "chapters" / "08_rope.ipynb")
    command = [sys.executable, "-m", "posenc.course", "student", chapter, str(tmp_path / "out")]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["08_rope.ipynb", "images"]
    assert not list((tmp_path / "out").glob(".*"))  # no temporary file left behind


@pytest.mark.parametrize("argument", ["missing.ipynb", "README.md", "not-there/"])
def test_a_bad_path_is_one_line_on_stderr(argument, tmp_path, capsys, monkeypatch):
    from posenc.course.__main__ import main

    monkeypatch.chdir(ROOT)
    assert main(["student", argument, str(tmp_path / "out")]) == 1
    stderr = capsys.readouterr().err
    assert "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1 and argument.rstrip("/") in stderr
    with pytest.raises(SystemExit) as too_many:
        main(["student", "a", "b", "c"])
    assert too_many.value.code == 2 and "usage" in capsys.readouterr().err


def test_the_command_line_answers_a_bad_path_without_a_traceback(tmp_path):
    # the same through a real `python -m posenc.course` process: exit status 1, one line, no traceback
    command = [sys.executable, "-m", "posenc.course", "student", "missing.ipynb", str(tmp_path / "out")]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [result.stderr.strip()] and "missing.ipynb" in result.stderr


def _release(notebook):
    """What nbgrader's release (ClearSolutions) makes of a source notebook, re-implemented for the test."""
    cells = []
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        source = cell.source
        if meta.get("solution"):
            if cell.cell_type == "code":
                out, inside = [], False
                for line in source.splitlines():
                    if "### BEGIN SOLUTION" in line:
                        inside = True
                        indent = line[: len(line) - len(line.lstrip())]
                        out += [f"{indent}# YOUR CODE HERE", f"{indent}raise NotImplementedError()"]
                    elif "### END SOLUTION" in line:
                        inside = False
                    elif not inside:
                        out.append(line)
                source = "\n".join(out)
            else:
                source = "YOUR ANSWER HERE"
        cells.append(source)
    return "\n".join(cells)


@pytest.mark.parametrize("path", CHAPTERS, ids=STEMS)
def test_the_nbgrader_export_leaks_no_solution(path):
    from posenc.course.editions import nbgrader_notebook

    book = nbformat.read(path, as_version=4)
    source = nbgrader_notebook(book)
    released = _release(source)
    for line in solution_lines(book):
        assert line not in released, f"{path.name}: solution line survives: {line}"
    assert "{solution" not in released
    # every solution line of the book that is in the source version sits inside a marked region
    ids = [c.metadata["nbgrader"]["grade_id"] for c in source.cells if "nbgrader" in c.metadata]
    assert len(ids) == len(set(ids))
    for cell in source.cells:
        meta = cell.metadata.get("nbgrader")
        if "### BEGIN SOLUTION" in cell.source:
            assert meta and meta["solution"] and cell.cell_type == "code"
        if meta and meta["grade"]:
            assert meta["points"] > 0
    for cell in book.cells:  # the prose of every solution is gone from the source version too
        if cell.cell_type == "markdown" and "{solution-start}" in cell.source:
            assert cell.source not in [c.source for c in source.cells]


def test_the_teacher_edition_has_points_and_rubrics(tmp_path):
    from posenc.course.editions import write_teacher_edition

    write_teacher_edition(ROOT / "chapters" / "05_similarity_matrices.ipynb", tmp_path)
    notebook = nbformat.read(tmp_path / "05_similarity_matrices.ipynb", as_version=4)
    notes = [c.source for c in notebook.cells if "teacher-note" in c.metadata.get("tags", [])]
    assert len(notes) == 3 and "4 points" in notes[0] and "Rubric" in notes[1]
    assert "def my_similarity_by_offset" in "\n".join(c.source for c in notebook.cells)
    assert "| ex-ch05-one-pair | prediction | 2 |" in (tmp_path / "points.md").read_text()
