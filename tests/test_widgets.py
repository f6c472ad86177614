"""Explorers: controls clamp, callbacks never raise, the static player is self-contained and accessible."""

import base64
import json
import re

import numpy as np
import pytest

from posenc.widgets import Explorer, choice, format_value, player_html, slider, static_mode


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


def test_static_player_has_every_frame_label_and_alt_and_no_external_resource():
    html = line_explorer(caption="What changes with speed?").static_html()
    data = json.loads(re.search(r"var root=.*?, d=(\{.*?\});", html, re.S).group(1))
    assert data["labels"] == ["speed = 0.5", "speed = 1", "speed = 1.5", "speed = 2"]
    assert data["alts"][0] == "a sin wave at speed 0.5"
    for frame in data["frames"]:
        assert base64.b64decode(frame)[:4] == b"\x89PNG"
    assert len(set(data["frames"])) == 4  # the frames differ
    assert "http://" not in html and "https://" not in html and "<link" not in html
    assert re.search(r'<img [^>]*alt="a sin wave at speed 1.0"', html)  # the default value is shown first
    assert re.search(r'<label for="(posenc-player-\w+)-range">speed</label>', html)
    assert 'aria-pressed="false"' in html and "<figcaption>What changes with speed?</figcaption>" in html


def test_player_ids_are_deterministic_and_inputs_checked():
    frames = [b"\x89PNG\r\n\x1a\n" + bytes(8) + (100).to_bytes(4, "big") + bytes(8)]
    assert player_html(frames, ["x = 1"], ["alt"], "x") == player_html(frames, ["x = 1"], ["alt"], "x")
    with pytest.raises(ValueError, match="as many labels"):
        player_html(frames, [], ["alt"], "x")


def test_live_widget_redraws_and_never_raises(monkeypatch):
    explorer = line_explorer()
    box = explorer.widget()
    controls, image, message = box.children[0].children, box.children[1], box.children[2]
    before = image.value
    controls[0].value = 2.0
    assert image.value != before and message.value == ""

    def broken(**values):
        raise RuntimeError("boom")

    monkeypatch.setattr(explorer, "_update", broken)
    controls[0].value = 1.5  # the callback catches the error and reports it
    assert "Could not redraw: boom" in message.value


def test_static_mode_switch(monkeypatch):
    monkeypatch.setenv("POSENC_STATIC", "1")
    assert static_mode()
    monkeypatch.setenv("POSENC_STATIC", "0")
    assert static_mode()  # no kernel in pytest: nothing could drive a widget
