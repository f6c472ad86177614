"""Every chapter explorer keeps its titles inside its figure, in every state a reader can reach
at the controls' extremes, and its live form opens at its defaults.

Each chapter's student edition runs once (tests/chapter_runs.py: ``Explorer.show`` records the
explorer instead of displaying it); in that kernel, each recorded explorer is rendered at every
combination of its controls' extremes (a slider's minimum and maximum, every option of a menu), at
its defaults, and at each frame of its static player, and the suptitle and the axes' titles are
measured there with the renderer.
"""

import pytest
from chapter_runs import student_run, titles_outside

from conftest import chapter_notebooks


@pytest.mark.parametrize("chapter", [p.stem for p in chapter_notebooks()])
def test_every_explorer_title_stays_inside_its_figure(chapter, student_edition):
    run = student_run(student_edition, chapter)
    report = run.explorers
    assert report["explorers"] == run.explorer_cells  # each explorer cell recorded its explorer
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
