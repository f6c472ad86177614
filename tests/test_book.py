"""The book: notebooks committed clean, every page built with warnings as errors, every notebook executed.

One build (``jupyter-book build --all -W -n --keep-going``) into a fresh output folder
executes every notebook top to bottom exactly once; the tests below read its results.
Execution times are written to ``_build/test-book/execution_times.json`` (a report, not
an assertion: timings belong in benchmarks).
"""

import ast
import json
import re
from pathlib import Path

import nbformat
import pytest

from conftest import BOOK_OUT as OUT
from conftest import ROOT, chapter_notebooks, toc_files

NOTEBOOKS = chapter_notebooks()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebooks_are_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            assert not cell.outputs, f"{path.name} cell {index} has outputs: the build executes notebooks"
            assert cell.execution_count is None, f"{path.name} cell {index} has an execution count"
        # jupyterlab-myst saves each {eval}'s value in its markdown cell; JupyterLab would show them
        # stale on opening, before the cells run
        assert "user_expressions" not in cell.metadata, f"{path.name} cell {index} keeps evaluated values"


# The smallest text a chapter may set, in points: 9 pt is 11 px at the explorers' 90 dpi (the
# book's style gives legends 10 pt and tick labels 11 pt; 8 pt and smaller text was hard to read in
# JupyterLab and on the site). Checked on every size a chapter writes by hand: ``fontsize=`` and
# ``labelsize=`` in any call (legends, notes, tick labels, titles), ``size=`` in text and annotations.
SMALLEST_TEXT_PT = 9
_NAMED_SMALL = ("small", "x-small", "xx-small", "smaller")


def small_text_sizes(source: str) -> list[str]:
    """Each size below SMALLEST_TEXT_PT that the code ``source`` sets by hand, as 'line N: name=value'."""
    small = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        names = {"fontsize", "labelsize"} | ({"size"} if called in ("text", "annotate", "suptitle") else set())
        for keyword in node.keywords:
            if keyword.arg not in names or not isinstance(keyword.value, ast.Constant):
                continue
            size = keyword.value.value
            if size in _NAMED_SMALL or (isinstance(size, (int, float)) and size < SMALLEST_TEXT_PT):
                small.append(f"line {node.lineno}: {keyword.arg}={size!r}")
    return small


