"""Explorers: one figure, a few controls, two forms from one code path.

In a live kernel (JupyterLab, Colab, Binder) an :class:`Explorer` shows ipywidgets
controls that redraw the figure; on the static website, where no kernel runs, it shows the
same figure redrawn in the browser (:mod:`posenc.book.player`): every control works there,
over a grid of its values, from posenc's numbers recorded at build time
(:mod:`posenc.book.webfigure`), by a script that loads nothing from other hosts (the player's
files in the book's static folder, inline in a notebook's output and linked on the website).
The environment variable ``POSENC_STATIC=1`` (set by ``make book`` and the test build) selects
the website's form. ``POSENC_RECORD_EXPLORERS=1`` (the tests' run of the student edition) shows
neither: ``show()`` appends the explorer, drawn at its defaults, to :data:`RECORDED`, for checks
that render its states in the same kernel.

A chapter writes one ``setup(fig)`` function that draws the figure and returns an
``update(**values)`` function; ``update`` changes the artists that depend on the
controls and returns them. Only those artists are redrawn over a cached background
(blitting), so keep axes limits and colour scales fixed across control values, which
also makes the frames comparable. ``update`` may return ``None`` to ask for a full
redraw instead (slower: axes and text are laid out again).

Example::

    def setup(fig):
        ax = fig.subplots()
        (line,) = ax.plot(x, f(x, 1.0))
        ax.set(xlabel="position", ylabel="value", ylim=(-1, 1))

        def update(speed):
            line.set_ydata(f(x, speed))
            return [line]

        return update

    Explorer(setup, {"speed": slider(0.1, 2.0, 1.0, step=0.1)}, animate="speed",
             alt="A sine wave whose frequency follows the speed slider.").show()
"""

from __future__ import annotations

import html
import io
import os
import time
from collections.abc import Callable, Sequence

from .._validation import check_choice, check_int
from .controls import Control, format_value
from .player import static_player

# live controls in JupyterLab: a slider's track at least this wide, and room after each control
TRACK_PX = 200
CONTROL_MARGIN = "2px 28px 2px 0"

__all__ = ["Explorer", "RECORDED", "static_mode"]

#: The explorers that ``show()`` recorded instead of displaying (``POSENC_RECORD_EXPLORERS=1``), in order.
RECORDED: list[Explorer] = []


def static_mode() -> bool:
    """True when explorers should render the website's form (``POSENC_STATIC=1``) or no kernel is running."""
    if os.environ.get("POSENC_STATIC", "").strip() not in ("", "0"):
        return True
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:  # pragma: no cover - IPython comes with the notebooks
        return True
    return shell is None or not hasattr(shell, "kernel")


def _format(name: str, control: Control, value) -> str:
    return f"{control.label or name} = {format_value(value)}"


