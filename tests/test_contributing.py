"""CONTRIBUTING.md's "Add a chapter with an exercise" is complete and needed (issue 42).

A scratch chapter, the next after the book's last, is added to a copy of the repository (the files
git would commit: tracked and new ones) by exactly the steps the list gives, no more: the notebook
(opening with the notation link, install check and imports, a glued number, one implementation
exercise with its solution and check cell, a "## Sources" section), the fold command, its _toc.yml
entry, the bibliography's back-link, its coursework module, its answer key and its review record.
Then the fast tests that read the chapters run in that copy (``PYTHONPATH=<copy>/src``, so the
copy's posenc and answer key are the ones imported): they pass, and they did read the new chapter
(its name is in their test ids). The negative controls leave one listed step out, each, and a
test of the same set fails: the list is needed, not only sufficient.

Slow: a copy of the repository (270-odd files) and a pytest run in it, then one short run per
negative control: 40-50 s in all on a quiet 2-core machine (11-22 s for the main run), 2 min at a
load of 10 (the main run 60 s).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import types
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import nbformat
import pytest
from test_prose import INSTALL_CHECK  # the install check every chapter's first code cell starts with

from conftest import ROOT, chapter_notebooks

pytestmark = pytest.mark.slow

LAST = chapter_notebooks()[-1].name[:2]
NN = f"{int(LAST) + 1:02d}"  # the next chapter's number: no count pinned here
STEM = f"{NN}_scratch"
LABEL = f"ex-ch{NN}-relative-positions"
NAME = "relative_positions"  # the exercise's checker name

# The fast tests that read the chapters (no book build, no chapter run): each catches a missing
# item of CONTRIBUTING.md's list (see FAILS_WITHOUT). Node ids; test_book.py's chapter checks only
# (its API-page test reads no chapter).
CHAPTER_TESTS = (
    "tests/test_prose.py",
    "tests/test_book.py::test_notebooks_are_committed_without_outputs",
    "tests/test_book.py::test_no_text_is_set_smaller_than_the_readable_minimum",
    "tests/test_book.py::test_math_text_has_no_escaped_underscores",
    "tests/test_book.py::test_every_notebook_is_in_the_table_of_contents",
    "tests/test_book.py::test_misconceptions_gallery_lists_every_misconception",
    "tests/test_jupyterlab.py::test_every_chapter_is_covered",
    "tests/test_folding.py",
    "tests/test_glue.py",
    "tests/test_data_files.py",
    "tests/test_course_data.py",
    "tests/test_course_spec.py",
    "tests/test_course_otter.py",
    "tests/test_student.py::test_no_solution_code_survives",
    "tests/test_student.py::test_the_nbgrader_export_leaks_no_solution",
    "tests/test_lint.py",
)
# tests in those files that read no chapter and take seconds each (transformers, a sealed grading run)
SKIPPED = (
    "tests/test_course_data.py::test_the_gpt_oss_rubric_gives_the_reference_librarys_numbers",
    "tests/test_course_otter.py::test_the_plugin_grades_sealed_with_the_hidden_cases",
)
# the files whose test ids must name the new chapter, its exercise's label or its checker
MUST_NAME_IT = (
    "test_prose",
    "test_book",
    "test_folding",
    "test_data_files",
    "test_course_data",
    "test_course_spec",
    "test_student",
)

# --- the copy and the scratch chapter ------------------------------------------------------------


def copy_repository(target: Path) -> None:
    """The files git would commit (tracked, and new ones not ignored) into ``target``; a tracked file
    deleted in the working tree, and a stray top-level build/ or dist/ folder, stay out."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    for name in dict.fromkeys(filter(None, listed.split("\0"))):
        source = ROOT / name
        if name.split("/", 1)[0] in ("build", "dist") or not source.is_file():
            continue
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / name)


MODULE = f'''"""Chapter {int(NN)}: relative positions (``{NAME}``)."""

import numpy as np

from ... import biases
from ..activities import implementation
from ..engine import Exercise
from ..inputs import Whole


def _query_minus_key(n_positions):
    positions = np.arange(n_positions)
    return positions[:, None] - positions[None, :]


EXERCISE = Exercise(
    "{NAME}",
    "my_relative_positions(n_positions)",
    biases.relative_positions,
    [{{"n_positions": 4}}, {{"n_positions": 1}}],
    {{"entry [m, n] is n - m, the key's position minus the query's": _query_minus_key}},
    hidden=lambda rng: [{{"n_positions": int(n)}} for n in rng.integers(1, 300, size=3)],
    label="{LABEL}",
    args={{"n_positions": Whole()}},
    boundaries=[{{"n_positions": 0}}, {{"n_positions": 2}}],
)

#: This chapter's exercises in the book's order, with points, minutes and rubrics.
CHAPTER_ACTIVITIES = (implementation(EXERCISE, minutes=10),)
'''

