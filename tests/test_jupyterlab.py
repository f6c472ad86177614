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

import pytest
from lab_driver import lab_server, move_every_control, open_and_run_all

from conftest import ROOT, chapter_notebooks, toc_files

CHAPTERS = [p.stem for p in chapter_notebooks()]
# a MyST role or directive name in braces, an unevaluated glued(...) call, a code fence or a colon fence
RAW_MYST = re.compile(r"\{[a-z][\w:-]*\}|glued\(|```|:::")
TRACK_PX, GAP_PX = 200, 8


@pytest.fixture(scope="session")
def lab(browser, tmp_path_factory):  # browser first: its CI=true rule for a missing Chromium
    # one JupyterLab per worker for the run; chapter 12 trains a few steps (the book build trains it fully)
    with lab_server(tmp_path_factory.mktemp("jupyterlab"), POSENC_LAB_SMOKE="1") as base:
        yield base


def explorers_in(chapter):
    """How many explorers the chapter shows: code cells whose statement starts ``Explorer(``."""
    cells = json.loads((ROOT / "chapters" / f"{chapter}.ipynb").read_text())["cells"]
    return sum(len(re.findall(r"^Explorer\(", "".join(c["source"]), re.M)) for c in cells if c["cell_type"] == "code")


def test_every_chapter_is_covered():
    # the parametrized test below takes every chapter of the table of contents; most show explorers
    assert CHAPTERS == [Path(page).name for page in toc_files() if re.match(r"chapters/\d\d_", page)]
    assert sum(explorers_in(c) > 0 for c in CHAPTERS) > len(CHAPTERS) / 2


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_runs_renders_and_explores_in_jupyterlab(lab, browser, chapter):
    page, _, page_errors = open_and_run_all(browser, lab, chapter)
    try:
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
    finally:
        page.context.close()
