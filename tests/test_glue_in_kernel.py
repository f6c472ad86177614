"""The prose's numbers in JupyterLab: run a chapter's cells in a kernel in order and, at each
markdown cell, evaluate its ``{eval}`` expressions as jupyterlab-myst does (an execute request with
empty code and the expressions as ``user_expressions``; the ``text/plain`` result shown with one
pair of outer quotes stripped). Each must equal what the website shows for the same role: myst-nb's
formatting of the glued output that the kernel's cells left (posenc.book.eval_role).

Three chapters (a few seconds each) cover literal and computed glue names; tests/test_glue.py
checks every chapter's roles have the one form both places understand."""

import json
import re

import pytest
from jupyter_client.manager import start_new_kernel

from conftest import ROOT

pytestmark = pytest.mark.slow  # executes chapters

EVAL_ROLE = re.compile(r"\{eval\}`([^`]*)`")
# jupyterlab-myst 2.x, src/components/inlineExpression.tsx: content.replace(/^(["'])(.*)\1$/, '$2')
OUTER_QUOTES = re.compile(r"""^(["'])(.*)\1$""")


def run(kernel, code, **request):
    """Execute ``code``; return (reply content, outputs). Fails on an error in the cell."""
    outputs = []
    reply = kernel.execute_interactive(code, timeout=600, output_hook=outputs.append, store_history=False, **request)
    assert reply["content"]["status"] == "ok", f"{code[:200]}\n{reply['content'].get('evalue')}"
    return reply["content"], outputs


@pytest.mark.parametrize("chapter", ["01_why_order_matters", "15_what_the_papers_measured", "16_positions_in_practice"])
def test_every_eval_role_shows_in_the_kernel_what_the_website_shows(chapter):
    from myst_nb.core.variables import format_plain_text

    cells = json.loads((ROOT / "chapters" / f"{chapter}.ipynb").read_text())["cells"]
    manager, kernel = start_new_kernel(kernel_name="python3", cwd=str(ROOT / "chapters"))
    glued, compared = {}, 0
    try:
        for cell in cells:
            source = "".join(cell["source"])
            if cell["cell_type"] == "code":
                for output in run(kernel, source)[1]:
                    record = output["content"].get("metadata", {}).get("scrapbook", {})
                    if output["msg_type"] == "display_data" and "name" in record:  # myst-nb's glue output
                        glued[record["name"]] = output["content"]["data"][record["mime_prefix"] + "text/plain"]
                continue
            expressions = EVAL_ROLE.findall(source) if cell["cell_type"] == "markdown" else []
            if not expressions:
                continue
            reply, _ = run(kernel, "", user_expressions={str(i): e for i, e in enumerate(expressions)})
            for i, expression in enumerate(expressions):
                result = reply["user_expressions"][str(i)]
                assert result["status"] == "ok", f"{chapter}: {expression} -> {result.get('evalue')}"
                in_jupyterlab = OUTER_QUOTES.sub(r"\2", result["data"]["text/plain"])
                spec = re.fullmatch(r"""glued\(["']([^"']+)["']\)""", expression)[1]
                name, colon, fmt = spec.rpartition(":")
                name, fmt = (name, fmt) if colon else (spec, "s")
                on_the_website = format_plain_text(glued[name], fmt)
                assert in_jupyterlab == on_the_website, f"{chapter}: {expression}"
                assert in_jupyterlab.strip() and "glued" not in in_jupyterlab
                compared += 1
    finally:
        kernel.stop_channels()
        manager.shutdown_kernel(now=True)
    assert compared == sum(len(EVAL_ROLE.findall("".join(c["source"]))) for c in cells if c["cell_type"] == "markdown")
