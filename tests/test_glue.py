"""posenc.book.glue: the value comes back unchanged (so a cell can assert on it), and a bad name is refused."""

import json
import re
import sys

import numpy as np
import pytest

from posenc.book.glue import glue, glued, glued_text

from conftest import chapter_notebooks


def test_glue_returns_the_value_it_stores():
    assert glue("test-value", 0.25) == 0.25


def test_without_myst_nb_the_value_is_printed_only_when_asked(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "myst_nb", None)  # import fails as on a machine without myst-nb
    assert glue("hidden", 3) == 3
    assert capsys.readouterr().out == ""
    assert glue("shown", 3, display=True) == 3
    assert capsys.readouterr().out == "shown = 3\n"


@pytest.mark.parametrize("name,error", [("", ValueError), ("  ", ValueError), (3, TypeError), (None, TypeError)])
def test_a_name_that_is_not_a_non_empty_string_is_refused(name, error):
    with pytest.raises(error, match="name must be a"):
        glue(name, 1.0)


def test_numpy_scalars_are_glued_as_python_numbers(monkeypatch):
    import numpy as np

    stored = {}
    monkeypatch.setattr("myst_nb.glue", lambda name, value, display: stored.update({name: value}))
    assert glue("x", np.float64(0.25)) == 0.25
    assert type(stored["x"]) is float and type(glue("n", np.int64(3))) is int


# --- glued(): the prose's {eval} roles, in JupyterLab as on the website --------------------------

CHAPTERS = chapter_notebooks()
EVAL_ROLE = re.compile(r"\{eval\}`([^`]*)`")


def markdown_of(path):
    return [
        "".join(cell["source"]) for cell in json.loads(path.read_text())["cells"] if cell["cell_type"] == "markdown"
    ]


def specs_in_chapters():
    """Every glued("spec") the chapters' prose quotes."""
    return [m[1] for path in CHAPTERS for text in markdown_of(path) for m in EVAL_ROLE.finditer(text)]


def test_every_number_in_the_prose_is_one_glued_call_and_no_glue_role_is_left():
    """The website renders only glued("name[:format]") (posenc.book.eval_role); JupyterLab cannot
    render {glue:text}, so none may remain."""
    from posenc.book.eval_role import GLUED_CALL

    expressions = [m[0] for path in CHAPTERS for text in markdown_of(path) for m in EVAL_ROLE.finditer(text)]
    assert len(expressions) > 400  # the chapters quote about 500 computed numbers
    assert [e for e in expressions if not GLUED_CALL.match(e[len("{eval}`") : -1])] == []
    leftovers = [(p.name, t[:80]) for p in CHAPTERS for t in markdown_of(p) if "{glue" in t]
    assert leftovers == []


def _myst_nb_text(value, fmt):
    """What the website shows for ``{glue:text}`name:fmt```: myst-nb's own formatting of the text/plain
    form IPython's display formatter gives the glued value."""
    from IPython.core.formatters import PlainTextFormatter
    from myst_nb.core.variables import format_plain_text

    return format_plain_text(PlainTextFormatter()(value), fmt)


VALUES = [
    0.0,
    0.1,
    2 / 3,
    -0.5,
    1e-12,
    3.0e7,
    12345.678,
    float("inf"),
    0,
    3,
    -7,
    1024,
    10_000_000,
    True,
    "a",
    "it's",
    "8,192",
    (1, 2),
    [0.5, 0.25],
]


@pytest.mark.parametrize(
    "fmt",
    sorted(
        {s.rpartition(":")[2] if ":" in s else "s" for s in specs_in_chapters()}
        | {"", "s", ".3f", ".1%", ",", ".2e", "d", ",.0f", ".3g"}
    ),
)
def test_glued_text_is_what_myst_nb_writes_for_every_format_the_book_uses(fmt):
    for value in VALUES:
        try:
            expected = _myst_nb_text(value, fmt)
        except (TypeError, ValueError) as error:
            with pytest.raises(type(error)):
                glued_text(value, fmt)
        else:
            assert glued_text(value, fmt) == expected, (value, fmt)


def test_glued_formats_the_value_glue_stored_under_its_name():
    glue("test-glued-ratio", np.float64(0.41666))
    assert glued("test-glued-ratio:.3f") == "0.417"
    assert glued("test-glued-ratio:.1%") == "41.7%"
    assert glued("test-glued-ratio") == "0.41666"  # no format: "s", as myst-nb's role
    glue("test-glued-count", 8192)
    assert glued("test-glued-count:,d") == "8,192"


def test_glued_names_a_missing_name_and_refuses_a_non_string():
    # what a reader stepping cell by cell sees in an error box where the prose quotes a later number
    with pytest.raises(KeyError, match=r"'never-glued' is not computed yet.*Run All Cells"):
        glued("never-glued:.3f")
    for spec in (0.5, "", "  "):
        with pytest.raises(TypeError, match="spec must be a non-empty string"):
            glued(spec)
    with pytest.raises(TypeError, match="fmt must be a format specification string"):
        glued_text(0.5, 3)


def test_a_glue_name_with_a_colon_is_refused_as_the_role_would_misread_it():
    with pytest.raises(ValueError, match="without ':'"):
        glue("ratio:1", 1.0)


@pytest.mark.parametrize("text", ["C:\\path", "tab\there", "zero\u200bwidth", 'it\'s "x"'])
def test_a_string_jupyterlab_would_show_escaped_is_refused(text):
    """JupyterLab shows repr(text) with one pair of quotes stripped; the website shows the text."""
    from IPython.lib.pretty import pretty

    assert pretty(text)[1:-1] != text  # the mistake the rule prevents: the two would differ
    with pytest.raises(ValueError, match="may not hold"):
        glue("awkward", text)


@pytest.mark.parametrize("text", ["in all 10 seeds", "it's", 'a "quoted" word', "0.5 ≈ ½"])
def test_a_string_both_places_show_alike_is_glued(text):
    from IPython.lib.pretty import pretty

    assert glue("plain", text) == text and glued("plain") == text
    assert pretty(text)[1:-1] == text


def test_the_website_role_refuses_what_glued_cannot_evaluate():
    from posenc.book.eval_role import GLUED_CALL

    assert GLUED_CALL.match('glued("ch08-bound-ratio:.3f")')["spec"] == "ch08-bound-ratio:.3f"
    assert GLUED_CALL.match("glued('ch08-count')")["spec"] == "ch08-count"
    for expression in ['glued("other::name")', 'glued("a") + 1', "glued(name)", 'glued("a\\b")', "1 + 1"]:
        assert GLUED_CALL.match(expression) is None, expression
