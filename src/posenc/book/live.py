"""An explorer live in a kernel, painted by the website's canvas renderer.

In JupyterLab, Notebook 7 or VS Code the controls are ipywidgets sliders and menus; on each move the
kernel runs the explorer's ``update`` and records its moving artists
(:func:`posenc.book.webfigure.live_frame`: the records the website ships for each state of its
grid, a few kilobytes), and the browser paints them over the figure's background with the
website's own painter (``posencPainter`` in posenc-player.js). Nothing is rasterised or encoded as
PNG on a move.

**States ahead.** After each move the kernel also records the states one step away on every control
(the moved control's next step in the direction it went first; after the figure is shown, the
steps from its first state) and sends them; the view keeps them (at most
:data:`AHEAD_KEPT`), and when a control moves to a state it already has, paints it at once, before
the kernel answers. A state is keyed by each control's position (its index, or its value's step
count), the same in the kernel and the browser. The kernel stops recording ahead as soon as another
move arrives; ``POSENC_LIVE_AHEAD=0`` in the kernel's environment turns it off (the benchmark does,
to measure the round trip alone).

The view is an anywidget module made of the book's static files
:data:`LIVE_FILES` (the browser formulas, the painter and posenc-live.js). Without anywidget, or
for a figure the painter cannot draw, :meth:`posenc.book.widgets.Explorer.widget` falls back to a
PNG redrawn by matplotlib.
"""

from __future__ import annotations

import asyncio
import base64
import math
import os
import time

import anywidget
import traitlets

from .player import STATIC
from .webfigure import live_frame

__all__ = ["LiveFigure", "LIVE_FILES", "AHEAD_KEPT", "OFF_GRID", "live_module"]

#: The live view's files in the book's static folder, in the order they are joined. The browser
#: formulas (``posencFormulas``), the painter (``posencPainter``) and the view (``export default {render}``).
LIVE_FILES = ("posenc-formulas.js", "posenc-player.js", "posenc-live.js")
#: The most states a view keeps; past it the kernel tells the view to forget them all and starts again.
AHEAD_KEPT = 512
#: A float slider's value is on its grid when its steps from the minimum are this close to a whole
#: number (the same test as posenc-live.js's ``key``).
OFF_GRID = 1e-6


def live_module() -> str:
    """The live view's ES module: :data:`LIVE_FILES` joined, read from the package."""
    return "\n".join((STATIC / name).read_text(encoding="utf-8") for name in LIVE_FILES)


class _Position:
    """Where one control widget stands, as an integer the browser computes the same way: a menu's or
    a selection slider's index, an integer slider's value, a float slider's steps from its minimum."""

    def __init__(self, name: str, widget, values: tuple | None):
        self.name, self.widget, self.values = name, widget, values
        if values is not None:
            self.spec = {"id": widget.model_id, "trait": "index", "min": None, "step": None}
        elif isinstance(widget.value, int):
            self.spec = {"id": widget.model_id, "trait": "value", "min": None, "step": None}
        else:
            self.spec = {"id": widget.model_id, "trait": "value", "min": widget.min, "step": widget.step}

    def now(self) -> int | str:
        """The position; a float slider's value off its grid (a default between steps) is ``"off"``."""
        if self.values is not None:
            return int(self.widget.index)
        if self.spec["step"] is None:
            return int(self.widget.value)
        steps = (self.widget.value - self.widget.min) / self.widget.step
        nearest = math.floor(steps + 0.5)  # as the browser's Math.round: halves up
        return nearest if abs(steps - nearest) < OFF_GRID else "off"

    def neighbours(self) -> list[tuple[int, object]]:
        """The positions one step down and up that exist, with their values."""
        here, widget = self.now(), self.widget
        if self.values is not None:
            return [(i, self.values[i]) for i in (here - 1, here + 1) if 0 <= i < len(self.values)]
        if self.spec["step"] is None:
            return [(v, v) for v in (here - widget.step, here + widget.step) if widget.min <= v <= widget.max]
        last = math.floor((widget.max - widget.min) / widget.step + 0.5)
        if here == "off":  # between two steps: the steps on either side
            below = math.floor((widget.value - widget.min) / widget.step)
            around = (below, below + 1)
        else:
            around = (here - 1, here + 1)
        return [(i, widget.min + i * widget.step) for i in around if 0 <= i <= last]


