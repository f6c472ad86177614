"""The course machinery: exercises and their checkers, points and rubrics, grading, editions.

* :func:`check` (also ``posenc.exercises.check``): a student's entry point;
* :data:`EXERCISES`: the implementation exercises; :mod:`posenc.course.engine` runs them;
* ``posenc.course.coursework.chNN``: one module per chapter with all of its coursework (its
  implementation exercises, and every exercise's points, minutes and rubric as
  ``CHAPTER_ACTIVITIES``), collected in :data:`posenc.course.coursework.ACTIVITIES`;
* ``python -m posenc.course grade SUBMISSIONS --course-seed N``: grade a class;
* ``python -m posenc.course student|teacher|nbgrader|site SOURCE OUT``: the editions;
* ``python -m posenc.course fold chapters [--check]``: fold in JupyterLab the cells the website
  hides, and the solutions (:mod:`posenc.course.folding`);
* ``python -m posenc.course otter SOURCE OUT --course-seed N``: Otter-Grader (Gradescope) master
  notebooks of the implementation exercises (:mod:`posenc.course.otter_export`);
* ``python -m posenc.course mutants [--exercise NAME]``: mutation-test the checkers
  (:mod:`posenc.course.mutants`); ``python -m posenc.course contract NAME``: the sentence of
  an exercise's task text that states its spec.
"""

import importlib

# Loaded on first use (PEP 562), so that `python -m posenc.course fold|student|...` starts
# without importing torch: only the checkers and the exercises need it.
_HOMES = {
    "CheckResult": ".engine",
    "Exercise": ".engine",
    "EXERCISES": ".coursework",
    "check": ".checker",
    "course_seed": ".engine",
}

__all__ = ["CheckResult", "Exercise", "EXERCISES", "check", "course_seed"]


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
