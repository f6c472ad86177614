"""Explorers: controls clamp, callbacks never raise, the static player is self-contained and accessible."""

import base64
import math
import re

import numpy as np
import pytest

from posenc.book import Explorer, browser_formulas, choice, computed_in_browser, slider, webfigure
from posenc.book.controls import format_value
from posenc.book.widgets import static_mode


def explorer_setup():
    x = np.linspace(0, 10, 200)

    def setup(fig):
        ax = fig.subplots()
        (line,) = ax.plot(x, np.sin(x))
        ax.set(xlabel="position", ylabel="value", ylim=(-1.1, 1.1))

        def update(speed, shape="sin"):
            line.set_ydata(np.sin(speed * x) if shape == "sin" else np.cos(speed * x))
            return [line]

        return update

    return setup


def line_explorer(**kwargs):
    setup = explorer_setup()
    controls = {"speed": slider(0.5, 2.0, 1.0, step=0.5), "shape": choice(["sin", "cos"])}

    def alt(speed, shape):
        return f"a {shape} wave at speed {speed}"

    return Explorer(setup, controls, animate="speed", alt=alt, **kwargs)


def test_slider_kinds_and_clamping():
    s = slider(4, 64, 16, step=4)
    assert s.kind == "int" and s.clamp(1000) == 64 and s.clamp(-5) == 4 and s.clamp(17) == 16
    assert s.clamp("nonsense") == 16 and s.clamp(float("nan")) == 16
    f = slider(0.0, 1.0, 0.5, step=0.1)
    assert f.kind == "float" and f.clamp(0.73) == pytest.approx(0.7) and f.clamp(7) == 1.0
    log = slider(10.0, 1e5, 1e4, log=True)
    assert log.kind == "log" and log.clamp(1e9) == 1e5
    assert log.default_frames()[0] == 10.0 and log.default_frames()[-1] == pytest.approx(1e5)
    c = choice(["a", "b"], "b")
    assert c.clamp("z") == "b" and c.default_frames() == ("a", "b")
    with pytest.raises(ValueError, match="minimum < maximum"):
        slider(5, 5, 5)
    with pytest.raises(ValueError, match="not one of the options"):
        choice(["a"], "b")


def test_log_sliders_keep_their_default_and_frames_exactly():
    length = slider(64, 65536, 4096, log=True, frames=(64, 256, 2048, 8192, 65536))
    assert length.value == 4096 and isinstance(length.value, int)
    stops = length.stops()
    assert all(isinstance(v, int) for v in stops) and stops[0] == 64 and stops[-1] == 65536
    assert {4096, 256, 2048, 8192} <= set(stops) and stops == tuple(sorted(set(stops)))
    assert length.clamp(4100) == 4096 and length.clamp(4038.0) == 4096 and length.clamp(10**9) == 65536
    assert length.default_frames() == (64, 256, 2048, 8192, 65536)
    for minimum, maximum, value in ((1.0, 32.0, 8.0), (2.0, 64.0, 32.0), (0.125, 1.5, 1.0), (0.001, 1.0, 0.02)):
        control = slider(minimum, maximum, value, log=True)
        assert control.value == value and value in control.stops()
        assert control.clamp(value * 1.001) == value
        steps = np.diff(np.log10(control.stops()))
        assert steps.min() > 0.015 and steps.max() < 0.07  # about 20 stops per decade
    # the live slider offers exactly those stops and starts at the default
    import ipywidgets as widgets

    made = Explorer._make_widget("L", slider(64, 65536, 4096, log=True, label="L (tokens)"), widgets)
    assert made.value == 4096 and made.description == "L (tokens)"
    assert ("4,096", 4096) in made.options and made.options[-1] == ("65,536", 65536)


def test_readouts_are_readable():
    cases = {10000.0: "10,000", 65536: "65,536", 8.0: "8", 7.943282: "7.943", 0.99312: "0.9931", 1.4568: "1.457"}
    cases |= {0.02: "0.02", 31.66: "31.66", 1e7: "10,000,000", 1.5e-5: "1.5e-05", 0.5: "0.5", "q = k": "q = k"}
    assert {value: format_value(value) for value in cases} == cases
    import ipywidgets as widgets

    assert Explorer._make_widget("n", slider(16, 1024, 512, step=16), widgets).readout_format == ",d"
    assert Explorer._make_widget("s", slider(1.0, 32.0, 8.0, step=0.5), widgets).readout_format == ",.1f"


