"""One run of each chapter's student edition per test process, and the checks that ride on it.

The book build executes every chapter as the website shows it. The student edition (solutions
replaced by stubs) is executed once more, as a student runs it: from the edition's own folder, in a
Jupyter kernel, with the lab's smoke setting (``POSENC_LAB_SMOKE=1``: chapter 12 trains a few steps)
and its explorers recorded instead of rendered (``POSENC_RECORD_EXPLORERS=1``,
:data:`posenc.book.widgets.RECORDED`). Three files of checks read that one run
(tests/test_student.py, tests/test_glue_in_kernel.py, tests/test_explorer_titles.py); the tests'
scheduler (tests/conftest.py, ``test_scope``) gives every test of one chapter to one worker, which
runs the chapter once (:func:`student_run`) and keeps the result.

Two probes ride in the run, as code cells added at the end of the executed copy (never to a file
on disk), when every cell has run, as after JupyterLab's Run All (some prose quotes a number that the
cell below it computes):

* every ``{eval}`` role's expression evaluated by ``get_ipython().user_expressions``, the very
  function ipykernel calls for an execute request's ``user_expressions``, which is how
  jupyterlab-myst asks the kernel for them (ipykernel 7.4.0, pinned in requirements.txt,
  ipykernel/ipkernel.py, ``do_execute``:
  ``reply_content["user_expressions"] = shell.user_expressions(user_expressions or {})``);
* every recorded explorer rendered at each state a reader can reach at its controls'
  extremes, at its defaults and at each frame of its website player, with the extent of its
  titles measured (:func:`check_recorded`), and its live form built to see that it opens at its
  defaults.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

TESTS = Path(__file__).resolve().parent
EVAL_ROLE = re.compile(r"\{eval\}`([^`]*)`")
TOLERANCE_PX = 1.0
EVAL_PROBE = "POSENC-PROBE-EVAL "
EXPLORER_PROBE = "POSENC-PROBE-EXPLORERS "


# --- inside the kernel: the recorded explorers' states and titles ------------------------------------


def states(explorer) -> list[dict]:
    """Control values to check: all combinations of extremes, the defaults, the player's frames."""
    extremes = {}
    for name, control in explorer.controls.items():
        if control.kind == "choice":
            extremes[name] = list(control.options)
        else:
            extremes[name] = list(dict.fromkeys(control.clamp(v) for v in (control.minimum, control.maximum)))
    defaults = {name: control.value for name, control in explorer.controls.items()}
    found = [dict(zip(extremes, combo, strict=True)) for combo in itertools.product(*extremes.values())]
    found.append(defaults)
    found += [dict(defaults, **{explorer.animate: frame}) for frame in explorer.frames]
    return found


def titles_outside(figure) -> list[dict]:
    """The suptitle and axes titles whose rendered extent leaves the figure."""
    renderer = figure.canvas.get_renderer()
    texts = [figure._suptitle] if figure._suptitle is not None else []
    for ax in figure.axes:
        texts += [ax.title, ax._left_title, ax._right_title]
    width, height = figure.bbox.width, figure.bbox.height
    outside = []
    for text in texts:
        if not text.get_visible() or not text.get_text().strip():
            continue
        box = text.get_window_extent(renderer)
        if (
            box.x0 < -TOLERANCE_PX
            or box.y0 < -TOLERANCE_PX
            or box.x1 > width + TOLERANCE_PX
            or box.y1 > height + TOLERANCE_PX
        ):
            outside.append(
                {
                    "text": text.get_text(),
                    "extent": [round(v) for v in box.extents],
                    "figure": [round(width), round(height)],
                }
            )
    return outside


def check_recorded(chapter: str) -> dict:
    """Every explorer :data:`posenc.book.widgets.RECORDED` holds, at every state of :func:`states`:
    ``{"explorers": count, "problems": [...]}``; a problem is a title outside its figure, or a live
    form that does not open at the defaults."""
    from posenc.book.widgets import RECORDED

    problems = []
    for number, explorer in enumerate(RECORDED):
        # the live form opens at the defaults (a log slider is a SelectionSlider over its stops)
        live = [made.value for made in explorer.widget().children[0].children]
        defaults = [control.value for control in explorer.controls.values()]
        if live != defaults:
            problems.append(
                {
                    "chapter": chapter,
                    "explorer": number,
                    "state": "live widget",
                    "text": str(live),
                    "extent": f"instead of the defaults {defaults}",
                }
            )
        for values in states(explorer):
            explorer.render(**values)
            for problem in titles_outside(explorer.figure):
                problems.append({"chapter": chapter, "explorer": number, "state": values, **problem})
    return {"explorers": len(RECORDED), "problems": problems}


# --- in the test process: one run per chapter -------------------------------------------------------


