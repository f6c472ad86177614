"""The chapters in JupyterLab, as a reader who ran ``make lab`` meets them: JupyterLab 4.5 and
jupyterlab-myst at the pins of requirements-lab.txt (run here from .venv, which also has myst-nb),
each chapter opened in Chromium, Run All, then every live control moved once (tests/lab_driver.py
drives it; the repository's notebooks stay untouched, JupyterLab works on a copy).

Each chapter: every cell runs with no error or stderr output and no page error; the prose is
rendered (no raw directive, role or ``{eval}`` expression left, no error box or unknown-directive
box in its place: each computed number shows its value); each explorer the chapter shows (a code
cell starting ``Explorer(``) draws exactly one figure, at its own pixel size or smaller (CSS
pixels); every slider's track is at least 200 px and each control stands apart from the next;
every control redraws the figure with its new value, and the state the canvas shows at the end (often
one the kernel sent ahead, posenc.book.live) is what the kernel draws for it, pixel for pixel. Latencies are measured by
benchmarks/bench_jupyterlab.py, not asserted here."""

import json
import re
from pathlib import Path

import nbformat
import pytest
from lab_driver import Reader, lab_server, move_every_control, open_and_run_all

from posenc.course.folding import expected_folds, folds_of

from conftest import ROOT, chapter_notebooks, toc_files

CHAPTERS = [p.stem for p in chapter_notebooks()]
# a MyST role or directive name in braces, an unevaluated glued(...) call, a code fence or a colon fence
RAW_MYST = re.compile(r"\{[a-z][\w:-]*\}|glued\(|```|:::")
TRACK_PX, GAP_PX = 200, 8


# the warnings JupyterLab logs when an extension was built for other versions of its modules
VERSION_WARNINGS = ("Unsatisfied version", "No satisfying version")
XREF_ERROR = re.compile(r"Cross reference target was not found: (\S+)")


@pytest.fixture(scope="session")
def lab_root(tmp_path_factory):
    return tmp_path_factory.mktemp("jupyterlab")


@pytest.fixture(scope="session")
def lab(browser, lab_root):  # browser first: its CI=true rule for a missing Chromium
    # one JupyterLab per worker for the run; chapter 12 trains a few steps (the book build trains it fully).
    # The chapters are served without their fold flags, as a JupyterLab without the book's extension
    # saves them: the extension folds them again on open.
    with lab_server(lab_root, folded=False, POSENC_LAB_SMOKE="1") as base:
        yield base


@pytest.fixture(scope="session")
def reader(browser, lab):
    # one JupyterLab page per worker, chapter after chapter (lab_driver.Reader); a failed test drops it
    kept = Reader(browser, lab)
    yield kept
    kept.discard()


def as_folds(keys):
    """{"source": bool, "outputs": bool} from a cell's fold keys (posenc.course.folding)."""
    return {"source": bool(keys.get("source_hidden")), "outputs": bool(keys.get("outputs_hidden"))}


def folds_expected(chapter):
    """Per cell of the repository's chapter, how the book folds it (only code cells fold outputs)."""
    return [as_folds(f) for f in expected_folds(nbformat.read(ROOT / "chapters" / f"{chapter}.ipynb", as_version=4))]


def explorers_in(chapter):
    """How many explorers the chapter shows: code cells whose statement starts ``Explorer(``."""
    cells = json.loads((ROOT / "chapters" / f"{chapter}.ipynb").read_text())["cells"]
    return sum(len(re.findall(r"^Explorer\(", "".join(c["source"]), re.M)) for c in cells if c["cell_type"] == "code")


def test_every_chapter_is_covered():
    # the parametrized test below takes every chapter of the table of contents; most show explorers
    assert CHAPTERS == [Path(page).name for page in toc_files() if re.match(r"chapters/\d\d_", page)]
    assert sum(explorers_in(c) > 0 for c in CHAPTERS) > len(CHAPTERS) / 2


