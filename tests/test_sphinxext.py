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


def _png_with_text(path, fontsize_pt, dpi=100):
    """A two-panel figure whose smallest text is ``fontsize_pt`` points, saved at ``dpi``."""
    import matplotlib.pyplot as plt

    from posenc.book import plotting

    with plt.rc_context(plotting.book_style()):
        fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3), dpi=dpi)
        left.plot([0, 1], [0, 1], label="a")
        left.legend(fontsize=fontsize_pt)
        right.set_title("title")
        fig.savefig(path)
        plt.close(fig)


def test_a_figure_png_is_boxed_with_the_width_that_makes_its_smallest_text_9px(tmp_path):
    from types import SimpleNamespace

    from PIL import Image

    from posenc.book.sphinxext import _box_readable_figures

    _png_with_text(tmp_path / "fig.png", 7.5)
    with Image.open(tmp_path / "fig.png") as png:
        width = png.width
    assert width == 800  # 8 inches at 100 dpi
    doc = nodes.section()
    doc += nodes.image(uri="fig.png", candidates={"*": "fig.png"})
    doc += nodes.image(uri="missing.png")  # not a file: left alone
    app = SimpleNamespace(srcdir=tmp_path, builder=SimpleNamespace(format="html"))
    _box_readable_figures(app, doc, "page")
    opening, image, closing, missing = doc.children
    # 7.5 pt at 100 dpi is 7.5 * 100 / 72 = 10.417 px; 9 px tall at 800 * 9 / 10.417 = 691.2 -> 692 CSS px
    assert 'style="--posenc-min-width:692px"' in opening.astext()
    assert 'data-smallest-text-px="10.417"' in opening.astext()
    assert isinstance(image, nodes.image) and closing.astext() == "</div>"
    assert isinstance(missing, nodes.image)


def test_a_png_without_the_record_is_left_alone(tmp_path):
    from types import SimpleNamespace

    from PIL import Image

    from posenc.book.sphinxext import _box_readable_figures

    Image.new("RGB", (40, 20), "white").save(tmp_path / "plain.png")
    doc = nodes.section()
    doc += nodes.image(uri="plain.png", candidates={"*": "plain.png"})
    before = doc.pformat()
    _box_readable_figures(SimpleNamespace(srcdir=tmp_path, builder=SimpleNamespace(format="html")), doc, "p")
    assert doc.pformat() == before
