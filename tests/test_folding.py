"""JupyterLab opens folded what the website hides: ``metadata.jupyter.source_hidden`` (and
``outputs_hidden``) kept in step with the cells' tags and the solutions (posenc.course.folding).

Fast: reads the notebooks, executes nothing. When a chapter is out of step, run
``python -m posenc.course fold chapters``: the test and the command ask one function
(``out_of_step``), so the command fixes whatever the test finds.
"""

import json
import subprocess
import sys

import nbformat
import pytest

from posenc.course.editions import nbgrader_notebook, student_notebook
from posenc.course.folding import (
    expected_folds,
    fold_files,
    fold_notebook,
    folds_of,
    layout_difference,
    mismatches,
    notebook_text,
    out_of_step,
)

from conftest import chapter_notebooks

CHAPTERS = chapter_notebooks()
FIX = "run `python -m posenc.course fold chapters`"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.name for p in CHAPTERS])
def test_every_chapter_is_as_the_fold_command_writes_it(path):
    """Every hidden cell opens folded and no other, in nbformat's JSON layout: what the fold command
    checks (``out_of_step``), so that the command never says "already in step" while this fails."""
    found = out_of_step(path)
    message = f"{path.name}: out of step with the tags, the solutions or the JSON layout ({FIX}):\n"
    assert not found, message + "\n".join(found)


def make_notebook():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        md("# Title"),  # 0 open
        code("import posenc", metadata={"tags": ["hide-input"]}),  # 1 source folded
        code("print(1)", metadata={"tags": ["hide-output"]}),  # 2 output folded
        code("x = 1", metadata={"tags": ["remove-cell"]}),  # 3 both
        code("y = 2", metadata={"tags": ["hide-cell"]}),  # 4 both
        code("z = 3"),  # 5 open
        md("```{exercise} Write it\n:label: ex-a\nWrite `f`.\n```"),  # 6 open
        md("```{solution-start} ex-a\n:class: dropdown\n```\nThe answer."),  # 7 folded
        code("def f(x):\n    return 2 * x", metadata={"tags": ["solution"]}),  # 8 both
        md("Why it works."),  # 9 folded: inside the solution
        code("print(f(2))"),  # 10 both: inside the solution
        md("```{solution-end}\n```"),  # 11 folded
        code("print('check', f)"),  # 12 open
        md("Intro.\n\n```{solution} ex-b\n:class: dropdown\nAnswer.\n```\n\nAfter."),  # 13 open: prose around it
        md("```{solution} ex-c\nAnswer.\n```"),  # 14 folded: nothing but the solution
    ]
    return notebook


SOURCE, BOTH = {"source_hidden": True}, {"source_hidden": True, "outputs_hidden": True}
OUTPUT = {"outputs_hidden": True}
EXPECTED = [{}, SOURCE, OUTPUT, BOTH, BOTH, {}, {}, SOURCE, BOTH, SOURCE, BOTH, SOURCE, {}, {}, SOURCE]


def test_folds_follow_the_tags_and_the_solution_markers():
    assert expected_folds(make_notebook()) == EXPECTED


def test_a_hidden_cell_without_the_metadata_and_an_open_cell_with_it_are_both_reported():
    notebook = nbformat.reads(fold_notebook(nbformat.writes(make_notebook())), as_version=4)
    assert mismatches(notebook) == []
    del notebook.cells[1].metadata["jupyter"]  # a hide-input cell that would open unfolded
    notebook.cells[5].metadata["jupyter"] = {"source_hidden": True}  # an ordinary cell folded
    notebook.cells[8].metadata["jupyter"] = {"source_hidden": True}  # a solution whose output would show
    found = mismatches(notebook)
    assert [line.split(" (")[0] for line in found] == ["cell 1", "cell 5", "cell 8"]
    assert "needs {'source_hidden': True}" in found[0] and "needs none" in found[1]


def test_folding_changes_only_the_fold_keys_and_keeps_other_jupyter_metadata():
    notebook = make_notebook()
    notebook.cells[5].metadata["jupyter"] = {"source_hidden": True, "other": 1}
    notebook.cells[12].metadata["jupyter"] = {"outputs_hidden": True}
    before = nbformat.writes(notebook)
    after = fold_notebook(before)
    assert fold_notebook(after) == after  # a second run changes nothing
    folded = json.loads(after)
    assert [folds_of(cell) for cell in folded["cells"]] == EXPECTED
    assert folded["cells"][5]["metadata"]["jupyter"] == {"other": 1}
    assert "jupyter" not in folded["cells"][12]["metadata"]
    original = json.loads(before)
    for cell in (*folded["cells"], *original["cells"]):  # all else is as it was
        jupyter = cell["metadata"].pop("jupyter", {})
        assert set(jupyter) <= {"source_hidden", "outputs_hidden", "other"}
    assert folded == original
    nbformat.validate(nbformat.reads(after, as_version=4))