@dataclass
class ChapterRun:
    """What the checks read from one run of a chapter's student edition."""

    notebook: object  # the executed notebook (nbformat), probe cells included
    stubs: int  # the student's stubs in it
    outputs: str  # every stream and text/plain output of the chapter's own cells
    evals: list = field(default_factory=list)  # (expression, what JupyterLab shows, what the website shows)
    eval_roles: int = 0  # {eval} roles in the edition's markdown
    explorers: dict = field(default_factory=dict)  # check_recorded's report
    explorer_cells: int = 0  # code cells of the edition whose statement starts ``Explorer(``


def _probe_cell(source: str):
    import nbformat

    return nbformat.v4.new_code_cell(source, metadata={"tags": ["posenc-probe"]})


def _with_probes(notebook, chapter: str):
    """A copy of ``notebook`` with the two probe cells added at its end (see the module's docstring)."""
    import copy

    probed = copy.deepcopy(notebook)
    expressions = [e for cell in probed.cells if cell.cell_type == "markdown" for e in EVAL_ROLE.findall(cell.source)]
    asked = {str(i): e for i, e in enumerate(expressions)}
    probed.cells.append(
        _probe_cell(
            f"import json as _posenc_json\n"
            f"print({EVAL_PROBE!r} + _posenc_json.dumps(get_ipython().user_expressions({asked!r})))"
        )
    )
    probed.cells.append(
        _probe_cell(
            f"import json as _posenc_json, sys as _posenc_sys\n"
            f"_posenc_sys.path.insert(0, {str(TESTS)!r})\n"
            f"from chapter_runs import check_recorded as _posenc_check\n"
            f"print({EXPLORER_PROBE!r} + _posenc_json.dumps(_posenc_check({chapter!r}), default=str))"
        )
    )
    return probed


@contextlib.contextmanager
def _environment(**values: str | None):
    """Set (or, for None, unset) environment variables for the block; restore them after."""
    saved = {name: os.environ.get(name) for name in values}
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _probe_line(cell, marker: str):
    text = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")
    (line,) = [line for line in text.splitlines() if line.startswith(marker)]
    return json.loads(line[len(marker) :])


@functools.cache
def student_run(edition: Path, stem: str) -> ChapterRun:
    """Execute ``edition/stem.ipynb`` once in this process (see the module's docstring) and read it."""
    import nbformat
    from myst_nb.core.variables import format_plain_text
    from nbclient import NotebookClient

    notebook = nbformat.read(edition / f"{stem}.ipynb", as_version=4)
    probed = _with_probes(notebook, stem)
    # the kernel inherits the environment at its start: the edition's own folder, as a student runs it
    environment = {"POSENC_RECORD_EXPLORERS": "1", "POSENC_LAB_SMOKE": "1", "POSENC_STATIC": None}
    with _environment(**environment):
        where = {"metadata": {"path": str(edition)}}
        NotebookClient(probed, timeout=600, kernel_name="python3", resources=where).execute()

    run = ChapterRun(notebook=probed, stubs=0, outputs="")
    own_outputs, glued, expressions = [], {}, []
    for cell in probed.cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type == "markdown":
            expressions += EVAL_ROLE.findall(cell.source)
        elif cell.cell_type != "code":
            continue
        elif "posenc-probe" not in tags:
            run.stubs += "student-stub" in tags
            run.explorer_cells += len(re.findall(r"^Explorer\(", cell.source, re.M))
            for output in cell.outputs:
                own_outputs.append(output.get("text", "") + str(output.get("data", {}).get("text/plain", "")))
                record = output.get("metadata", {}).get("scrapbook", {})
                if output.get("output_type") == "display_data" and "name" in record:  # myst-nb's glue output
                    glued[record["name"]] = output["data"][record["mime_prefix"] + "text/plain"]
        elif EVAL_PROBE.strip() in cell.source:
            answers = _probe_line(cell, EVAL_PROBE)
            for i, expression in enumerate(expressions):
                run.evals.append((expression, answers[str(i)], _on_the_website(expression, glued, format_plain_text)))
        else:
            run.explorers = _probe_line(cell, EXPLORER_PROBE)
    run.eval_roles = len(expressions)
    run.outputs = "\n".join(own_outputs)
    return run


# jupyterlab-myst 2.x, src/components/inlineExpression.tsx: content.replace(/^(["'])(.*)\1$/, '$2')
OUTER_QUOTES = re.compile(r"""^(["'])(.*)\1$""")


def in_jupyterlab(answer: dict) -> str:
    """What jupyterlab-myst shows for a user expression's answer: its text/plain, outer quotes stripped."""
    return OUTER_QUOTES.sub(r"\2", answer["data"]["text/plain"])


def _on_the_website(expression: str, glued: dict, format_plain_text) -> str | None:
    """What the website shows for ``glued("name:fmt")``: myst-nb's formatting of the glued output
    (posenc.book.eval_role); None when the chapter glued no such name."""
    match = re.fullmatch(r"""glued\(["']([^"']+)["']\)""", expression)
    if match is None:
        return None
    spec = match[1]
    name, colon, fmt = spec.rpartition(":")
    name, fmt = (name, fmt) if colon else (spec, "s")
    return format_plain_text(glued[name], fmt) if name in glued else None