def test_render_clamps_and_times_every_redraw():
    explorer = line_explorer()
    png = explorer.render(speed=99, shape="nope")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert explorer.values == {"speed": 2.0, "shape": "sin"}
    explorer.render(speed=1.5)
    assert len(explorer.redraw_ms) == 2 and all(t > 0 for t in explorer.redraw_ms)
    with pytest.raises(ValueError, match="unknown control"):
        explorer.render(sped=1)


def test_blitted_frames_equal_a_plain_full_draw():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    explorer = line_explorer()
    for speed in (0.5, 1.5, 2.0):  # several blitted redraws over the cached background
        explorer.render(speed=speed)
    blitted = np.asarray(explorer.figure.canvas.buffer_rgba())

    plain = Figure(figsize=(7.2, 3.4), dpi=90, layout="constrained")
    FigureCanvasAgg(plain)
    setup = explorer_setup()
    setup(plain)(speed=2.0)
    plain.canvas.draw()
    np.testing.assert_array_equal(blitted, np.asarray(plain.canvas.buffer_rgba()))


def _decoded(data, ref):
    """The int16 pairs of a record (first point, then steps; BREAK between sub-paths) in canvas px."""
    pairs = np.frombuffer(base64.b64decode(data["xy"]), dtype="<i2").reshape(-1, 2)[ref[0] : ref[0] + ref[1]]
    points, current = [], None
    for step in pairs.astype(np.int64):
        if step[0] == webfigure.BREAK:
            current = None
            continue
        current = step if current is None else current + step
        points.append(current / webfigure.SUBPIXEL)
    return np.array(points)


def test_website_form_records_every_state_of_every_control():
    explorer = line_explorer(caption="What changes with speed?")
    data = webfigure.figure_data(explorer)
    assert [c["values"] for c in data["controls"]] == [[0.5, 1.0, 1.5, 2.0], ["sin", "cos"]]
    assert [c["shown"] for c in data["controls"]] == [["0.5", "1", "1.5", "2"], ["sin", "cos"]]
    table = np.frombuffer(base64.b64decode(data["table"]), dtype="<u2").reshape(8, 2)  # 4 x 2 states
    assert data["artists"] == 1 and len(set(table[:, 0])) == 8  # every state draws its own line
    ax = explorer.figure.axes[0]
    x = np.linspace(0, 10, 200)
    height = explorer.figure.bbox.height
    for row, (speed, shape) in enumerate((s, h) for s in (0.5, 1.0, 1.5, 2.0) for h in ("sin", "cos")):
        wave = np.sin(speed * x) if shape == "sin" else np.cos(speed * x)  # computed here, not read back
        expected = ax.transData.transform(np.column_stack([x, wave]))
        expected[:, 1] = height - expected[:, 1]
        drawn = _decoded(data, data["items"][table[row, 0]]["p"])
        # every expected point lies on the drawn polyline to a third of a pixel (1/8 px steps, simplified path)
        segments = np.stack([drawn[:-1], drawn[1:]], axis=1)
        a, b = segments[:, 0], segments[:, 1]
        length2 = np.maximum(np.sum((b - a) ** 2, axis=1), 1e-12)
        t = np.clip(np.einsum("psk,sk->ps", expected[:, None] - a[None], b - a) / length2, 0, 1)
        gap = np.min(np.linalg.norm(expected[:, None] - (a[None] + t[..., None] * (b - a)[None]), axis=2), axis=1)
        assert gap.max() < 0.35
        assert webfigure.alt_text(data, table[row, 1]) == f"a {shape} wave at speed {speed}"
    for key in ("background", "still"):
        png = data[key] if isinstance(data[key], bytes) else base64.b64decode(data[key])
        assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_website_form_is_self_contained_labelled_and_deterministic():
    html = line_explorer(caption="What changes with speed?").static_html()
    assert html == line_explorer(caption="What changes with speed?").static_html()
    assert "http://" not in html and "https://" not in html and "<link" not in html
    ident = re.search(r'<figure class="posenc-explorer" id="(posenc-explorer-\w+)"', html).group(1)
    assert f'<label for="{ident}-0">speed</label>' in html and f'<label for="{ident}-1">shape</label>' in html
    slider_html = f'<input type="range" id="{ident}-0" min="0" max="3" step="1" value="1" aria-valuetext="1">'
    assert slider_html in html
    assert re.search(rf'<select id="{ident}-1"><option value="0" selected>sin</option>', html)
    assert re.search(r'<img [^>]*alt="a sin wave at speed 1.0"', html)  # the default state first
    assert 'role="img" aria-label="a sin wave at speed 1.0"' in html
    assert 'aria-pressed="false"' in html and "<figcaption>What changes with speed?</figcaption>" in html