KEY = f'''"""The answer key of chapter {NN}: model answers in other styles.

Teacher-only: it is not part of the installed posenc package (see posenc.course.key).
"""

_LOOPS = """
def my_relative_positions(n_positions):
    table = np.zeros((n_positions, n_positions), dtype=int)
    for m in range(n_positions):
        for n in range(n_positions):
            table[m, n] = n - m
    return table
"""

#: Exercise name -> more model answers (source text), in other styles than the chapter's solution cell.
ANSWERS = {{"{NAME}": (_LOOPS,)}}
'''

CITED = "Self-Attention with Relative Position Representations"


def bibliography_entry(root: Path) -> tuple[int, int, list[str]]:
    """The bibliography's entry of CITED: its first and last line (indices) and the file's lines."""
    lines = (root / "chapters" / "bibliography.md").read_text(encoding="utf-8").splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if line.startswith("- ") and CITED in "".join(lines[i : i + 2]))
    last = first
    while last + 1 < len(lines) and lines[last + 1].startswith("  "):
        last += 1
    return first, last, lines


def sources_section(root: Path) -> str:
    """The chapter's "## Sources": the cited work with the bibliography's authors, year and title."""
    first, last, lines = bibliography_entry(root)
    entry = re.sub(r"\s+", " ", "".join(lines[first : last + 1]))
    cited = re.match(r"- (.+?\(\d{4}\)\. \*[^*]+\*)", entry)
    return f"## Sources\n\n- {cited.group(1)}. Relative positions $n - m$."


def contract() -> str:
    """What ``python -m posenc.course contract NAME`` prints for the new module (MODULE run in-process, as
    the module ``posenc.course.coursework.chNN``: the command is the same code, and a process of its own
    costs seconds)."""
    module = types.ModuleType(f"posenc.course.coursework.ch{NN}")
    module.__package__ = "posenc.course.coursework"
    exec(compile(MODULE, f"ch{NN}.py", "exec"), module.__dict__)
    return module.EXERCISE.contract()


def scratch_notebook(root: Path, leave_out: str = "") -> nbformat.NotebookNode:
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    imports = (
        "import numpy as np\n\nfrom posenc import exercises\nfrom posenc.book import (\n    glue,\n"
        '    glued,  # noqa: F401 (the prose calls it: {eval}`glued("name:.3f")`)\n)\n'
    )
    cells = [
        md(
            "# A scratch chapter\n\n**The question.** Which offset does attention see between two tokens?"
            + ("" if leave_out == "notation link" else " Symbols follow the book's {doc}`notation` page.")
        ),
        code(INSTALL_CHECK + "\n" + imports, metadata={"tags": ["hide-input"]}),
        md("## Offsets\n\n`posenc.relative_positions(n)` holds $r = n - m$ for a query at $m$ and a key at $n$:"),
        code(
            f"offsets = posenc.relative_positions(4)\nprint(offsets)\n"
            f'glue("ch{NN}-largest-offset", int(offsets.max()))\nassert offsets.max() == 3'
        ),
        md(f'Among four tokens the largest offset is {{eval}}`glued("ch{NN}-largest-offset")`.\n\n## Exercises'),
        md(
            f"```{{exercise}} Relative positions\n:label: {LABEL}\n"
            "Write `my_relative_positions(n_positions)` that returns the `(n_positions, n_positions)` "
            "table whose entry $[m, n]$ is $n - m$. Then run the check cell.\n\n"
            + ("" if leave_out == "contract" else contract() + "\n")
            + "```"
        ),
        md(f"```{{solution-start}} {LABEL}\n:class: dropdown\n```"),
        code(
            "def my_relative_positions(n_positions):\n"
            '    """Entry [m, n] is n - m: the key\'s position minus the query\'s."""\n'
            "    positions = np.arange(n_positions)\n"
            "    return positions[None, :] - positions[:, None]",
            metadata={"tags": ["solution"]},
        ),
        md("```{solution-end}\n```"),
        code(f'exercises.check("{NAME}", my_relative_positions)'),
    ]
    if leave_out != "sources section":
        cells.append(md(sources_section(root)))
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    return notebook