def assert_folded_as_the_book_folds(page, chapter):
    """Run All folds nothing open: what the book folds (solutions, hidden inputs and outputs) is
    folded after the run, in a copy that had no fold flags when it was opened."""
    want = folds_expected(chapter)
    shown = page.evaluate("() => posencLab.folds()")
    assert len(shown) == len(want)
    unfolded = [
        (i, w, s)
        for i, (w, s) in enumerate(zip(want, shown, strict=True))
        if s["source"] != w["source"] or (s["outputs"] is not None and s["outputs"] != w["outputs"])
    ]
    assert unfolded == [], f"{chapter}: cells folded otherwise than the book folds them: {unfolded[:4]}"


def assert_every_number_evaluated(page, chapter):
    """Every markdown cell's {eval} roles got their values, whatever JupyterLab had drawn at Run All."""
    try:
        page.wait_for_function("() => posencLab.evaluated().every(c => c.done)", timeout=60_000)
    except Exception:
        pass  # the assertion says which
    missing = [c["i"] for c in page.evaluate("() => posencLab.evaluated()") if not c["done"]]
    assert missing == [], f"{chapter}: markdown cells whose {{eval}} roles have no values: {missing}"


def assert_a_save_keeps_the_folds(page, chapter, root):
    """The file JupyterLab writes on a save folds what the book folds."""
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000)
    saved = json.loads((root / "chapters" / f"{chapter}.ipynb").read_text())["cells"]
    written = [as_folds(folds_of(c)) for c in saved]
    lost = [(i, w, s) for i, (w, s) in enumerate(zip(folds_expected(chapter), written, strict=True)) if w != s]
    assert lost == [], f"{chapter}: the saved file folds otherwise than the book: {lost[:4]}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_runs_renders_and_explores_in_jupyterlab(lab, lab_root, browser, reader, chapter):
    page, _, page_errors = open_and_run_all(browser, lab, chapter, reader=reader)
    try:
        assert_folded_as_the_book_folds(page, chapter)
        assert_every_number_evaluated(page, chapter)
        # the prose: jupyterlab-myst renders each {eval} once the kernel answers; give it time
        try:
            page.wait_for_function("() => !posencLab.prose().some(t => t.includes('glued('))", timeout=60_000)
        except Exception:
            pass  # the assertion below says which
        prose = page.evaluate("() => posencLab.prose()")
        assert len(prose) > 10, f"{chapter}: {len(prose)} rendered markdown cells"
        raw = [m.string[max(0, m.start() - 40) : m.end() + 40] for t in prose for m in RAW_MYST.finditer(t)]
        assert raw == [], f"{chapter}: raw MyST in the rendered prose: {raw[:5]}"
        not_rendered = page.evaluate("() => posencLab.proseErrors()")
        assert not_rendered == [], f"{chapter}: expressions or directives not rendered: {not_rendered[:3]}"

        errors = page.evaluate("() => posencLab.errorOutputs()")
        assert errors == [] and page_errors == [], f"{chapter}: {errors[:3]} {page_errors[:3]}"

        cells = page.evaluate("() => posencLab.codeCells()")
        shown = [c["images"] for c in cells if c["images"]]
        assert shown == [1] * explorers_in(chapter), f"{chapter}: figures per explorer cell {shown}"
        for size in page.evaluate("() => posencLab.figureSizes()"):
            assert size["live"], f"{chapter}: a PNG figure, not the live canvas (posenc.book.live)"
            assert 0 < size["shown"] <= size["natural"] + 0.5, f"{chapter}: figure scaled up {size}"
        for controls in page.evaluate("() => posencLab.controlLayout()"):
            for control in controls:
                assert control["track"] is None or control["track"] >= TRACK_PX, f"{chapter}: {control}"
                assert control["gap"] is None or control["gap"] >= GAP_PX, f"{chapter}: {control}"

        moves = move_every_control(page)
        assert len(moves) == sum(len(c) for c in page.evaluate("() => posencLab.controlLayout()")) > 0
        for move in moves:
            assert not move.get("timeout"), f"{chapter}: no new figure after moving {move}"
            assert move["after"] != move["before"], f"{chapter}: the readout did not change: {move}"
        # the last state painted (often one sent ahead) is what the kernel draws for it, pixel for pixel
        page.wait_for_function("() => !posencLab.liveMatches().includes(null)", timeout=30_000)
        assert all(page.evaluate("() => posencLab.liveMatches()")), (
            f"{chapter}: a canvas differs from the kernel's frame"
        )
        redraw_errors = [e for c in page.evaluate("() => posencLab.codeCells()") for e in c["redrawErrors"]]
        assert redraw_errors == [], f"{chapter}: {redraw_errors}"
        assert page.evaluate("() => posencLab.errorOutputs()") == [] and page_errors == []

        # links: every {doc} link names a chapter or page beside the chapter (the extension opens it),
        # every reference is resolved or made a link, every image loads, nothing is answered 404
        try:
            page.wait_for_function("() => posencLab.links().unresolved.length === 0", timeout=10_000)
        except Exception:
            pass
        links = page.evaluate("() => posencLab.links()")
        targets = [f for f in links["files"] if not any((lab_root / (f + e)).is_file() for e in ("", ".ipynb", ".md"))]
        assert targets == [], f"{chapter}: links to files that are not there: {targets}"
        assert links["unresolved"] == [], f"{chapter}: references left unresolved: {links['unresolved']}"
        assert all(i["width"] > 0 for i in links["images"] if i["complete"]), f"{chapter}: {links['images']}"
        assert page.failed_requests == [], f"{chapter}: {page.failed_requests[:3]}"
        console = [text for kind, text in page.console_messages if kind in ("error", "warning")]
        assert [t for t in console if t.startswith(VERSION_WARNINGS)] == [], f"{chapter}: extension versions"
        labels = {m.group(1) for t in console for m in [XREF_ERROR.search(t)] if m}
        assert labels == set(), f"{chapter}: references jupyterlab-myst could not resolve: {labels}"

        assert_a_save_keeps_the_folds(page, chapter, lab_root)
    except BaseException:
        reader.discard()
        raise