def test_control_grids_keep_ends_defaults_and_frames():
    length = slider(5, 512, 9, frames=(5, 9, 17, 33, 65, 129, 257, 512))
    grid = webfigure.control_grid(length, 64, keep=length.frames)
    assert {5, 9, 17, 33, 512} <= set(grid) and len(grid) <= 64 + 8 and grid == tuple(sorted(grid))
    assert webfigure.control_grid(slider(0, 31, 5), 64) == tuple(range(32))  # all 32 values fit
    base = slider(10.0, 1e6, 1e4, log=True)
    grid = webfigure.control_grid(base, 9)
    assert set(grid) <= set(base.stops()) and {10.0, 1e4, 1e6} <= set(grid) and len(grid) <= 10
    assert webfigure.control_grid(choice(["a", "b", "c"]), 1) == ("a", "b", "c")
    with pytest.raises(ValueError, match="count"):
        webfigure.control_grid(base, 0)
    with pytest.raises(ValueError, match="max_states"):
        webfigure.web_grids(line_explorer(), max_states=0)


def test_web_grids_stay_within_the_state_budget_and_favour_the_main_control():
    setup = explorer_setup()
    controls = {
        "speed": slider(0.5, 2.0, 1.0, step=0.01),
        "a": slider(1, 1000, 5),
        "b": slider(1.0, 1e6, 10.0, log=True),
        "c": slider(0, 100, 50),
    }
    explorer = Explorer(lambda fig: lambda speed, **_: setup(fig)(speed), controls, animate="speed", alt="x")
    grids = webfigure.web_grids(explorer, max_states=2500)
    sizes = {name: len(grid) for name, grid in grids.items()}
    assert np.prod(list(sizes.values())) <= 2500
    assert sizes["speed"] >= max(sizes["a"], sizes["b"], sizes["c"]) and min(sizes.values()) >= 3
    assert all(explorer.controls[n].value in grids[n] for n in grids)


def test_web_grids_stop_when_the_budget_cannot_be_met():
    """Kept values (default, frames) and menus bound how far a grid can shrink: it stops there."""
    setup = explorer_setup()
    controls = {"speed": slider(0, 100, 50, frames=tuple(range(0, 100, 10))), "menu": choice(range(300))}
    explorer = Explorer(lambda fig: lambda speed, menu: setup(fig)(speed), controls, animate="speed", alt="x")
    grids = webfigure.web_grids(explorer, max_states=100)
    assert len(grids["menu"]) == 300 and set(range(0, 100, 10)) <= set(grids["speed"]) and 50 in grids["speed"]


def test_website_states_is_checked_and_bounds_the_grid():
    with pytest.raises(ValueError, match="website_states"):
        line_explorer(website_states=0)
    explorer = Explorer(
        explorer_setup(),
        {"speed": slider(0.5, 2.0, 1.0, step=0.01), "shape": choice(["sin", "cos"])},
        animate="speed",
        alt="x",
        website_states=20,
    )
    data = webfigure.figure_data(explorer)
    assert math.prod(len(c["values"]) for c in data["controls"]) <= 20
    assert [len(c["values"]) for c in data["controls"]][1] == 2  # a menu keeps every option