def add_scratch_chapter(root: Path, leave_out: str = "") -> None:
    """CONTRIBUTING.md's "Add a chapter with an exercise", step by step, in the copy at ``root``;
    ``leave_out`` names one step (or one part of the notebook) to skip."""
    from posenc.course.folding import fold_files

    chapters = root / "chapters"
    # 4. the coursework module (written first here: the notebook quotes its contract)
    if leave_out != "coursework module":
        (root / "src" / "posenc" / "course" / "coursework" / f"ch{NN}.py").write_text(MODULE, encoding="utf-8")
    # 5. the answer key
    (root / "teacher" / "key" / f"ch{NN}.py").write_text(KEY, encoding="utf-8")
    # 1. the notebook, saved as JupyterLab saves it, then `python -m posenc.course fold chapters`
    nbformat.write(scratch_notebook(root, leave_out), chapters / f"{STEM}.ipynb")
    if leave_out != "fold":
        fold_files(chapters)
    # 2. _toc.yml: the chapter in its part, after the last chapter
    if leave_out != "toc entry":
        toc = root / "_toc.yml"
        text = toc.read_text(encoding="utf-8")
        last = f"      - file: chapters/{chapter_notebooks()[-1].stem}\n"
        assert text.count(last) == 1, last
        toc.write_text(text.replace(last, last + f"      - file: chapters/{STEM}\n"), encoding="utf-8")
    # 3. the bibliography: the cited work's entry names the chapter
    if leave_out != "bibliography back-link":
        _, last, lines = bibliography_entry(root)
        assert lines[last].rstrip().endswith("`."), lines[last]
        lines[last] = lines[last].rstrip()[:-1] + f", {{doc}}`{STEM}`.\n"
        (chapters / "bibliography.md").write_text("".join(lines), encoding="utf-8")
    # 6. the review record
    (chapters / "reviews" / f"ch{NN}.md").write_text(
        f"# Review of chapter {int(NN)}\n\nA scratch chapter of tests/test_contributing.py: nothing to review.\n",
        encoding="utf-8",
    )


def run_tests(root: Path, tests, tmp_path: Path) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Run ``tests`` (node ids) with pytest in the copy, with the copy's posenc; the result and every
    test id that ran."""
    # (not this run's timeline either: the copy's tests are not this run's, conftest's POSENC_TEST_TIMELINE)
    skipped = ("PYTEST_", "POSENC_COURSE_KEY", "POSENC_TEST_TIMELINE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skipped)}
    env.update(PYTHONPATH=str(root / "src"), POSENC_CHECK_ISOLATION="thread")
    report = tmp_path / f"report-{len(list(tmp_path.glob('report-*')))}.xml"
    command = [sys.executable, "-m", "pytest", "-q", "-m", "not book and not slow", "-p", "no:cacheprovider"]
    command += [f"--junitxml={report}", *(f"--deselect={test}" for test in SKIPPED), *tests]
    result = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=900)
    ran = []
    if report.exists():
        for case in ElementTree.parse(report).getroot().iter("testcase"):
            ran.append(f"{case.get('classname')}::{case.get('name')}")
    return result, ran


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the copy is made of the files git lists")
    root = tmp_path_factory.mktemp("repository")
    copy_repository(root)
    return root


def test_the_copy_imports_its_own_posenc(copy):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(copy / "src")
    found = subprocess.run(
        [sys.executable, "-c", "import posenc, posenc.course.key as k; print(posenc.__file__); print(k.key_folder())"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert Path(found[0]).is_relative_to(copy) and Path(found[1]) == copy / "teacher" / "key", found


def test_a_chapter_added_as_contributing_says_passes_the_chapter_tests(copy, tmp_path):
    add_scratch_chapter(copy)
    result, ran = run_tests(copy, CHAPTER_TESTS, tmp_path)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    naming = {case.split("::")[0].rsplit(".", 1)[-1] for case in ran if re.search(rf"{STEM}|{LABEL}|{NAME}", case)}
    assert set(MUST_NAME_IT) <= naming, f"the new chapter was not collected by {set(MUST_NAME_IT) - naming}"


# For each of these steps of the list left out, the test that fails and the words it fails with.
FAILS_WITHOUT = {
    "sources section": ("tests/test_prose.py", "has no '## Sources' section"),
    "bibliography back-link": ("tests/test_prose.py", "chapter list differs from the chapters citing them"),
    "notation link": ("tests/test_prose.py", "does not link {doc}`notation`"),
    "toc entry": ("tests/test_book.py::test_every_notebook_is_in_the_table_of_contents", "_toc.yml and chapters/NN_"),
    "fold": ("tests/test_folding.py", "out of step with the tags, the solutions or the JSON layout"),
    "coursework module": ("tests/test_course_data.py", "exercises missing from posenc.course.coursework.ACTIVITIES"),
    "contract": ("tests/test_course_spec.py", "paste exercise.contract() into"),
}


@pytest.mark.parametrize("step", list(FAILS_WITHOUT))
def test_a_chapter_without_one_listed_step_fails_them(step, tmp_path):
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the copy is made of the files git lists")
    root = tmp_path / "repository"
    copy_repository(root)
    add_scratch_chapter(root, leave_out=step)
    test, message = FAILS_WITHOUT[step]
    result, _ = run_tests(root, [test], tmp_path)
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-2000:]
    assert message in result.stdout and (STEM in result.stdout or LABEL in result.stdout), result.stdout[-3000:]