@pytest.fixture(scope="module")
def windowed_lab(browser, tmp_path_factory):
    # JupyterLab's own default windowing, for a reader who chose it in Settings (the book's is "none")
    root = tmp_path_factory.mktemp("jupyterlab-default")
    with lab_server(root, folded=False, windowing="contentVisibility", POSENC_LAB_SMOKE="1") as base:
        kept = Reader(browser, base)
        yield base, root, kept
        kept.discard()


@pytest.mark.parametrize("chapter", ["02_sinusoidal_encodings", "08_rope"])
def test_run_all_at_once_with_jupyterlabs_own_windowing(windowed_lab, browser, chapter):
    """With JupyterLab's own default windowing (only some cells in the page), Run All clicked as soon as
    the kernel is idle: every number gets its value (the book's extension runs again a markdown cell
    Run All reached before JupyterLab drew it), no solution opens, a save keeps the folds. The one
    page error allowed is JupyterLab's own: its cell toolbar reads the rendered form of the active
    markdown cell before that cell has finished rendering (Run All ends on the last cell;
    ``_markdownOverlapsToolbar`` in @jupyterlab/cell-toolbar 4.5.11, with or without the book's extension)."""
    base, root, windowed_reader = windowed_lab
    page, _, page_errors = open_and_run_all(browser, base, chapter, reader=windowed_reader)
    try:
        assert_folded_as_the_book_folds(page, chapter)
        assert_every_number_evaluated(page, chapter)
        ours = [e for e in page_errors if re.search(r"\n\s*at (\S+)", e).group(1) != "p._markdownOverlapsToolbar"]
        assert ours == [], f"{chapter}: {ours[:3]}"
        assert_a_save_keeps_the_folds(page, chapter, root)
    except BaseException:
        windowed_reader.discard()
        raise


# the notebook in front (the others stay in the page, hidden)
HERE = ".jp-NotebookPanel:not(.lm-mod-hidden) "


