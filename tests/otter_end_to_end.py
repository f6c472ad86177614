"""The Otter export checked with Otter-Grader itself: a manual check, not collected by pytest.

Needs a Python environment with otter-grader and this book's posenc (neither the book's requirements
nor ``make test`` install Otter)::

    python3.11 -m venv /tmp/otter-venv
    /tmp/otter-venv/bin/pip install -r requirements.txt otter-grader==7.0.0
    /tmp/otter-venv/bin/python tests/otter_end_to_end.py /tmp/otter-check 08_rope

For each chapter named (default 08, whose answer has an independent version in ``OWN_ANSWERS``), in the new
folder ``WORK``: ``python -m posenc.course otter``, then ``otter assign`` (which runs the tests against
the solutions), a check of the autograder zip's layout, then three submissions made from the student
notebook Otter wrote: every stub replaced by the chapter's model answer (correct), the same with one
answer broken (wrong), with one stub left as it is (blank), and every stub left with the checker patched to
pass everything (forged, issue 41's 8 lines). Each is graded by ``otter run`` and by
``python -m posenc.course grade`` with the same course seed; the script prints both scores per exercise
and exits 1 if they differ anywhere or a score is not the one expected. The correct answers must not be
the chapters' own (a copy of a model answer gets no points): ``OWN_ANSWERS`` holds the ones used.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat

from posenc.course.coursework import ACTIVITIES
from posenc.course.editions import _walk

ROOT = Path(__file__).resolve().parents[1]
BY_CHECK = {a.check: a for a in ACTIVITIES.values() if a.check}
SEED = "20261123"
#: chapter -> (function broken in the wrong submission, text replaced, by what; function left blank)
CASES = {
    "11_yarn": ("my_yarn_attention_factor", "np.log(factor)", "np.log10(factor)", "my_yarn_attention_factor"),
    "13_conventions_and_bugs": ("my_rope_half", "[-x2, x1]", "[x2, -x1]", "my_permute_for_half"),
    "08_rope": ("my_rope", "angle = pos * base", "angle = pos * 2 * base", "my_rope"),
}
#: Correct answers written independently of the chapters' (a copy of a model answer gets no points).
OWN_ANSWERS = {
    "my_rope": """def my_rope(x, positions, base=10000.0):
    half = x.shape[-1] // 2
    out = np.array(x, dtype=np.float64, copy=True)
    pos = np.asarray(positions, dtype=np.float64)
    for j in range(half):
        angle = pos * base ** (-2.0 * j / x.shape[-1])
        c, s = np.cos(angle), np.sin(angle)
        first, second = x[..., 2 * j], x[..., 2 * j + 1]
        out[..., 2 * j] = first * c - second * s
        out[..., 2 * j + 1] = first * s + second * c
    return out
""",
}
#: The 8 lines of issue 41 that gave full marks in every route when the check ran in the student's kernel.
FORGERY = """import posenc.course, posenc.course.checker, posenc.exercises
from posenc.course.check_result import CheckResult
def _always(name, function, **kwargs):
    return CheckResult(name, "passed", "all checks agree with posenc")
