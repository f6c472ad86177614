"""Answers in the page: a form before each prediction exercise's solution on the website.

A prediction exercise whose activity declares an answer key (``answer=`` in
:func:`posenc.course.activities.prediction`; :mod:`posenc.course.questions`) gets, right before its
solution dropdown, a form: a fieldset whose legend is the question, radio buttons (or a text field
for a number), a "Check" button and a status line that screen readers announce (``role="status"``).
``_book_static/posenc-answers.js`` checks the answer in the browser (no kernel, no network), says
whether it was right with the choice's feedback, and opens the solution. The form is ``hidden``
until the script runs, so a reader without JavaScript sees the page as before. The notebooks are
unchanged: the form exists only in the HTML.
"""

from __future__ import annotations

import html
import json

from docutils import nodes

__all__ = ["FORM_CLASS", "answer_form", "answer_keys"]

FORM_CLASS = "posenc-answer"
FILES = ("posenc-answers.css", "posenc-answers.js")


def answer_keys() -> dict:
    """Exercise label -> its answer key, for every prediction that declares one."""
    from ..course.coursework import ACTIVITIES

    return {label: a.answer for label, a in ACTIVITIES.items() if a.answer is not None}


def _attribute(value: str) -> str:
    return html.escape(value, quote=True)


def answer_form(label: str, answer) -> str:
    """The HTML form for the exercise ``label`` and its answer key (a ``Choices`` or a ``Number``)."""
    data = answer.as_data()
    prefix = f"{label}-answer"
    legend = f'<legend><span class="posenc-answer-tag">Your prediction:</span> {html.escape(data["question"])}</legend>'
    if data["kind"] == "choices":
        fields = "".join(
            f'<div class="posenc-answer-choice"><input type="radio" name="{prefix}" id="{prefix}-{i}" value="{i}">'
            f'<label for="{prefix}-{i}">{html.escape(choice["text"])}</label></div>'
            for i, choice in enumerate(data["choices"])
        )
    else:
        unit = f' <span class="posenc-answer-unit">{html.escape(data["unit"])}</span>' if data["unit"] else ""
        fields = (
            f'<div class="posenc-answer-number"><label for="{prefix}-value">Your number</label> '
            f'<input type="text" inputmode="decimal" autocomplete="off" id="{prefix}-value" '
            f'name="{prefix}" size="12">{unit}</div>'
        )
    return (
        f'<form class="{FORM_CLASS}" id="{prefix}" data-exercise="{_attribute(label)}" '
        f'data-answer="{_attribute(json.dumps(data, ensure_ascii=False))}" hidden>'
        f"<fieldset>{legend}{fields}</fieldset>"
        f'<button type="submit" class="posenc-answer-check">Check</button>'
        f'<p class="posenc-answer-result" role="status" aria-live="polite"></p>'
        f"</form>"
    )


def insert_answer_forms(app, doctree, docname) -> None:
    """Put each declared prediction's form before its solution (``doctree-resolved``)."""
    from sphinx_exercise.nodes import solution_node

    if app is not None and not app.config.posenc_answer_forms:  # the student website: no answer key in the page
        return
    keys = answer_keys()
    for solution in list(doctree.findall(solution_node)):
        label = solution.get("target_label")
        if label not in keys:
            continue
        form = nodes.raw("", answer_form(label, keys[label]), format="html")
        solution.parent.insert(solution.parent.index(solution), form)


def link_answer_files(app, pagename, templatename, context, doctree) -> None:
    """On a page with an answer form: link the form's script and stylesheet."""
    body = context.get("body")
    if not body or f'class="{FORM_CLASS}"' not in body:
        return
    for name in FILES:
        if name.endswith(".css"):
            app.add_css_file(name)
        else:
            app.add_js_file(name)


def setup(app):
    app.add_config_value("posenc_answer_forms", True, "env")
    app.connect("doctree-resolved", insert_answer_forms)
    app.connect("html-page-context", link_answer_files)  # before the script de-duplication (priority 900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
