"""A small Sphinx extension for the book's website (listed in ``_config.yml``).

* It adds the book's stylesheet (``_book_static/posenc-book.css``: code cells that fit 88
  columns, a slightly wider article on wide screens).
* It removes duplicate inline scripts from every page. Under Jupyter Book 1, sphinx-thebe
  adds its configuration script once per read phase, and a page that declares
  ``const THEBE_JS_URL`` twice stops with a JavaScript error. Scripts with a body are
  kept once, in their first position.
"""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).with_name("_book_static")


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


def _add_static(app):
    app.config.html_static_path.append(str(STATIC))


def setup(app):
    app.connect("builder-inited", _add_static)
    app.add_css_file("posenc-book.css")
    app.connect("html-page-context", _deduplicate_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
