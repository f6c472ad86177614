"""The live canvas (posenc.book.live): each move's frame is the website's record of that state, and a
state sent ahead is the state the kernel draws once the control gets there.

The view's part (painting, keys computed in the browser, a state ahead painted before the kernel
answers) runs in JupyterLab: tests/test_jupyterlab.py."""

import asyncio
import base64
import json

import numpy as np
import pytest

from posenc.book import Explorer, choice, slider, webfigure
from posenc.book.live import AHEAD_KEPT, LIVE_FILES, LiveFigure, live_module
from posenc.book.player import STATIC


def setup(fig):
    x = np.linspace(0, 10, 120)
    ax = fig.subplots()
    (line,) = ax.plot(x, np.sin(x), marker="o", markevery=10)
    label = ax.text(0.5, 0.9, "", transform=ax.transAxes)
    ax.set(xlabel="position", ylabel="value", ylim=(-3.5, 3.5))

    def update(speed, count, base, shape):
        wave = np.sin if shape == "sin" else np.cos
        line.set_ydata(np.log10(base) * wave(speed * x) * (count / 4))
        label.set_text(f"{shape} {speed:g} {count} {base:g}")
        return [line, label]

    return update


CONTROLS = {
    "speed": slider(0.5, 2.0, 1.0, step=0.25),  # float: its steps from the minimum
    "count": slider(1, 9, 5, step=2),  # int with a step of 2: its value
    "base": slider(10, 10_000, 100, log=True),  # log stops: a selection slider's index
    "shape": choice(["sin", "cos", "tan"], value="cos"),  # a menu's index
}


def make():
    explorer = Explorer(setup, dict(CONTROLS), animate="speed", alt=lambda **v: json.dumps(v, sort_keys=True))
    box = explorer.widget()
    return explorer, dict(zip(CONTROLS, box.children[0].children, strict=True)), box.children[1]


def drawn(frame: dict) -> tuple:
    """What a frame paints, without its key: records, their tables and arrays."""
    return json.dumps({k: v for k, v in frame.items() if k != "key"}, sort_keys=True)


def test_the_view_is_made_of_the_book_static_files():
    module = live_module()
    for name in LIVE_FILES:
        assert (STATIC / name).read_text() in module
    assert "function posencPainter(S,ctx)" in module and module.rstrip().endswith("export default {render};")
    assert LiveFigure._esm.default_value == module


def test_a_frame_is_the_website_record_of_the_same_state():
    explorer, widgets, figure = make()
    widgets["speed"].value = 1.75
    widgets["shape"].value = "sin"
    values = dict(explorer.values)
    website = webfigure.figure_data(explorer, grids={name: (value,) for name, value in values.items()})
    frame = figure.frame
    for field in ("artists", "items", "styles", "shapes", "luts", "arrays", "table", "wide", "xy", "px"):
        assert frame[field] == website[field], field
    assert (figure.width, figure.height) == (website["width"], website["height"])


def test_keys_follow_the_widgets_the_way_the_browser_reads_them():
    _, _, figure = make()
    # float: steps from the minimum; int: its value; log and menu: their index
    assert figure.frame["key"] == f"{round((1.0 - 0.5) / 0.25)},5,{CONTROLS['base'].stops().index(100)},1"
    assert [p.spec["trait"] for p in figure.positions] == ["value", "value", "index", "index"]
    assert figure.positions[0].spec["step"] == 0.25 and figure.positions[1].spec["step"] is None


def test_every_state_ahead_is_what_the_kernel_draws_after_the_move():
    explorer, widgets, figure = make()
    for moved in CONTROLS:
        ahead = figure._ahead(moved)
        assert len(ahead) == sum(len(p.neighbours()) for p in figure.positions) > 0
        assert ahead[0][1][moved] != explorer.values[moved]  # the moved control's step comes first
        for key, values in ahead:
            figure._update(values)
            predicted = webfigure.live_frame(explorer.figure, figure.moving)
            start = dict(explorer.values)
            for name, value in values.items():  # move there as the reader does
                if value != start[name]:
                    widgets[name].value = value
            assert figure.frame["key"] == key, (moved, values)
            assert drawn(figure.frame) == drawn(predicted), (moved, key)
            for name, value in start.items():  # and back
                widgets[name].value = value
            assert explorer.values == start


