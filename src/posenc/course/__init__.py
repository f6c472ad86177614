"""The course machinery: exercises and their checkers, points and rubrics, grading, editions.

* :func:`check` (also ``posenc.exercises.check``): a student's entry point;
* :data:`EXERCISES`: the implementation exercises, one module per chapter in
  ``posenc.course.exercises``; :mod:`posenc.course.engine` runs them;
* :data:`posenc.course.data.ACTIVITIES`: every exercise of the book (implementation,
  prediction, investigation) with its points, time and rubric;
* ``python -m posenc.course grade SUBMISSIONS --course-seed N``: grade a class;
* ``python -m posenc.course student|teacher|nbgrader|site SOURCE OUT``: the editions.
"""

from .checker import check
from .engine import CheckResult, Exercise, course_seed
from .exercises import EXERCISES

__all__ = ["CheckResult", "Exercise", "EXERCISES", "check", "course_seed"]
