"""JupyterLab opens folded what the website hides: ``metadata.jupyter.source_hidden`` (and
``outputs_hidden``) kept in step with the cells' tags and the solutions (posenc.course.folding).

Fast: reads the notebooks, executes nothing. When a chapter is out of step, run
``python -m posenc.course fold chapters``.
"""

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from posenc.course.editions import nbgrader_notebook, student_notebook
from posenc.course.folding import expected_folds, fold_notebook, folds_of, mismatches

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
FIX = "run `python -m posenc.course fold chapters` to set them"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.name for p in CHAPTERS])
def test_every_hidden_cell_opens_folded_and_no_other(path):
    found = mismatches(nbformat.read(path, as_version=4))
    message = f"{path.name}: fold metadata out of step with the tags and solutions ({FIX}):\n"
    assert not found, message + "\n".join(found)


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.name for p in CHAPTERS])
def test_the_chapters_are_written_as_the_fold_command_writes_them(path):
    text = path.read_text(encoding="utf-8")
    assert fold_notebook(text) == text, f"{path.name}: {FIX}"


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


def test_folding_refuses_a_file_it_would_reformat():
    text = json.dumps(json.loads(nbformat.writes(make_notebook())), indent=2)
    with pytest.raises(ValueError, match="layout"):
        fold_notebook(text)


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