def test_the_moved_control_comes_first_in_the_direction_it_went():
    _, widgets, figure = make()
    widgets["speed"].value = 1.25
    first, second = figure._ahead("speed")[:2]
    assert (first[1]["speed"], second[1]["speed"]) == (1.5, 1.0)  # went up: up first
    widgets["speed"].value = 1.0
    first = figure._ahead("speed")[0]
    assert first[1]["speed"] == 0.75  # went down: down first
    widgets["shape"].value = "tan"  # the last option: one step away, back to "cos"
    shapes = [s["shape"] for _, s in figure._ahead("shape")]
    assert shapes[0] == "cos" and shapes.count("cos") == 1 and shapes.count("sin") == 0


def test_states_ahead_are_sent_one_per_turn_and_stop_when_the_reader_moves():
    explorer, widgets, figure = make()
    sent = []
    figure.send = lambda content, buffers=None: sent.append(content)

    async def move_then_move_again():
        widgets["speed"].value = 1.25  # redraw schedules the states ahead on this loop
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        first_turns = len(sent)
        widgets["speed"].value = 1.5  # a new move: the old queue stops
        for _ in range(40):
            await asyncio.sleep(0)
        return first_turns

    first_turns = asyncio.run(move_then_move_again())
    assert 1 <= first_turns <= 2  # one state per turn of the loop, not all at once
    keys = [k for message in sent for k in message.get("ahead", {})]
    assert len(keys) == len(set(keys))  # none sent twice
    # the new queue ran to its end: every state one step from the new one, unless already sent
    assert set(keys) | {"3,5,20,1"} >= {key for key, _ in figure._ahead("speed")}  # 3: the first move's frame
    assert figure.alt == json.dumps(dict(explorer.values), sort_keys=True)  # the alt text of the new state


def test_the_view_is_told_to_forget_past_its_limit(monkeypatch):
    _, widgets, figure = make()
    sent = []
    figure.send = lambda content, buffers=None: sent.append(content)
    figure._sent.update(str(k) for k in range(AHEAD_KEPT + 1))
    widgets["speed"].value = 1.25
    assert sent[0] == {"clear": True} and figure._sent == {figure.frame["key"]}


def test_states_ahead_restore_the_figure_and_go_again_to_a_new_view():
    explorer, _, figure = make()
    sent = []
    figure.send = lambda content, buffers=None: sent.append(content)

    async def view_says_ready():
        figure._from_view(figure, {"ready": True}, [])  # a view linked its controls
        for _ in range(40):
            await asyncio.sleep(0)

    asyncio.run(view_says_ready())
    first = {k for m in sent for k in m.get("ahead", {})}
    assert first == {key for key, _ in figure._ahead(None)}  # every state one step from the first
    # the kernel's figure shows the reader's state again, not the last state sent ahead
    assert drawn(webfigure.live_frame(explorer.figure, figure.moving)) == drawn(figure.frame)
    sent.clear()
    asyncio.run(view_says_ready())  # another view (a reopened tab): sent again
    assert {k for m in sent for k in m.get("ahead", {})} == first


def test_a_float_slider_off_its_grid_and_steps_that_binary_cannot_hold():
    def small(fig):
        ax = fig.subplots()
        (line,) = ax.plot([0, 1], [0, 0])
        ax.set(ylim=(0, 1))

        def update(level):
            line.set_ydata([level, level])
            return [line]

        return update

    explorer = Explorer(small, {"level": slider(0.0, 1.0, 0.333)}, animate="level", alt=lambda level: f"{level}")
    box = explorer.widget()
    widget, figure = box.children[0].children[0], box.children[1]
    assert widget.step == pytest.approx(0.01) and figure.frame["key"] == "off"  # 0.333 is between steps
    assert [v for _, v in figure._ahead("level")] == [{"level": pytest.approx(0.34)}, {"level": pytest.approx(0.33)}]
    for key, values in figure._ahead("level"):
        figure._update(values)
        predicted = webfigure.live_frame(explorer.figure, figure.moving)
        widget.value = values["level"]
        assert figure.frame["key"] == key and drawn(figure.frame) == drawn(predicted)
    for value in np.arange(0.0, 1.0001, 0.07):  # 0.07 steps: 0.07 * 3 = 0.21000000000000002
        widget.value = float(value)
        assert figure.frame["key"] == str(round(float(value) / 0.01))


