"""Every chapter explorer keeps its titles inside its figure, in every state a reader can reach
at the controls' extremes, and its live form opens at its defaults.

One worker process runs the chapters' code cells (matplotlib's Agg backend; ``Explorer.show``
records the explorer instead of displaying it), then renders each explorer at every
combination of its controls' extremes (a slider's minimum and maximum, every option of a
menu), at its defaults, and at each frame of its static player, and measures the suptitle
and the axes' titles there with the renderer. Running the file as a script is that worker.
"""

import contextlib
import io
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# 12 trains models for minutes; 15 is being rewritten with the lab. Both can join once they run quickly.
LEFT_OUT = ("12_", "15_")
CHAPTERS = sorted(p for p in (ROOT / "chapters").glob("[0-9][0-9]_*.ipynb") if not p.name.startswith(LEFT_OUT))
TOLERANCE_PX = 1.0


def states(explorer) -> list[dict]:
    """Control values to check: all combinations of extremes, the defaults, the player's frames."""
    extremes = {}
    for name, control in explorer.controls.items():
        if control.kind == "choice":
            extremes[name] = list(control.options)
        else:
            extremes[name] = list(dict.fromkeys(control.clamp(v) for v in (control.minimum, control.maximum)))
    defaults = {name: control.value for name, control in explorer.controls.items()}
    found = [dict(zip(extremes, combo, strict=True)) for combo in itertools.product(*extremes.values())]
    found.append(defaults)
    found += [dict(defaults, **{explorer.animate: frame}) for frame in explorer.frames]
    return found


def titles_outside(figure) -> list[dict]:
    """The suptitle and axes titles whose rendered extent leaves the figure."""
    renderer = figure.canvas.get_renderer()
    texts = [figure._suptitle] if figure._suptitle is not None else []
    for ax in figure.axes:
        texts += [ax.title, ax._left_title, ax._right_title]
    width, height = figure.bbox.width, figure.bbox.height
    outside = []
    for text in texts:
        if not text.get_visible() or not text.get_text().strip():
            continue
        box = text.get_window_extent(renderer)
        if (
            box.x0 < -TOLERANCE_PX
            or box.y0 < -TOLERANCE_PX
            or box.x1 > width + TOLERANCE_PX
            or box.y1 > height + TOLERANCE_PX
        ):
            outside.append(
                {
                    "text": text.get_text(),
                    "extent": [round(v) for v in box.extents],
                    "figure": [round(width), round(height)],
                }
            )
    return outside


def check_chapter(path: Path) -> tuple[int, list[dict]]:
    """Run a chapter's code cells, then every state of every explorer it shows: (explorers, problems)."""
    import matplotlib.pyplot as plt
    import nbformat

    from posenc.book import widgets

    shown = []
    widgets.Explorer.show = lambda self: shown.append(self)
    cwd = os.getcwd()
    os.chdir(path.parent)  # the chapters read their data relative to their folder
    try:
        namespace = {"__name__": "__main__"}
        with contextlib.redirect_stdout(io.StringIO()):
            for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
                if cell.cell_type == "code":
                    exec(compile(cell.source, f"{path.name}, cell {index}", "exec"), namespace)
                    plt.close("all")
    finally:
        os.chdir(cwd)
    problems = []
    for number, explorer in enumerate(shown):
        # the live form opens at the defaults (a log slider is a SelectionSlider over its stops)
        live = [made.value for made in explorer.widget().children[0].children]
        defaults = [control.value for control in explorer.controls.values()]
        if live != defaults:
            problems.append({"chapter": path.name, "explorer": number, "state": "live widget", "text": str(live)})
            problems[-1]["extent"] = f"instead of the defaults {defaults}"
        for values in states(explorer):
            explorer.render(**values)
            for problem in titles_outside(explorer.figure):
                problems.append({"chapter": path.name, "explorer": number, "state": values, **problem})
    return len(shown), problems


def test_every_explorer_title_stays_inside_its_figure():
    env = dict(os.environ, POSENC_STATIC="1", MPLBACKEND="Agg")
    result = subprocess.run(
        [sys.executable, __file__, *map(str, CHAPTERS)], capture_output=True, text=True, env=env, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["explorers"] >= len(CHAPTERS)  # every chapter here shows at least one
    problems = report["problems"]
    lines = [f"{p['chapter']} explorer {p['explorer']} at {p['state']}: {p['text']!r} {p['extent']}" for p in problems]
    assert problems == [], "titles outside the figure (x0, y0, x1, y1 in pixels):\n" + "\n".join(lines[:20])


@pytest.mark.parametrize("fontsize,outside", [(10, False), (40, True)])
def test_the_measure_catches_a_title_past_the_edge(fontsize, outside):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(3, 2), dpi=100)
    FigureCanvasAgg(figure)
    figure.subplots().set_title("a title of some length", fontsize=fontsize)
    figure.canvas.draw()
    assert bool(titles_outside(figure)) == outside


if __name__ == "__main__":
    import matplotlib

    matplotlib.use("Agg")
    total, found = 0, []
    for chapter in sys.argv[1:]:
        count, problems = check_chapter(Path(chapter))
        total, found = total + count, found + problems
    print(json.dumps({"explorers": total, "problems": found}, default=str))
