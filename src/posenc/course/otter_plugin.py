"""Otter-Grader (Gradescope) through the sealed grader: ``posenc.course.otter_plugin.SealedGrades``.

Otter runs the submission in a kernel, runs each question's tests there, and reads the scores
back from a file that kernel writes (a pickle): everything a student's cell can change. With
this plugin (the Otter export names it in its assignment config, with the course seed, so the
seed lives only in the autograder zip's ``otter_config.json``):

* ``before_execution`` grades each question's exercise sealed, from the submitted notebook's
  source (:func:`posenc.course.grade.judge_notebook`: public and hidden cases), and hands Otter
  a notebook with none of the student's code in it, so nothing of the student's runs in Otter's
  kernel or writes the file Otter reads;
* ``after_grading`` sets each question's score from those verdicts (all points or none) and
  puts the feedback in the results' output.

Plugin config (``plugins:`` in the assignment config): ``course_seed`` (required),
``check_timeout`` (seconds per case), ``questions`` (question name -> exercise name; default:
the question's name is the exercise's, as the export writes them).
"""

from __future__ import annotations

try:
    from otter.plugins import AbstractOtterPlugin
except ImportError:  # posenc without Otter: the plugin still imports (the book's tests drive it directly)

    class AbstractOtterPlugin:
        def __init__(self, submission_path, submission_metadata, plugin_config):
            self.submission_path = submission_path
            self.submission_metadata = submission_metadata
            self.plugin_config = plugin_config


__all__ = ["SealedGrades"]


class SealedGrades(AbstractOtterPlugin):
    """Grades the implementation questions sealed and overrides Otter's scores (see the module)."""

    verdicts: dict | None = None

    def _questions(self, results=None) -> dict[str, str]:
        from .coursework import EXERCISES

        config = self.plugin_config or {}
        questions = dict(config.get("questions") or {})
        if not questions and results is not None:
            questions = {name: name for name in getattr(results, "results", {}) if name in EXERCISES}
        if not questions:
            questions = {name: name for name in config.get("exercises", [])}
        return {q: e for q, e in questions.items() if e in EXERCISES}

    def before_execution(self, submission):
        import nbformat

        from .coursework import EXERCISES
        from .engine import course_seed
        from .grade import judge_notebook

        config = self.plugin_config or {}
        if not isinstance(submission, nbformat.NotebookNode):
            submission = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(str(submission))])
        names = list(dict.fromkeys(config.get("exercises") or list(self._questions().values()) or list(EXERCISES)))
        names = [n for n in names if n in EXERCISES]
        seed = course_seed(config.get("course_seed"))
        self.verdicts = judge_notebook(submission, names, seed=seed, check_timeout=config.get("check_timeout"))
        empty = nbformat.v4.new_notebook(metadata=submission.get("metadata", {}))
        empty.cells = [nbformat.v4.new_code_cell("# graded by posenc's sealed grader: no student code runs here")]
        return empty

    def after_grading(self, results):
        verdicts = self.verdicts or {}
        lines = []
        for question, exercise in self._questions(results).items():
            if question not in results.results:
                continue
            verdict = verdicts.get(exercise, {"status": "missing", "message": "not graded", "hint": None})
            test = results.results[question]
            results.update_score(question, test.possible if verdict["status"] == "passed" else 0)
            lines.append(f"{question}: {verdict['status']}: {verdict['message']}")
            if verdict.get("hint"):
                lines.append(f"  Hint: {verdict['hint']}")
        results.set_output("\n".join(lines))