def test_a_state_the_painter_cannot_draw_is_sent_whole():
    def sometimes_math(fig):
        ax = fig.subplots()
        label = ax.set_title("plain")

        def update(kind):
            label.set_text(r"$\alpha$" if kind == "math" else kind)
            return [label]

        return update

    explorer = Explorer(sometimes_math, {"kind": choice(["plain", "math", "text"])}, animate="kind", alt="x")
    box = explorer.widget()
    menu, figure, message = box.children[0].children[0], box.children[1], box.children[2]
    background = figure.background
    menu.value = "math"  # the recorder cannot typeset math: matplotlib draws this state whole
    assert message.value == "" and figure.frame["artists"] == 0 and figure.frame["key"] == "1"
    assert base64.b64decode(figure.background) == explorer.render(kind="math")
    menu.value = "text"  # drawable again: the real background comes back first
    assert figure.background == background and figure.frame["artists"] == 1 and message.value == ""


def test_an_alt_text_that_fails_never_raises():
    def alt(**values):
        raise RuntimeError("no words")

    explorer = Explorer(setup, dict(CONTROLS), animate="speed", alt=alt)
    box = explorer.widget()
    box.children[0].children[0].value = 1.25
    assert box.children[1].alt == "" and box.children[2].value == ""


def test_ahead_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("POSENC_LIVE_AHEAD", "0")
    explorer, widgets, figure = make()
    assert figure.ahead_enabled is False
    sent = []
    figure.send = lambda content, buffers=None: sent.append(content)

    async def move():
        widgets["speed"].value = 1.25
        for _ in range(20):
            await asyncio.sleep(0)

    asyncio.run(move())
    assert sent == [] and figure.alt == json.dumps(dict(explorer.values), sort_keys=True)


def test_controls_must_be_the_explorers_own():
    explorer, widgets, _ = make()
    with pytest.raises(ValueError, match=r"controls \['speeds'\] are not controls of this explorer"):
        LiveFigure(explorer, {"speeds": widgets["speed"]})


def test_a_figure_the_painter_cannot_draw_falls_back_to_a_png():
    def full_redraw(fig):
        ax = fig.subplots()

        def update(speed):
            ax.clear()
            ax.plot([0, 1], [0, speed])  # returns no artists: every frame is a full redraw

        return update

    explorer = Explorer(full_redraw, {"speed": slider(0.5, 2.0, 1.0, step=0.5)}, animate="speed", alt="x")
    with pytest.raises(NotImplementedError, match="needs update"):
        LiveFigure(explorer)
    box = explorer.widget()
    assert type(box.children[1]).__name__ == "Image"
    box.children[0].children[0].value = 2.0
    assert box.children[1].value == explorer.render(speed=2.0) and box.children[2].value == ""


def test_make_lab_and_the_lab_test_start_jupyterlab_without_nagle(monkeypatch):
    from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection
    from jupyter_server.services.kernels.websocket import KernelWebsocketHandler

    from posenc.book.lab_server import SERVER_OPTION, NoDelayConnection

    from conftest import ROOT

    class Handler(KernelWebsocketHandler):
        def __init__(self):  # no application or request: only set_nodelay is called
            self.nodelay = []

        def set_nodelay(self, value):
            self.nodelay.append(value)

    monkeypatch.setattr(ZMQChannelsWebsocketConnection, "connect", lambda self: "connected")
    connection = NoDelayConnection.__new__(NoDelayConnection)
    connection.websocket_handler = handler = Handler()
    assert connection.connect() == "connected" and handler.nodelay == [True]
    assert SERVER_OPTION.split("=")[1] == f"{NoDelayConnection.__module__}.{NoDelayConnection.__name__}"
    makefile = (ROOT / "Makefile").read_text()
    assert f"LAB_NODELAY := {SERVER_OPTION}" in makefile
    assert "$(LAB_BIN)/jupyter lab $(ALLOW_ROOT) $(LAB_NODELAY) $(LAB_EXTENSION) $(LAB_ROOT)" in makefile
    # make lab loads the book's extension and settings from the folders the lab test gives (lab_server)
    from posenc.book.lab_server import EXTENSION_OPTION, SETTINGS_OPTION

    for option in (EXTENSION_OPTION, SETTINGS_OPTION):
        assert option.replace(str(ROOT), "$(CURDIR)") in makefile, option