def test_small_text_sizes_are_found_wherever_they_are_set():
    source = (
        "ax.legend(fontsize=8)\nax.text(0, 0, 'a', fontsize=6.5)\nax.set_xticks([0], ['L'], fontsize='small')\n"
        "ax.tick_params(labelsize=7)\nax.annotate('b', (0, 0), size=8)\n"
        "ax.legend(fontsize=9)\nax.text(0, 0, 'c', fontsize=10)\nrng.normal(size=8)\nax.set_title('t', fontsize=9.5)\n"
    )
    assert small_text_sizes(source) == [
        "line 1: fontsize=8",
        "line 2: fontsize=6.5",
        "line 3: fontsize='small'",
        "line 4: labelsize=7",
        "line 5: size=8",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_text_is_set_smaller_than_the_readable_minimum(path):
    small = []
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if cell.cell_type == "code":
            small += [f"cell {index}, {found}" for found in small_text_sizes(cell.source)]
    assert small == [], f"{path.name}: text below {SMALLEST_TEXT_PT} pt: {small}"


def test_math_text_has_no_escaped_underscores():
    """MathJax prints ``\\text{a\\_b}`` with its backslash: ``\\text`` is verbatim there.
    Code names in math use ``\\mathtt{a\\_b}`` (math mode, where ``\\_`` is an underscore)."""
    pages = NOTEBOOKS + sorted(ROOT.glob("*.md")) + sorted((ROOT / "chapters").glob("*.md"))
    found = []
    for path in pages:
        if path.suffix == ".ipynb":
            text = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")
        else:
            text = path.read_text()
        found += [f"{path.name}: {m}" for m in re.findall(r"\\text\{[^}]*\\_[^}]*\}", text)]
    assert found == [], f"escaped underscores inside \\text{{}}: {found}"


def test_every_notebook_is_in_the_table_of_contents():
    # every notebook of chapters/ is a numbered chapter (the tests find the chapters by that name) ...
    assert sorted((ROOT / "chapters").glob("*.ipynb")) == NOTEBOOKS
    # ... and the table of contents lists each, in their order
    listed = [page for page in toc_files() if page.startswith("chapters/") and (ROOT / f"{page}.ipynb").exists()]
    assert listed == [f"chapters/{path.stem}" for path in NOTEBOOKS], "_toc.yml and chapters/NN_*.ipynb differ"


def test_misconceptions_gallery_lists_every_misconception():
    gallery = (ROOT / "chapters" / "misconceptions.md").read_text()
    labels = set()
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            labels.update(re.findall(r"^\((misconception-[\w-]+)\)=", cell.source, re.M))
    assert len(labels) >= len(NOTEBOOKS)  # at least one per chapter
    missing = sorted(label for label in labels if f"<{label}>" not in gallery)
    assert missing == [], f"misconceptions.md does not link {missing}"


def test_api_page_documents_every_public_name():
    import posenc
    import posenc.book.browser_formulas
    import posenc.book.controls
    import posenc.book.data_files
    import posenc.book.lab_server
    import posenc.book.live
    import posenc.book.player
    import posenc.book.plotting
    import posenc.book.webfigure
    import posenc.book.widgets
    import posenc.course.editions
    import posenc.course.otter_export
    import posenc.exercises
    import posenc.nn

    text = (ROOT / "api.md").read_text()
    for name in posenc.__all__:
        assert re.search(rf"posenc(\.\w+)?\.{name}\b", text), f"api.md does not document posenc.{name}"
    modules = (posenc.nn, posenc.book.plotting, posenc.book.widgets, posenc.book.controls, posenc.book.player)
    modules += (posenc.book.webfigure, posenc.book.data_files, posenc.book.live, posenc.book.lab_server)
    modules += (posenc.exercises, posenc.course.editions, posenc.course.otter_export, posenc.book.browser_formulas)
    for module in modules:
        for name in module.__all__:
            assert f"{module.__name__}.{name}" in text, f"api.md does not document {module.__name__}.{name}"


@pytest.mark.book
def test_book_builds_with_warnings_as_errors(built_book):
    returncode, log, html = built_book
    problems = [line for line in log.splitlines() if "WARNING" in line or "ERROR" in line]
    assert returncode == 0, "book build failed:\n" + "\n".join(problems[-40:] or log.splitlines()[-40:])
    assert (html / "index.html").exists()


@pytest.mark.book
def test_punctuation_after_inline_math_is_kept_on_its_line(built_book):
    _, _, html = built_book
    page = (html / "chapters" / "08_rope.html").read_text()
    # "$d$, the head dimension": the math and its comma share one no-break span
    assert re.search(r'<span class="posenc-nobreak"><span class="math[^"]*">\\\(d\\\)</span>,</span>', page)


@pytest.mark.book
def test_every_toc_page_is_built(built_book):
    _, _, html = built_book
    for name in toc_files():
        assert (html / f"{name}.html").exists(), f"{name}.html was not built"


@pytest.mark.book
def test_every_notebook_executed_and_reports_its_time(built_book):
    from jupyter_cache import get_cache

    _, _, html = built_book
    records = {
        Path(r.uri).name: r.data.get("execution_seconds")
        for r in get_cache(OUT / "_build" / ".jupyter_cache").list_cache_records()
    }
    times = {}
    for path in NOTEBOOKS:
        assert path.name in records, f"{path.name} was not executed by the build"
        times[path.name] = round(records[path.name], 2)
        page = (html / "chapters" / f"{path.stem}.html").read_text()
        assert "cell_output" in page, f"{path.name}: the built page has no cell outputs"
    (OUT / "execution_times.json").write_text(json.dumps(times, indent=2))
    print("\nnotebook execution times (s):", json.dumps(times, indent=2))
