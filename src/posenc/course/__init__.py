"""The course machinery: exercises and their checkers, points and rubrics, grading, editions.

* :func:`check` (also ``posenc.exercises.check``): a student's entry point;
* :data:`EXERCISES`: the implementation exercises; :mod:`posenc.course.engine` runs them;
* ``posenc.course.exercises.chNN``: one module per chapter with all of its coursework (its
  implementation exercises, and every exercise's points, minutes and rubric as
  ``ACTIVITIES``), collected in :data:`posenc.course.data.ACTIVITIES`;
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

from .checker import check
from .engine import CheckResult, Exercise, course_seed
from .exercises import EXERCISES

__all__ = ["CheckResult", "Exercise", "EXERCISES", "check", "course_seed"]
