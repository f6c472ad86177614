"""The book's Sphinx extension: punctuation stays on the line of the math before it."""

from docutils import nodes

from posenc.book.sphinxext import _keep_punctuation_with_math


def paragraph(*children):
    node = nodes.paragraph()
    node += list(children)
    return node


def test_comma_after_math_is_wrapped_with_it():
    para = paragraph(nodes.Text("width "), nodes.math(text="d"), nodes.Text(", the head dimension"))
    _keep_punctuation_with_math(None, para, "page")
    assert [type(child).__name__ for child in para.children] == ["Text", "inline", "Text"]
    wrapper = para[1]
    assert wrapper["classes"] == ["posenc-nobreak"]
    assert isinstance(wrapper[0], nodes.math) and wrapper[0].astext() == "d"
    assert wrapper[1].astext() == ","
    assert para[2].astext() == " the head dimension"
    assert para.astext() == "width d, the head dimension"


def test_math_followed_by_a_word_or_nothing_is_left_alone():
    para = paragraph(nodes.math(text="x"), nodes.Text(" and "), nodes.math(text="y"))
    before = para.pformat()
    _keep_punctuation_with_math(None, para, "page")
    assert para.pformat() == before


def test_punctuation_run_only_is_moved_and_empty_text_removed():
    para = paragraph(nodes.Text("("), nodes.math(text="q"), nodes.Text(")."))
    _keep_punctuation_with_math(None, para, "page")
    assert [type(child).__name__ for child in para.children] == ["Text", "inline"]
    assert para[1][1].astext() == ")."


def test_the_icon_script_is_replaced_after_an_html_build_only(tmp_path):
    from types import SimpleNamespace

    from posenc.book.sphinxext import ICON_SCRIPT, ICON_STUB, _drop_icon_script

    script = tmp_path / ICON_SCRIPT
    script.parent.mkdir(parents=True)
    script.write_text("x" * 1000)
    (script.parent / "fontawesome.js.map").write_text("{}")
    latex = SimpleNamespace(outdir=tmp_path, builder=SimpleNamespace(format="latex"))
    _drop_icon_script(latex, None)
    assert script.read_text() == "x" * 1000  # other builders: untouched
    html = SimpleNamespace(outdir=tmp_path, builder=SimpleNamespace(format="html"))
    _drop_icon_script(html, RuntimeError("the build failed"))
    assert script.read_text() == "x" * 1000  # a failed build: untouched
    _drop_icon_script(html, None)
    assert script.read_text() == ICON_STUB and not (script.parent / "fontawesome.js.map").exists()