def test_links_open_their_targets_in_jupyterlab(lab, browser, reader):
    """A reader's clicks: a chapter link opens the chapter, a reference to an exercise further down
    or to a section far up scrolls to its cell, the notation link opens the page, chapter 8's figure
    loads."""
    page, page_errors = reader.open("13_conventions_and_bugs")
    current = "() => window.jupyterapp.shell.currentWidget.context.path"

    def cell_with(pattern):  # the index of the open notebook's first cell whose source matches
        find = f"c => /{pattern}/.test(c.model.sharedModel.getSource())"
        return page.evaluate(f"() => posencLab.cells().findIndex({find})")

    def scroll_to(index):  # JupyterLab draws a cell when it comes into view
        page.evaluate(f"() => window.jupyterapp.shell.currentWidget.content.scrollToItem({index}, 'center')")

    try:
        page.wait_for_function("() => posencLab.kernelIdle()", timeout=120_000)
        # the exercise reference in the chapter's introduction: resolved by jupyterlab-myst ("Exercise 4"),
        # or, if it could not, a link the book's extension names by the exercise; either way to its cell
        scroll_to(cell_with("\\{ref\\}`ex-ch13-gqa`"))
        # (a locator: jupyterlab-myst may draw the cell anew between finding the element and clicking it)
        xref = page.locator(
            f"{HERE}.jp-MarkdownCell a[href='#ex-ch13-gqa'], "
            f"{HERE}.jp-MarkdownCell .posenc-xref[data-posenc-label='ex-ch13-gqa']"
        ).first
        assert re.fullmatch(r"Exercise\s\d+|Exercise: .+", xref.text_content(timeout=30_000)), xref.text_content()
        xref.click()
        target = cell_with(":label: ex-ch13-gqa")
        page.wait_for_function(
            f"() => {{ const r = posencLab.cells()[{target}].node.getBoundingClientRect();"
            " return r.height > 0 && r.top >= 0 && r.top < window.innerHeight; }",
            timeout=10_000,
        )

        scroll_to(cell_with("\\{doc\\}`chapter 2 <02_sinusoidal_encodings>`"))
        page.locator(HERE + ".jp-MarkdownCell a[href*='/files/chapters/02_sinusoidal_encodings']").first.click()
        page.wait_for_function(f"() => ({current})() === 'chapters/02_sinusoidal_encodings.ipynb'", timeout=30_000)
        page.wait_for_function("() => posencLab.kernelIdle()", timeout=120_000)
        # "the heat map above", 33 cells up: the reference scrolls to the section's cell
        scroll_to(cell_with("the heat map above"))
        heat_map = HERE + ".jp-MarkdownCell a[href='#ch02-heat-map']:text('the heat map above')"
        page.locator(heat_map).first.click(timeout=30_000)
        page.wait_for_function(
            "() => window.jupyterapp.shell.currentWidget.content.activeCell.model.sharedModel.getSource()"
            ".includes('(ch02-heat-map)=')",
            timeout=10_000,
        )

        scroll_to(cell_with("\\{doc\\}`notation`"))
        page.locator(HERE + ".jp-MarkdownCell a[href*='/files/chapters/notation']").first.click()
        page.wait_for_function(f"() => ({current})() === 'chapters/notation.md'", timeout=30_000)
        chapter_8 = "'chapters/08_rope.ipynb'"
        page.evaluate(f"() => {{ window.jupyterapp.commands.execute('docmanager:open', {{path: {chapter_8}}}); }}")
        page.wait_for_function(f"() => ({current})() === 'chapters/08_rope.ipynb'", timeout=30_000)
        page.wait_for_function("() => posencLab.kernelIdle()", timeout=120_000)
        scroll_to(cell_with("rope_rotation.svg"))
        image = page.wait_for_selector(HERE + ".jp-MarkdownCell img[src*='rope_rotation.svg']", timeout=30_000)
        image.scroll_into_view_if_needed()
        page.wait_for_function("(i) => i.complete && i.naturalWidth > 0", arg=image, timeout=10_000)
        assert page.failed_requests == [] and page_errors == [], (page.failed_requests[:3], page_errors[:3])
    except BaseException:
        reader.discard()
        raise