def test_browser_formula_twins_agree_with_posenc():
    import posenc

    rng = np.random.default_rng(1)
    for layout in ("interleaved", "half"):
        for d, base in ((8, 100.0), (64, 1e4), (128, 5e5)):
            q, k = rng.normal(size=(2, d))
            inv_freq = posenc.rope_inv_freq(d, base)
            x, y = browser_formulas.BROWSER_FORMULAS["rope_scores"](q, k, base, 300, layout)
            np.testing.assert_allclose(y, posenc.rope_scores(q, k, x, inv_freq, layout), atol=1e-9)
            turned = posenc.apply_rope(q[None], [1000], inv_freq, layout)[0]
            scores = browser_formulas.BROWSER_FORMULAS["rope_scores"]
            _, y = scores(q, q, base, 300, layout, rotate_k_by=1000, normalize=True)
            expected = posenc.rope_scores(q, turned, x, inv_freq, layout) / (np.linalg.norm(q) * np.linalg.norm(turned))
            np.testing.assert_allclose(y, expected, atol=1e-9)
    table = browser_formulas.BROWSER_FORMULAS["sinusoidal"](5, 6, 100.0, 8, 10)
    assert np.isnan(table[5:]).all() and np.isnan(table[:, 6:]).all()
    np.testing.assert_allclose(table[:5, :6], posenc.sinusoidal(5, 6, 100.0))


def test_computed_in_browser_is_checked_against_the_data():
    from matplotlib.figure import Figure

    image = Figure().subplots().imshow(np.zeros((4, 4)))
    with pytest.raises(ValueError, match="formula"):
        computed_in_browser(image, "no such formula")

    def setup(fig):
        ax = fig.subplots()
        picture = ax.imshow(np.zeros((8, 8)), vmin=-1, vmax=1)

        def update(base):
            picture.set_data(np.zeros((8, 8)))  # not the sinusoidal table it claims to be
            computed_in_browser(picture, "sinusoidal", n_positions=8, d_model=8, base=base, rows=8, cols=8)
            return [picture]

        return update

    explorer = Explorer(setup, {"base": slider(10.0, 100.0, 10.0, log=True)}, animate="base", alt="x")
    with pytest.raises(ValueError, match="does not give the image's data"):
        webfigure.figure_data(explorer)


def test_markers_follow_markevery():
    points = np.arange(20.0).reshape(10, 2)
    assert webfigure._marked(points, None).shape == (10, 2)
    assert np.array_equal(webfigure._marked(points, [1]), points[[1]])
    assert np.array_equal(webfigure._marked(points, 3), points[::3])
    assert np.array_equal(webfigure._marked(points, (1, 4)), points[1::4])
    assert np.array_equal(webfigure._marked(points, slice(2, 5)), points[2:5])
    with pytest.raises(NotImplementedError, match="markevery"):
        webfigure._marked(points, 0.1)


def test_an_artist_the_website_cannot_draw_is_named():
    def setup(fig):
        ax = fig.subplots()
        band = ax.fill_between([0, 1], [0, 1])  # a PolyCollection

        def update(speed):
            return [band]

        return update

    explorer = Explorer(setup, {"speed": slider(0.5, 2.0, 1.0, step=0.5)}, animate="speed", alt="x")
    with pytest.raises(NotImplementedError, match=r"cannot draw a changing \w*PolyCollection"):
        webfigure.figure_data(explorer)


def test_live_widget_redraws_and_never_raises(monkeypatch):
    explorer = line_explorer()
    box = explorer.widget()
    controls, figure, message = box.children[0].children, box.children[1], box.children[2]
    assert type(figure).__name__ == "LiveFigure"  # the canvas form (tests/test_live.py)
    before = figure.frame
    controls[0].value = 2.0
    assert figure.frame != before and figure.frame["key"] != before["key"] and message.value == ""
    assert explorer.values["speed"] == 2.0 and figure.alt == "a sin wave at speed 2.0"

    def broken(**values):
        raise RuntimeError("boom")

    monkeypatch.setattr(explorer, "_update", broken)
    controls[0].value = 1.5  # the callback catches the error and reports it
    assert "Could not redraw: boom" in message.value