def other_layouts(notebook) -> dict[str, str]:
    """``notebook`` as other tools write it: each differs from nbformat.write in its layout alone."""
    data = json.loads(nbformat.writes(notebook))
    return {
        "nbformat.writes, no final newline": nbformat.writes(notebook),
        "two-space indent": json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
        "\\u escapes": json.dumps(data, indent=1, sort_keys=True) + "\n",
        "unsorted keys": json.dumps(dict(reversed(data.items())), indent=1, ensure_ascii=False) + "\n",
        "sources as strings": json.dumps(
            {**data, "cells": [{**c, "source": "".join(c["source"])} for c in data["cells"]]},
            indent=1,
            sort_keys=True,
            ensure_ascii=False,
        )
        + "\n",
    }


def test_the_chapters_layout_is_what_nbformat_write_writes(tmp_path):
    notebook = nbformat.reads(fold_notebook(nbformat.writes(make_notebook())), as_version=4)
    notebook.cells[0].source = "# Title: θ, ≈ and — kept as themselves"
    path = tmp_path / "written.ipynb"
    nbformat.write(notebook, path)
    text = path.read_text(encoding="utf-8")
    assert notebook_text(json.loads(text)) == text and layout_difference(text) is None
    assert out_of_step(path) == []
    # line ends are the platform's (nbformat.write writes text; git may turn them either way)
    path.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    assert out_of_step(path) == []


@pytest.mark.parametrize("layout", list(other_layouts(make_notebook())))
def test_a_chapter_in_another_layout_is_out_of_step_and_the_command_rewrites_it(tmp_path, layout):
    """The disagreement of issue 42: a chapter written by a script or another editor had every fold
    in step, so the command said "already in step", while the test compared the file with what the
    command writes and failed. Now both ask ``out_of_step``: it finds the layout, the command
    rewrites it, and the content is unchanged."""
    notebook = nbformat.reads(fold_notebook(nbformat.writes(make_notebook())), as_version=4)
    notebook.cells[0].source = "# Title: θ ≈ 1"
    text = other_layouts(notebook)[layout]
    path = tmp_path / "chapter.ipynb"
    path.write_bytes(text.encode("utf-8"))
    assert mismatches(nbformat.reads(text, as_version=4)) == []  # every fold in step
    found = out_of_step(path)
    assert len(found) == 1 and found[0].startswith("JSON layout: "), found
    assert fold_files(tmp_path, check=True) == {path: found}
    assert path.read_text(encoding="utf-8") == text  # --check wrote nothing
    assert fold_files(tmp_path) == {path: found}
    written = path.read_text(encoding="utf-8")
    assert written == notebook_text(json.loads(text)) == fold_notebook(text)
    assert out_of_step(path) == [] and fold_files(tmp_path, check=True) == {}
    assert nbformat.reads(written, as_version=4) == nbformat.reads(text, as_version=4)


def test_a_notebook_that_is_not_version_4_is_refused():
    with pytest.raises(ValueError, match="version-4"):
        notebook_text({"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": []})


def test_the_student_and_nbgrader_stubs_open_unfolded_and_hidden_code_stays_folded():
    notebook = nbformat.reads(fold_notebook(nbformat.writes(make_notebook())), as_version=4)
    student = student_notebook(notebook)
    stubs = [c for c in student.cells if "student-stub" in c.metadata.get("tags", [])]
    assert len(stubs) == 1 and folds_of(stubs[0]) == {}
    assert not any("The answer" in c.source or "Why it works" in c.source for c in student.cells)
    hidden = [c for c in student.cells if "hide-input" in c.metadata.get("tags", [])]
    assert folds_of(hidden[0]) == SOURCE
    graded = nbgrader_notebook(notebook)
    solutions = [c for c in graded.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert solutions and all(folds_of(c) == {} for c in solutions)


def test_the_fold_command_checks_and_writes(tmp_path):
    path = tmp_path / "demo.ipynb"
    path.write_text(nbformat.writes(make_notebook()), encoding="utf-8")
    command = [sys.executable, "-m", "posenc.course", "fold"]
    check = subprocess.run([*command, str(tmp_path), "--check"], capture_output=True, text=True)
    assert check.returncode == 1 and "cell 1 (code" in check.stdout
    assert mismatches(nbformat.read(path, as_version=4))  # --check wrote nothing
    assert subprocess.run([*command, str(path)], capture_output=True, text=True).returncode == 0
    assert mismatches(nbformat.read(path, as_version=4)) == []
    again = subprocess.run([*command, str(tmp_path), "--check"], capture_output=True, text=True)
    assert again.returncode == 0, again.stdout + again.stderr
