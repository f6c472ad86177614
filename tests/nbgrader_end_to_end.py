"""The nbgrader export checked with nbgrader itself: a manual check, not collected by pytest.

Needs a Python environment with nbgrader and this book's posenc (neither the book's requirements nor
``make test`` install nbgrader)::

    python3.11 -m venv /tmp/nbg-venv
    /tmp/nbg-venv/bin/pip install -r requirements.txt nbgrader==0.9.6
    /tmp/nbg-venv/bin/python tests/nbgrader_end_to_end.py /tmp/nbgrader-check

In the new folder ``WORK`` (an nbgrader course): ``python -m posenc.course nbgrader`` writes chapter 3's
source version and the sealed grading config (``posenc_grading.py``, with the course seed), which
``nbgrader_config.py`` loads as the teacher's guide says; ``nbgrader generate_assignment``; four
submissions made from the released notebook (a correct answer written independently of the chapter's;
a wrong one; the stub left as it is; the stub left with the checker patched to pass everything, issue
41's 8 lines); ``nbgrader autograde``, then ``nbgrader export``. Each submission is also graded by
``python -m posenc.course grade`` with the same seed. The script prints both scores per submission and
exits 1 if they differ or one is not the one expected (4, 0, 0, 0).
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import nbformat
from otter_end_to_end import FORGERY  # issue 41's 8 lines (this folder is on the path)

ROOT = Path(__file__).resolve().parents[1]
SEED = "20261123"
CHAPTER = "03_binary_analogy"
ANSWERS = {
    "correct": """def my_binary(n_positions, n_bits):
    rows = [[(p // 2**j) % 2 for j in range(n_bits)] for p in range(n_positions)]
    return np.array(rows, dtype=np.int64).reshape(n_positions, n_bits)
""",
    "wrong": """def my_binary(n_positions, n_bits):
    rows = [[(p // 2**j) % 2 for j in reversed(range(n_bits))] for p in range(n_positions)]
    return np.array(rows, dtype=np.int64).reshape(n_positions, n_bits)
""",
}
EXPECTED = {"correct": 4.0, "wrong": 0.0, "blank": 0.0, "forged": 0.0}


def run(*command, cwd=None) -> None:
    print("$", " ".join(map(str, command)), flush=True)
    # nbgrader starts alembic (its database migrations) by name: the environment's bin/ comes first on PATH
    environment = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run([str(c) for c in command], check=True, cwd=cwd, stdout=subprocess.DEVNULL, env=environment)


def main(work: Path) -> int:
    python = Path(sys.executable)
    nbgrader = python.parent / "nbgrader"
    work.mkdir(parents=True)  # a new folder: nothing there is overwritten
    (work / "nbgrader_config.py").write_text(
        'c = get_config()\nc.CourseDirectory.course_id = "positional-encoding"\n'
        'load_subconfig("posenc_grading.py")\n'
    )
    run(python, "-m", "posenc.course", "nbgrader", ROOT / "chapters" / f"{CHAPTER}.ipynb",
        work / "source" / "ps1", "--course-seed", SEED)
    run(nbgrader, "generate_assignment", "ps1", "--force", cwd=work)
    released = nbformat.read(work / "release" / "ps1" / f"{CHAPTER}.ipynb", as_version=4)
    for variant in EXPECTED:
        notebook = nbformat.from_dict(released)
        for cell in notebook.cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade_id") == "ex-ch03-binary-solution" and variant in ANSWERS:
                cell.source = ANSWERS[variant]
        if variant == "forged":
            notebook.cells.append(nbformat.v4.new_code_cell(FORGERY))
        target = work / "submitted" / variant / "ps1" / f"{CHAPTER}.ipynb"
        target.parent.mkdir(parents=True)
        nbformat.write(notebook, target)
    run(nbgrader, "autograde", "ps1", "--force", cwd=work)
    run(nbgrader, "export", "--to", str(work / "nbgrader-grades.csv"), cwd=work)
    by_nbgrader = {row["student_id"]: float(row["score"]) for row in csv.DictReader(open(work / "nbgrader-grades.csv"))}
    bad = 0
    for variant, expected in EXPECTED.items():
        out = work / "posenc-grades" / variant
        run(python, "-m", "posenc.course", "grade", work / "submitted" / variant / "ps1", "--course-seed", SEED,
            "--out", out)
        row = next(csv.DictReader(open(out / "grades.csv")))
        by_posenc = float(row["ex-ch03-binary"])
        agree = by_nbgrader.get(variant) == by_posenc == expected
        bad += not agree
        print(f"{variant:8s} nbgrader {by_nbgrader.get(variant)} posenc {by_posenc} "
              f"{'agree' if agree else 'DIFFER'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