def test_without_anywidget_the_live_figure_is_a_png(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_anywidget(name, *args, **kwargs):
        if name == "anywidget":
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(__import__("sys").modules, "posenc.book.live", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_anywidget)
    explorer = line_explorer()
    box = explorer.widget()
    controls, image, message = box.children[0].children, box.children[1], box.children[2]
    assert type(image).__name__ == "Image" and image.value[:8] == b"\x89PNG\r\n\x1a\n"
    before = image.value
    controls[0].value = 2.0
    assert image.value != before and message.value == ""
    assert image.value == explorer.render(speed=2.0)  # what matplotlib draws in that state


def test_static_mode_switch(monkeypatch):
    monkeypatch.setenv("POSENC_STATIC", "1")
    assert static_mode()
    monkeypatch.setenv("POSENC_STATIC", "0")
    assert static_mode()  # no kernel in pytest: nothing could drive a widget


def test_record_mode_keeps_the_explorer_and_displays_nothing(monkeypatch):
    # the tests' run of the student edition (tests/chapter_runs.py) records explorers instead of rendering them
    from posenc.book import widgets

    shown = []
    monkeypatch.setattr("IPython.display.display", lambda *objects, **kw: shown.append(objects))
    monkeypatch.setattr(widgets, "RECORDED", [])
    monkeypatch.setenv("POSENC_STATIC", "1")
    monkeypatch.setenv("POSENC_RECORD_EXPLORERS", "1")
    first, second = line_explorer(), line_explorer()
    first.show()
    second.show()
    assert widgets.RECORDED == [first, second] and shown == []
    monkeypatch.setenv("POSENC_RECORD_EXPLORERS", "0")  # off: the website's form again
    first.show()
    assert widgets.RECORDED == [first, second] and len(shown) == 1 and "posenc-explorer" in shown[0][0].data


def test_a_menu_is_wide_enough_for_its_longest_option():
    import ipywidgets as widgets

    longest = "Qwen (QWenLMHeadModel, 2048 hidden, 24 layers)"
    made = Explorer._make_widget("model", choice(["Llama-3.1-8B", longest], label="model"), widgets)
    # never narrower than ipywidgets' 300 px, and wide enough for "model" and the longest name
    assert made.layout.width == f"max(var(--jp-widgets-inline-width), {len('model') + len(longest) + 5}ch)"


def test_recording_a_line_once_per_state_it_takes_changes_nothing(monkeypatch):
    """The recorder keeps a line's record by what it reads of the line (webfigure._Recorder._line_key):
    the website's data are the same, byte for byte, as when every state records every line anew, for
    lines that change only their data, only their style, their axis limits or not at all; a line on a
    log axis is never kept."""

    def setup(fig):
        ax, log_ax = fig.subplots(1, 2)
        x = np.linspace(1, 10, 50)
        (moving,) = ax.plot(x, np.sin(x), lw=1.5)
        (styled,) = ax.plot(x, np.cos(x), "o-", ms=4, markevery=5)
        (still,) = ax.plot(x, 0.5 * x / 10, color="0.5")
        (on_log,) = log_ax.plot(x, x**2)
        log_ax.set_yscale("log")

        def update(phase, look, top):
            moving.set_ydata(np.sin(x + phase))
            styled.set(color={"a": "C1", "b": "C2"}[look], linestyle={"a": "-", "b": "--"}[look])
            styled.set_marker({"a": "o", "b": "s"}[look])
            ax.set_ylim(-1.5, top)
            on_log.set_ydata(x**top)
            return [moving, styled, still, on_log]

        return update

    def explorer():
        controls = {
            "phase": slider(0.0, 1.0, 0.0, step=0.5),
            "look": choice(["a", "b"]),
            "top": slider(1.5, 2.5, 1.5, step=1.0),
        }
        return Explorer(setup, controls, animate="phase", alt="lines")

    kept = webfigure.figure_data(explorer())
    keys = []
    original = webfigure._Recorder._line_key
    monkeypatch.setattr(webfigure._Recorder, "_line_key", staticmethod(lambda line: keys.append(original(line))))
    anew = webfigure.figure_data(explorer())
    assert kept == anew
    assert len(keys) == 3 * 2 * 2 * 4 and sum(k is None for k in keys) == 3 * 2 * 2  # the log axis's line
    distinct = {k for k in keys if k is not None}
    # `moving`: 3 phases x 2 limits; `styled`: 2 looks x 2 limits; `still`: 2 limits
    assert len(distinct) == 6 + 4 + 2
