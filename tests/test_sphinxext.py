"""The book's Sphinx extension: punctuation stays on the line of the math before it."""

from docutils import nodes

from posenc.sphinxext import _keep_punctuation_with_math


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
