"""nbgrader's autograde through the sealed grader: ``posenc.course.nbgrader_plugin.SealedChecks``.

nbgrader grades an autograder test cell by its outputs after it has run the student's notebook
in a kernel: an error output scores 0, anything else full points. A student's earlier cells can
change anything in that kernel (the checker, NumPy, the outputs), and the kernel runs on the
teacher's machine, next to the gradebook. So this preprocessor replaces nbgrader's ``Execute``:
the notebook is not run at all; for each locked check cell of the export
(``python -m posenc.course nbgrader``: grade id ``<exercise label>-check``) it writes the sealed
grader's verdict (:func:`posenc.course.grade.judge_notebook`, public and hidden cases of the
course seed) as the cell's outputs: the feedback, plus an error output unless the exercise passed.
nbgrader's ``SaveAutoGrades`` then records the points as usual. In ``nbgrader_config.py`` on the
grading machine (``python -m posenc.course nbgrader`` writes one beside the source folder, with
the course seed)::

    from posenc.course.nbgrader_plugin import autograde_preprocessors
    c.Autograde.autograde_preprocessors = autograde_preprocessors()
    c.SealedChecks.course_seed = 20261123
"""

from __future__ import annotations

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Float, Integer

__all__ = ["SealedChecks", "autograde_preprocessors"]


def _exercise(cell) -> str | None:
    from .coursework import ACTIVITIES

    meta = cell.get("metadata", {}).get("nbgrader", {})
    grade_id = str(meta.get("grade_id", ""))
    if cell.get("cell_type") != "code" or not meta.get("grade") or meta.get("solution"):
        return None
    if not grade_id.endswith("-check"):
        return None
    activity = ACTIVITIES.get(grade_id.removesuffix("-check"))
    return activity.check if activity is not None else None


def outputs(result: dict) -> list:
    """The outputs nbgrader reads a test cell's grade from: the feedback, and an error unless it passed."""
    import nbformat

    text = f"{result['status']}: {result['message']}" + (f"\nHint: {result['hint']}" if result.get("hint") else "")
    cells = [nbformat.v4.new_output("stream", name="stdout", text=text + "\n")]
    if result["status"] != "passed":
        cells.append(nbformat.v4.new_output("error", ename="SealedGrade", evalue=result["status"], traceback=[text]))
    return cells


class SealedChecks(Preprocessor):
    """Writes the sealed grader's verdict into each check cell (see the module); runs nothing of the student's."""

    # nbconvert runs a preprocessor only when it is enabled (as nbgrader's own are)
    enabled = Bool(True, help="whether nbgrader runs this step").tag(config=True)
    course_seed = Integer(None, allow_none=True, help="the course seed that draws the hidden cases").tag(config=True)
    check_timeout = Float(None, allow_none=True, help="seconds per checker case").tag(config=True)

    def preprocess(self, nb, resources):
        from .grade import judge_notebook

        cells = {index: _exercise(cell) for index, cell in enumerate(nb.cells)}
        names = list(dict.fromkeys(name for name in cells.values() if name))
        results = judge_notebook(nb, names, seed=self.course_seed, check_timeout=self.check_timeout) if names else {}
        for index, name in cells.items():
            if name:
                nb.cells[index].outputs = outputs(results[name])
                nb.cells[index].execution_count = None
        return nb, resources


def autograde_preprocessors() -> list:
    """nbgrader's autograde preprocessors with ``Execute`` replaced by :class:`SealedChecks`."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import AssignLatePenalties, CheckCellMetadata, LimitOutput, SaveAutoGrades

    return [
        ClearMetadataPreprocessor, SealedChecks, LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata,
    ]
