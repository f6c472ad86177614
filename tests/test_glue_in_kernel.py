"""The prose's numbers in JupyterLab: each ``{eval}`` role of a chapter, evaluated in the kernel as
jupyterlab-myst asks for it (the expressions as an execute request's ``user_expressions``, which
ipykernel answers with ``shell.user_expressions``; the ``text/plain`` result shown with one pair of
outer quotes stripped), must equal what the website shows for the same role: myst-nb's formatting of
the glued output that the kernel's cells left (posenc.book.eval_role), once every cell has run.

Every chapter, in the one run of its student edition that tests/chapter_runs.py makes (the
student's JupyterLab shows the same prose); tests/test_glue.py checks that every chapter's roles
have the one form both places understand."""

import pytest
from chapter_runs import in_jupyterlab, student_run

from conftest import chapter_notebooks

pytestmark = pytest.mark.slow  # executes chapters


@pytest.mark.parametrize("chapter", [p.stem for p in chapter_notebooks()])
def test_every_eval_role_shows_in_the_kernel_what_the_website_shows(chapter, student_edition):
    run = student_run(student_edition, chapter)
    assert len(run.evals) == run.eval_roles  # every role of the edition's prose was asked for
    for expression, answer, on_the_website in run.evals:
        assert answer["status"] == "ok", f"{chapter}: {expression} -> {answer.get('evalue')}"
        shown = in_jupyterlab(answer)
        assert on_the_website is not None, f"{chapter}: {expression} is not glued(...) of a value the chapter glues"
        assert shown == on_the_website, f"{chapter}: {expression}"
        assert shown.strip() and "glued" not in shown
