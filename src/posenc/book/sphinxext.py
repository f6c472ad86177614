"""A small Sphinx extension for the book's website (listed in ``_config.yml``).

* It adds the book's stylesheet (``_book_static/posenc-book.css``: code cells that fit 88
  columns, a slightly wider article on wide screens).
* It links the explorers' player (:data:`posenc.book.player.PLAYER_FILES`: styles, browser
  formulas, player) on each page that has an explorer, and takes out of that page the copies
  that every explorer's HTML carries inline for a notebook's output
  (:func:`posenc.book.player.player_code`): the browser loads the code once for the whole site
  instead of once per explorer. The files are in the page's head, so they are defined before
  the explorers' own scripts call them.
* It removes duplicate inline scripts from every page. Under Jupyter Book 1, sphinx-thebe
  adds its configuration script once per read phase, and a page that declares
  ``const THEBE_JS_URL`` twice stops with a JavaScript error. Scripts with a body are
  kept once, in their first position.
* It leaves out the theme's icon script. pydata-sphinx-theme draws its icons twice over: its
  stylesheet defines Font Awesome's web font and a glyph for every icon class, and
  ``_static/scripts/fontawesome.js`` (about 1.4 MB, 0.54 MB gzipped: a third of a chapter's
  first visit) swaps each icon for an inline SVG. The script is replaced by a one-line stub
  after the build, so the icons come from the stylesheet's font.
* It keeps every figure's text readable on a phone. A notebook's PNG figure records the size of
  its smallest text (:func:`posenc.book.plotting.record_smallest_text`); each such image is put
  in a box ``posenc-figure-box`` whose custom property ``--posenc-min-width`` is the width at
  which that text is :data:`~posenc.book.player.READABLE_PX` (9) CSS pixels tall. On narrow screens the image keeps that
  width and the box scrolls sideways, the page never (``posenc-book.css``, ``posenc-book.js``).
* It adds the ``scaling-methods`` directive: the API page's table of scaling methods, written
  from what each registered method declares (:mod:`posenc.book.methods_table`).
* It puts a form before each prediction exercise's solution, where the reader commits to an
  answer, is told whether it was right, and the solution opens (:mod:`posenc.book.answer_forms`).
* It keeps punctuation on the line of the inline math it follows. Browsers may break a
  line between typeset math (an inline block) and the comma after it, which leaves the
  comma alone at the start of a line; the pair is wrapped in a ``posenc-nobreak`` span.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes

from .player import PLAYER_FILES, STATIC, min_width_css, player_code
from .plotting import SMALLEST_TEXT_KEY

EXPLORER_MARK = 'class="posenc-explorer"'


def _deduplicate_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        body = getattr(script, "attributes", {}).get("body") if hasattr(script, "attributes") else None
        key = ("body", body) if body else ("file", str(script))
        if key in seen:
            continue
        seen.add(key)
        unique.append(script)
    context["script_files"] = unique


_PUNCTUATION = re.compile(r"[,.;:!?)\]\u2019\u201d]+")


def _keep_punctuation_with_math(app, doctree, docname):
    for math in list(doctree.findall(nodes.math)):
        parent = math.parent
        index = parent.index(math)
        following = parent[index + 1] if index + 1 < len(parent) else None
        if not isinstance(following, nodes.Text):
            continue
        match = _PUNCTUATION.match(str(following))
        if not match:
            continue
        rest = str(following)[match.end() :]
        wrapper = nodes.inline(classes=["posenc-nobreak"])
        parent.replace(math, wrapper)
        wrapper += [math, nodes.Text(match.group())]
        if rest:
            parent.replace(following, nodes.Text(rest))
        else:
            parent.remove(following)


def _image_file(app, image: nodes.image) -> Path | None:
    uri = image.get("candidates", {}).get("*") or image.get("uri", "")
    for path in (Path(app.srcdir) / uri, Path(uri)):
        if path.suffix.lower() == ".png" and path.is_file():
            return path
    return None


def _smallest_text(path: Path) -> tuple[int, float] | None:
    """A PNG's width in pixels and the smallest text it records (:data:`SMALLEST_TEXT_KEY`), if any."""
    from PIL import Image

    with Image.open(path) as png:
        recorded = png.text.get(SMALLEST_TEXT_KEY) if hasattr(png, "text") else None
        return (png.width, float(recorded)) if recorded else None


def _box_readable_figures(app, doctree, docname):
    """Put each PNG that records its smallest text in a box that scrolls it sideways on a phone."""
    if getattr(app.builder, "format", None) != "html":
        return
    for image in list(doctree.findall(nodes.image)):
        path = _image_file(app, image)
        found = _smallest_text(path) if path else None
        if not found:
            continue
        width, smallest = found
        parent = image.parent
        index = parent.index(image)
        opening = (
            f'<div class="posenc-figure-box" style="{min_width_css(width, smallest)}" '
            f'data-smallest-text-px="{smallest:g}">'
        )
        parent.insert(index + 1, nodes.raw("", "</div>", format="html"))
        parent.insert(index, nodes.raw("", opening, format="html"))


def _link_player(app, pagename, templatename, context, doctree):
    """On a page with an explorer: link the player's files, drop the inline copies of them."""
    body = context.get("body")
    if not body or EXPLORER_MARK not in body:
        return
    context["body"] = body.replace(player_code(), "")
    for name in PLAYER_FILES:
        if name.endswith(".css"):
            app.add_css_file(name)
        else:
            app.add_js_file(name)


ICON_SCRIPT = Path("_static") / "scripts" / "fontawesome.js"
ICON_STUB = "/* posenc: the theme's icons come from its stylesheet's web font; see posenc.book.sphinxext */\n"


def _drop_icon_script(app, exception) -> None:
    """Replace the theme's SVG icon script in the built site by a stub (and drop its source map)."""
    if exception is not None or getattr(app.builder, "format", None) != "html":
        return
    script = Path(app.outdir) / ICON_SCRIPT
    if script.exists():
        script.write_text(ICON_STUB)
    script.with_name(script.name + ".map").unlink(missing_ok=True)


def _add_static(app):
    app.config.html_static_path.append(str(STATIC))


def setup(app):
    from .methods_table import ScalingMethodsTable

    app.add_directive("scaling-methods", ScalingMethodsTable)
    app.setup_extension("posenc.book.citation")
    app.setup_extension("posenc.book.answer_forms")
    app.setup_extension("posenc.book.eval_role")
    app.connect("builder-inited", _add_static)
    app.add_css_file("posenc-book.css")
    app.add_js_file("posenc-book.js")
    app.connect("html-page-context", _link_player)  # before _deduplicate_scripts copies the page's list
    app.connect("html-page-context", _deduplicate_scripts, priority=900)
    app.connect("doctree-resolved", _keep_punctuation_with_math)
    app.connect("doctree-resolved", _box_readable_figures)
    app.connect("build-finished", _drop_icon_script)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