class Explorer:
    """A figure driven by controls; ``show()`` displays the live or the static form.

    Parameters
    ----------
    setup : callable
        ``setup(fig) -> update``; draws the figure once. ``update(**values)`` changes
        the artists that depend on the controls and returns them (or ``None`` for a
        full redraw).
    controls : dict
        Name -> :func:`~posenc.book.controls.slider` or :func:`~posenc.book.controls.choice`; the
        names are ``update``'s keywords.
    animate : str
        The main control: the website's play button steps through it.
    alt : str or callable
        Alt text of the figure; a callable receives the control values of each frame.
    figsize : tuple of float
        The figure's width and height in inches.
    dpi : int
        Its resolution in dots per inch.
    caption : str, optional
        Shown under the website's form.
    website_states : int, optional
        At most this many grid points on the website (default 2,000): fewer for an explorer whose
        ``update`` or alt text is slow, so that the book builds quickly.
    """

    def __init__(
        self,
        setup: Callable,
        controls: dict[str, Control],
        *,
        animate: str,
        alt,
        figsize=(7.2, 3.4),
        dpi: int = 90,
        caption: str | None = None,
        frames: Sequence | None = None,
        website_states: int | None = None,
    ):
        if not controls:
            raise ValueError("an Explorer needs at least one control")
        check_choice("animate", animate, controls)
        self.controls = dict(controls)
        self.animate = animate
        self.alt = alt
        self.caption = caption
        self.website_states = None if website_states is None else check_int("website_states", website_states, minimum=1)
        self.frames = tuple(frames) if frames is not None else self.controls[animate].default_frames()
        self.values = {name: control.value for name, control in self.controls.items()}
        self.redraw_ms: list[float] = []
        self._error: str | None = None

        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.figure = Figure(figsize=figsize, dpi=dpi, layout="constrained")
        FigureCanvasAgg(self.figure)
        self._update = setup(self.figure)
        if not callable(self._update):
            raise TypeError("setup(fig) must return the update(**values) function")
        self._animated: list = []
        self._background = None
        self._draw(self.values)

    # -- rendering -------------------------------------------------------------------------

    def _full_draw(self) -> None:
        canvas = self.figure.canvas
        for artist in self._animated:
            artist.set_animated(True)
        canvas.draw()
        if self.figure.get_layout_engine() is not None:
            self.figure.set_layout_engine("none")  # lay out once; frames must not jump
        self._background = canvas.copy_from_bbox(self.figure.bbox) if self._animated else None
        for artist in self._animated:
            artist.axes.draw_artist(artist) if artist.axes else self.figure.draw_artist(artist)

    def _draw(self, values: dict) -> None:
        changed = self._update(**values)
        if changed is None:
            for artist in self._animated:
                artist.set_animated(False)
            self._animated = []
            self._full_draw()
            return
        changed = list(changed)
        if self._background is None or any(a not in self._animated for a in changed):
            self._animated = list(dict.fromkeys(self._animated + changed))
            self._full_draw()
            return
        canvas = self.figure.canvas
        canvas.restore_region(self._background)
        for artist in self._animated:
            artist.axes.draw_artist(artist) if artist.axes else self.figure.draw_artist(artist)

    def _png(self, compress_level: int = 1, palette: bool = False) -> bytes:
        from PIL import Image

        canvas = self.figure.canvas
        image = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba()).convert("RGB")
        if palette:  # ~3x smaller files for the website; plots have few distinct colours
            image = image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        buffer = io.BytesIO()
        image.save(buffer, format="png", compress_level=compress_level, optimize=palette)
        return buffer.getvalue()

    def render(self, **values) -> bytes:
        """Set controls (clamped to their ranges), redraw, and return the figure as PNG bytes.

        The time of each call (update, draw and encode) is appended to ``redraw_ms``.
        """
        start = time.perf_counter()
        for name, value in values.items():
            if name not in self.controls:
                raise ValueError(f"unknown control {name!r}; this explorer has {sorted(self.controls)}")
            self.values[name] = self.controls[name].clamp(value)
        self._draw(self.values)
        png = self._png()
        self.redraw_ms.append(1e3 * (time.perf_counter() - start))
        return png

    def alt_text(self, values: dict | None = None) -> str:
        values = self.values if values is None else values
        return self.alt(**values) if callable(self.alt) else str(self.alt)

    # -- the two forms -------------------------------------------------------------------------

    def static_html(self) -> str:
        """The website's form (:func:`posenc.book.player.static_player`)."""

        return static_player(self)

    def widget(self):
        """The live form: ipywidgets controls above the figure, redrawn on every change.

        The figure is painted in the browser by the website's renderer from the records the
        kernel makes on each move (:class:`posenc.book.live.LiveFigure`); without anywidget, or
        for a figure that renderer cannot draw, it is a PNG that matplotlib redraws.
        """
        import ipywidgets as widgets

        message = widgets.HTML()
        controls = [self._make_widget(name, control, widgets) for name, control in self.controls.items()]
        figure, redraw = self._live_figure(widgets, dict(zip(self.controls, controls, strict=True)))

        def on_change(change):
            try:
                name = change["owner"].description_name
                self.values[name] = self.controls[name].clamp(change["new"])
                redraw(moved=name)
                message.value = ""
            except Exception as error:  # a callback must never raise: say what went wrong instead
                message.value = f"<span style='color:#D55E00'>Could not redraw: {html.escape(str(error))}</span>"

        for control in controls:
            control.observe(on_change, names="value")
        return widgets.VBox([widgets.HBox(controls, layout=widgets.Layout(flex_flow="row wrap")), figure, message])

    def _live_figure(self, widgets, controls: dict):
        """The figure's widget and the function that redraws it with ``self.values``
        (``redraw(moved=name)``, ``moved`` the control that moved)."""
        try:
            from .live import LiveFigure

            figure = LiveFigure(self, controls)
            return figure, figure.redraw
        except (ImportError, NotImplementedError):
            pass
        # at its own pixel size, scaled down in a narrow window, never up (that blurs its text)
        width_px, _ = self.figure.canvas.get_width_height()
        image = widgets.Image(
            value=self.render(), format="png", layout=widgets.Layout(width=f"{width_px}px", max_width="100%")
        )

        def redraw(moved=None):
            image.value = self.render()

        return image, redraw

    @staticmethod
    def _make_widget(name: str, control: Control, widgets):
        description = control.label or name
        common = {"description": description, "continuous_update": True, "style": {"description_width": "initial"}}
        if control.kind == "choice":
            common.pop("continuous_update")
            # wide enough for the label and the longest option (ipywidgets' 300 px cut long model names)
            characters = len(description) + max(len(str(option)) for option in control.options) + 5
            width = f"max(var(--jp-widgets-inline-width), {characters}ch)"
            made = widgets.Dropdown(
                options=list(control.options),
                value=control.value,
                layout=widgets.Layout(width=width, margin=CONTROL_MARGIN),
                **common,
            )
            made.description_name = name
            return made
        # a slider's track keeps TRACK_PX whatever its label and readout take (ipywidgets' fixed
        # 300 px left 37 px for a long label), and a gap keeps its readout from the next label
        readout = max(len(format_value(v)) for v in (control.minimum, control.maximum, control.value))
        characters = len(description) + readout + 4
        slider_layout = widgets.Layout(
            # 1ch (a digit's width) is narrower than an average label letter: 48 px to spare
            width=f"max(var(--jp-widgets-inline-width), calc({characters}ch + {TRACK_PX + 48}px))",
            max_width="100%",  # a narrow pane: the track shrinks rather than the control overflowing
            margin=CONTROL_MARGIN,
        )
        if control.kind == "int":
            made = widgets.IntSlider(
                min=int(control.minimum),
                max=int(control.maximum),
                step=int(control.step or 1),
                value=control.value,
                readout_format=",d",
                layout=slider_layout,
                **common,
            )
        elif control.kind == "log":  # the stops, each labelled as the reader reads it
            options = [(format_value(stop), stop) for stop in control.stops()]
            made = widgets.SelectionSlider(options=options, value=control.value, layout=slider_layout, **common)
        else:
            step = control.step or (control.maximum - control.minimum) / 100
            decimals = next((n for n in range(4) if abs(round(step, n) - step) < 1e-9 * step), 4)
            made = widgets.FloatSlider(
                min=control.minimum,
                max=control.maximum,
                step=step,
                value=control.value,
                readout_format=f",.{decimals}f",
                layout=slider_layout,
                **common,
            )
        made.description_name = name
        return made

    def show(self):
        """Display the live widget in a kernel, the website's form on the website (``POSENC_STATIC=1``), or record
        the explorer in :data:`RECORDED` (``POSENC_RECORD_EXPLORERS=1``)."""
        from IPython.display import HTML, display

        if os.environ.get("POSENC_RECORD_EXPLORERS", "").strip() not in ("", "0"):
            RECORDED.append(self)
        elif static_mode():
            display(HTML(self.static_html()))
        else:
            display(self.widget())
