"""posenc.book.eval_role: on the website ``{eval}`glued("name:fmt")``` shows the glued value as
myst-nb's ``{glue:text}`` does, and any other expression, or a name nothing glued, fails the
build (warnings are errors). A real Sphinx build of a one-page project with a notebook whose
outputs hold glued values (execution off, so no kernel runs)."""

import subprocess
import sys

import nbformat
import pytest

pytestmark = pytest.mark.slow  # a Sphinx build per test, a few seconds each


def glue_output(name, value):
    """The output myst-nb's glue() leaves in a cell: the value's text/plain under the glue name."""
    return nbformat.v4.new_output(
        "display_data", data={"text/plain": repr(value)}, metadata={"scrapbook": {"name": name, "mime_prefix": ""}}
    )


def build(tmp_path, prose):
    notebook = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("glue('ratio', 0.41666)\nglue('count', 8192)\nglue('label', 'RoPE')")
    code.outputs = [glue_output("ratio", 0.41666), glue_output("count", 8192), glue_output("label", "RoPE")]
    notebook.cells = [nbformat.v4.new_markdown_cell("# Page"), code, nbformat.v4.new_markdown_cell(prose)]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, tmp_path / "index.ipynb")
    (tmp_path / "conf.py").write_text(
        "extensions = ['myst_nb', 'posenc.book.eval_role']\nnb_execution_mode = 'off'\nexclude_patterns = ['_build']\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(tmp_path), str(tmp_path / "_build")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    page = tmp_path / "_build" / "index.html"
    return result, page.read_text() if page.exists() else ""


def test_glued_calls_show_the_glued_values_formatted_as_glue_text_would(tmp_path):
    result, page = build(
        tmp_path,
        'At most {eval}`glued("ratio:.3f")` ({eval}`glued("ratio:.1%")`), '
        "{eval}`glued('count:,d')` tokens, {eval}`glued(\"label\")`.",
    )
    assert result.returncode == 0, result.stderr
    assert 'At most <span class="pasted-text">0.417</span> (<span class="pasted-text">41.7%</span>)' in page
    assert '<span class="pasted-text">8,192</span> tokens, <span class="pasted-text">RoPE</span>.' in page
    assert "glued(" not in page


@pytest.mark.parametrize(
    "prose,message",
    [
        ("{eval}`1 + 1`", "renders only glued"),
        ('{eval}`glued("ratio:.3f") + "x"`', "renders only glued"),
        ('{eval}`glued("missing:.3f")`', "missing"),
        ('{eval}`glued("label:.3f")`', "Failed to format"),
    ],
)
def test_any_other_expression_or_an_unglued_name_fails_the_build(tmp_path, prose, message):
    result, _ = build(tmp_path, prose)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