posenc.course.checker.check = _always
posenc.course.check = _always
posenc.exercises.check = _always
"""


def run(*command, cwd=None) -> None:
    print("$", " ".join(map(str, command)), flush=True)
    subprocess.run([str(c) for c in command], check=True, cwd=cwd, stdout=subprocess.DEVNULL)


def defined(source: str) -> str:
    return source.split("def ", 1)[1].split("(", 1)[0]


def submissions(stem: str, student: Path, out: Path) -> dict[str, Path]:
    broken, old, new, blank = CASES[stem]
    answers = {}
    for role, cell, _ in _walk(nbformat.read(ROOT / "chapters" / f"{stem}.ipynb", as_version=4)):
        if role == "solution-code":
            answers[defined(cell.source)] = cell.source
    written = {}
    for variant in ("correct", "wrong", "blank", "forged"):
        notebook = nbformat.read(student, as_version=4)
        if variant == "forged":  # every stub left as it is, and the checker patched to pass everything
            notebook.cells.append(nbformat.v4.new_code_cell(FORGERY))
        for cell in notebook.cells:
            if cell.cell_type == "code" and "raise NotImplementedError" in cell.source:
                name = defined(cell.source)
                if name not in answers or (variant == "blank" and name == blank) or variant == "forged":
                    continue
                source = OWN_ANSWERS.get(name, answers[name])
                if variant == "wrong" and name == broken:
                    assert old in source, (name, old)
                    source = source.replace(old, new)
                cell.source = source
        path = out / variant / stem / f"{stem}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(notebook, path)
        written[variant] = path
    return written


def check_zip(path: Path, stem: str, names: list[str]) -> None:
    """The layout of Otter 7's Gradescope autograder: its scripts at the top, a test file per question."""
    files = set(zipfile.ZipFile(path).namelist())
    expected = {"run_autograder", "run_otter.py", "setup.sh", "environment.yml", "otter_config.json"}
    assert expected <= files, sorted(files)
    assert {f"tests/{name}.py" for name in names} == {f for f in files if f.startswith("tests/")}, sorted(files)
    environment = zipfile.ZipFile(path).read("environment.yml").decode()
    assert "torch==2.13.0" in environment and "posenc" in environment, environment
    for name in names:
        test = zipfile.ZipFile(path).read(f"tests/{name}.py").decode()
        assert f"points = {BY_CHECK[name].points}" in test and SEED not in test, test
        assert f'exercises.check("{name}"' in test or f"exercises.check('{name}'" in test, test
    config = json.loads(zipfile.ZipFile(path).read("otter_config.json"))
    plugin = {"posenc.course.otter_plugin.SealedGrades": {"course_seed": int(SEED), "exercises": names}}
    assert config["plugins"] == [plugin], config


def main(work: Path, stems: list[str]) -> int:
    python = Path(sys.executable)
    otter = python.parent / "otter"
    work.mkdir(parents=True)  # a new folder: nothing there is overwritten
    run(python, "-m", "posenc.course", "otter", ROOT / "chapters", work / "masters", "--course-seed", SEED)
    bad = 0
    for stem in stems:
        names = [name for name, a in BY_CHECK.items() if a.chapter == stem[:2]]
        run(otter, "assign", work / "masters" / stem / f"{stem}.ipynb", work / "dist" / stem)
        (autograder,) = (work / "dist" / stem / "autograder").glob("*.zip")
        check_zip(autograder, stem, names)
        graded = submissions(stem, work / "dist" / stem / "student" / f"{stem}.ipynb", work / "submissions")
        broken, _, _, blank = CASES[stem]
        for variant, notebook in graded.items():
            results = work / "otter-results" / variant / stem
            results.mkdir(parents=True)
            run(otter, "run", "--no-logo", "-a", autograder, "-o", results, notebook)
            tests = json.loads((results / "results.json").read_text())["tests"]
            by_otter = {t["name"]: t["score"] for t in tests if t["name"] in names}
            grades = work / "posenc-grades" / variant / stem
            run(python, "-m", "posenc.course", "grade", notebook.parent, "--course-seed", SEED, "--out", grades)
            row = next(csv.DictReader((grades / "grades.csv").open()))
            by_posenc = {name: float(row[BY_CHECK[name].label]) for name in names}
            failed = {"correct": None, "wrong": broken, "blank": blank}.get(variant)
            expected = {n: float(BY_CHECK[n].points) for n in names}
            expected.update({n: 0.0 for n in names if BY_CHECK[n].exercise.function_name == failed})
            if variant == "forged":
                expected = dict.fromkeys(names, 0.0)
            agree = by_otter == by_posenc == expected
            bad += not agree
            print(f"{stem} {variant:8s} otter {by_otter} posenc {by_posenc} {'agree' if agree else 'DIFFER'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2:] or ["08_rope"]))