class LiveFigure(anywidget.AnyWidget):
    """An explorer's figure: its background PNG, the current state's records (``frame``) and alt text."""

    _esm = traitlets.Unicode(live_module()).tag(sync=True)
    width = traitlets.Int(1).tag(sync=True)
    height = traitlets.Int(1).tag(sync=True)
    background = traitlets.Unicode("").tag(sync=True)  # base64 PNG: the figure without its moving artists
    frame = traitlets.Dict().tag(sync=True)
    alt = traitlets.Unicode("").tag(sync=True)  # the canvas's text alternative, sent after the frame
    controls = traitlets.List().tag(sync=True)  # per control: its model and how its position is read

    def __init__(self, explorer, controls: dict | None = None, **kwargs):
        """Show ``explorer`` (a :class:`~posenc.book.widgets.Explorer`) in its current state.

        ``controls`` maps control names to their ipywidgets (sliders and menus made by the
        explorer); with them the view paints states it already has as soon as a control moves.
        Raises ``NotImplementedError`` when the painter cannot draw the explorer: ``update``
        returns no artists, or an artist the recorder does not know.
        """
        unknown = sorted(set(controls or {}) - set(explorer.controls))
        if unknown:
            raise ValueError(
                f"controls {unknown} are not controls of this explorer; it has {sorted(explorer.controls)}"
            )
        super().__init__(**kwargs)
        self.explorer = explorer
        explorer._draw(explorer.values)  # lays the figure out and learns which artists move
        self.moving = list(explorer._animated)
        if not self.moving:
            raise NotImplementedError("a live canvas needs update() to return the artists it changes")
        self.positions = [_Position(name, widget, self._choices(name)) for name, widget in (controls or {}).items()]
        self._sent: set[str] = set()
        self._generation = 0
        self._stale_background = False
        self._here = self._previous = [p.now() for p in self.positions]  # where the controls stand, stood
        self.ahead_enabled = os.environ.get("POSENC_LIVE_AHEAD", "1").strip() != "0"
        frame = self._frame(self._key())  # fails early if the painter cannot draw it
        width, height = explorer.figure.canvas.get_width_height()
        with self.hold_sync():
            self.width, self.height = width, height
            self.controls = [p.spec for p in self.positions]
            self.background = self._background()
            self.frame = frame
            self.alt = self._alt(explorer.values)
        self.on_msg(self._from_view)

    def _from_view(self, widget, content, buffers) -> None:
        """A view that has linked its controls says ``ready``: it has only the current state, so
        the states one step away are sent (again: a view opened later missed them)."""
        if isinstance(content, dict) and content.get("ready"):
            self._sent = {self.frame.get("key")}
            self._generation += 1
            self._after_move(None, alt=False)

    def _alt(self, values: dict) -> str:
        """The alt text of ``values``; an alt callback that fails gives an empty text (never raises)."""
        try:
            return self.explorer.alt_text(values)
        except Exception:
            return ""

    def _choices(self, name: str) -> tuple | None:
        control = self.explorer.controls[name]
        if control.kind == "choice":
            return tuple(control.options)
        if control.kind == "log":
            return tuple(control.stops())
        return None

    def _key(self, moved: tuple[int, int] | None = None) -> str:
        """The state's key: each control's position, ``moved`` = (control number, position) replaced."""
        where = [p.now() for p in self.positions]
        if moved is not None:
            where[moved[0]] = moved[1]
        return ",".join(str(w) for w in where)

    def _frame(self, key: str) -> dict:
        frame = live_frame(self.explorer.figure, self.moving)
        frame["key"] = key
        self._sent.add(key)
        return frame

    def _background(self) -> str:
        """The figure drawn without its moving artists, as base64 PNG."""
        for artist in self.moving:
            artist.set_animated(True)
        self.explorer.figure.canvas.draw()
        png = self.explorer._png(compress_level=6)
        self.explorer._background = None  # the explorer's own blitting must lay out again
        return base64.b64encode(png).decode("ascii")

    def _update(self, values: dict) -> None:
        """Run ``update``; new artists that move join ``moving`` and make the background stale."""
        changed = self.explorer._update(**values)
        if changed is None:
            raise NotImplementedError("update() returned no artists; a live canvas needs them")
        new = [artist for artist in changed if artist not in self.moving]
        if new:
            self.moving += new
            self.explorer._animated = list(self.moving)
            self._stale_background = True

    def redraw(self, moved: str | None = None) -> None:
        """Run ``update`` with the explorer's values and send the new frame (and, if new artists
        move, a new background first). A state the painter cannot draw is sent whole, as the
        background of an empty frame, drawn by matplotlib. Then, one per turn of the kernel's
        event loop while no other move arrives: the state one step further in the direction
        ``moved`` (the control that moved) went, the alt text (often as slow as ``update``: the
        figure is painted first), the other states one step away, and the figure put back in the
        current state. The time until the frame is sent is appended to the explorer's ``redraw_ms``."""
        start = time.perf_counter()
        self._generation += 1
        self._previous, self._here = self._here, [p.now() for p in self.positions]
        if len(self._sent) > AHEAD_KEPT:
            self._sent.clear()
            self.send({"clear": True})
        key = self._key()
        self._update(self.explorer.values)
        try:
            if self._stale_background:
                self._sent.clear()
                self.send({"clear": True})  # what the view keeps was drawn for the old background
                self.background = self._background()  # before the frame that needs it
                self._stale_background = False
            self.frame = self._frame(key)
        except NotImplementedError:  # this state only: matplotlib draws it whole
            self.explorer._background = None
            png = self.explorer.render()
            self._stale_background = True  # the next move sends the real background again
            self._sent.clear()
            self.send({"clear": True})
            self.background = base64.b64encode(png).decode("ascii")
            self.frame = {**live_frame(self.explorer.figure, []), "key": key}
        self.explorer.redraw_ms.append(1e3 * (time.perf_counter() - start))
        self._after_move(moved)

    def _after_move(self, moved: str | None, alt: bool = True) -> None:
        """Send the alt text and the states one step away, one per turn of the event loop, then put
        the figure back in the current state."""
        values, generation = dict(self.explorer.values), self._generation
        queue: list = self._ahead(moved) if self.ahead_enabled and not self._stale_background else []
        if alt:
            queue.insert(min(1, len(queue)), "alt")  # after the likeliest next state
        if any(isinstance(item, tuple) for item in queue):
            queue.append("restore")  # states ahead leave the figure in another state
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a script, a test): the alt text now, nothing ahead
            if alt:
                self.alt = self._alt(values)
            return

        def step():
            while queue and generation == self._generation:
                item = queue.pop(0)
                try:
                    if item == "alt":
                        self.alt = self._alt(values)
                    elif item == "restore":  # the kernel's figure shows the reader's state again
                        self.explorer._update(**values)
                        return
                    else:
                        key, state = item
                        if key in self._sent:
                            continue
                        self._update(state)
                        if self._stale_background:
                            queue[:] = ["restore"]  # new artists: the next move sends a new background
                        else:
                            self.send({"ahead": {key: self._frame(key)}})
                except Exception:  # a state ahead is only a head start: the move itself reports errors
                    queue[:] = [] if item == "restore" else ["restore"]
                loop.call_soon(step)  # one item per turn: a move that arrives meanwhile goes first
                return

        loop.call_soon(step)

    def _ahead(self, moved: str | None) -> list[tuple[str, dict]]:
        """The states one step away: (key, values), the moved control's first, in the direction it went."""
        here, last = self._here, self._previous
        order = sorted(range(len(self.positions)), key=lambda k: self.positions[k].name != moved)
        states = []
        for k in order:
            name = self.positions[k].name
            steps = self.positions[k].neighbours()
            went_down = isinstance(here[k], int) and isinstance(last[k], int) and here[k] < last[k]
            if not went_down:
                steps.reverse()  # the next step up first, unless it went down
            for position, value in steps:
                values = dict(self.explorer.values, **{name: self.explorer.controls[name].clamp(value)})
                states.append((self._key((k, position)), values))
        return states
