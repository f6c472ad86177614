"""Explorers: one figure, a few controls, two forms from one code path.

In a live kernel (JupyterLab, Colab, Binder) an :class:`Explorer` shows ipywidgets
controls that redraw the figure; on the static website, where no kernel runs, it shows the
same figure redrawn in the browser (:mod:`posenc.book.player`): every control works there,
over a grid of its values, from posenc's numbers recorded at build time
(:mod:`posenc.book.webfigure`), in inline HTML and JavaScript that loads nothing from other
hosts. The environment variable ``POSENC_STATIC=1`` (set by ``make book`` and the test build)
selects the website's form.

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
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_choice, check_int
from .browser_formulas import computed_in_browser  # noqa: F401  (chapters import it from here)

__all__ = ["Control", "slider", "choice", "Explorer", "static_mode", "format_value"]

# The stops of a logarithmic slider in each decade: the Renard R20 series, twenty steps of about
# 0.05 decades that each read as a short number. The default, the frames and both ends are stops too.
_R20 = ("1", "1.12", "1.25", "1.4", "1.6", "1.8", "2", "2.24", "2.5", "2.8")
_R20 += ("3.15", "3.55", "4", "4.5", "5", "5.6", "6.3", "7.1", "8", "9")
_NEAR = 0.02  # decades: a series value this close to a value that must be a stop gives way to it


def _log_stops(minimum, maximum, keep, integer: bool) -> tuple:
    """The values a logarithmic slider can take: ``minimum``, ``maximum`` and ``keep`` exactly,
    and the R20 series between them (integers only, for an integer slider)."""
    kept = {min(max(v, minimum), maximum) for v in (minimum, maximum, *keep)}
    low, high = math.floor(math.log10(minimum)), math.ceil(math.log10(maximum))
    series = {float(f"{r}e{e}") for e in range(low, high + 1) for r in _R20}
    series = {v for v in series if minimum < v < maximum}
    whole = round if integer else float
    kept, series = {whole(v) for v in kept}, {whole(v) for v in series}
    logs = [math.log10(v) for v in kept]
    series = {v for v in series if all(abs(math.log10(v) - k) > _NEAR for k in logs)}
    return tuple(sorted(kept | series))


@dataclass(frozen=True)
class Control:
    """A control's kind, range and default; values outside the range are clamped.

    A logarithmic control (``kind="log"``) takes the values of ``stops()`` only, integers if
    ``integer``: its default and frames exactly, so that a reader can select them again.
    """

    kind: str  # "int", "float", "log" or "choice"
    value: object
    minimum: float | None = None
    maximum: float | None = None
    step: float | None = None
    options: tuple = ()
    label: str | None = None
    frames: tuple = field(default=())
    integer: bool = False  # a logarithmic control over integers (a length in tokens, say)

    def stops(self) -> tuple:
        """The values a logarithmic control can take, in increasing order."""
        return _log_stops(self.minimum, self.maximum, (self.value, *self.frames), self.integer)

    def clamp(self, value):
        """The nearest allowed value: within the range, on the step grid, or the default for an unknown option."""
        if self.kind == "choice":
            return value if value in self.options else self.value
        try:
            number = float(value)
        except (TypeError, ValueError):
            return self.value
        if not math.isfinite(number):
            return self.value
        number = min(max(number, self.minimum), self.maximum)
        if self.kind == "log":
            logs = math.log10(number)
            return min(self.stops(), key=lambda stop: abs(math.log10(stop) - logs))
        if self.kind == "int":
            step = int(self.step or 1)
            return int(self.minimum + round((number - self.minimum) / step) * step)
        if self.kind == "float" and self.step:
            number = self.minimum + round((number - self.minimum) / self.step) * self.step
            return float(min(max(number, self.minimum), self.maximum))
        return number

    def default_frames(self, count: int = 9) -> tuple:
        """Values the website keeps exactly for the main control: ``frames``, else ``count`` over the range."""
        if self.frames:
            return tuple(self.clamp(v) for v in self.frames)
        if self.kind == "choice":
            return self.options
        if self.kind == "log":
            values = np.geomspace(self.minimum, self.maximum, count)
        else:
            values = np.linspace(self.minimum, self.maximum, count)
        return tuple(dict.fromkeys(self.clamp(v) for v in values))


def slider(minimum, maximum, value, step=None, log: bool = False, label: str | None = None, frames=()) -> Control:
    """A slider from ``minimum`` to ``maximum``: integer if all three are ints (and ``step``), else float.

    ``log=True`` makes a logarithmic slider (for a base, say): about 20 stops per decade, plus
    ``value``, ``frames`` and both ends exactly; integers if all three are ints. ``label`` is the
    name the reader sees (with units: ``"L (tokens)"``); the default is the keyword's name.
    ``frames`` lists values the website keeps exactly (and plays) when this is the explorer's main control.
    """
    if not minimum < maximum:
        raise ValueError(f"slider needs minimum < maximum, got minimum={minimum}, maximum={maximum}")
    if log and minimum <= 0:
        raise ValueError(f"a logarithmic slider needs minimum > 0, got {minimum}")
    integral = all(isinstance(v, int) and not isinstance(v, bool) for v in (minimum, maximum, value))
    integral = integral and (step is None or isinstance(step, int))
    kind = "log" if log else ("int" if integral else "float")
    integer = log and integral
    if integer:  # the stops include value and frames exactly: keep them in range and whole
        frames = tuple(round(min(max(v, minimum), maximum)) for v in frames)
    made = Control(kind, value, minimum, maximum, step, label=label, frames=tuple(frames), integer=integer)
    return Control(kind, made.clamp(value), minimum, maximum, step, label=label, frames=tuple(frames), integer=integer)


def choice(options: Sequence, value=None, label: str | None = None) -> Control:
    """A drop-down menu of ``options`` (strings or numbers); the default is ``value`` or the first option."""
    options = tuple(options)
    if not options:
        raise ValueError("choice needs at least one option")
    value = options[0] if value is None else value
    if value not in options:
        raise ValueError(f"choice value {value!r} is not one of the options {list(options)}")
    return Control("choice", value, options=options, label=label)


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


def format_value(value) -> str:
    """A control's value as a reader sees it: ``10,000``, ``7.943``, ``0.02``, ``1.5e-05``.

    Whole numbers get thousands separators; others four significant digits, in positional
    notation from 0.001 to a million; text is shown as it is.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        return str(value)
    number = float(value)
    if not math.isfinite(number):
        return str(value)
    if number == round(number) and abs(number) < 1e15:
        return f"{round(number):,}"
    if not 1e-3 <= abs(number) < 1e6:
        return f"{number:.3g}"
    decimals = max(0, 3 - math.floor(math.log10(abs(number))))
    text = f"{number:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if decimals else text


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
        Name -> :func:`slider` or :func:`choice`; the names are ``update``'s keywords.
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
        from .player import static_player

        return static_player(self)

    def widget(self):
        """The live form: ipywidgets controls above the figure, redrawn on every change."""
        import ipywidgets as widgets

        image = widgets.Image(value=self.render(), format="png")
        message = widgets.HTML()
        controls = [self._make_widget(name, control, widgets) for name, control in self.controls.items()]

        def on_change(change):
            try:
                image.value = self.render(**{change["owner"].description_name: change["new"]})
                message.value = ""
            except Exception as error:  # a callback must never raise: say what went wrong instead
                message.value = f"<span style='color:#D55E00'>Could not redraw: {html.escape(str(error))}</span>"

        for control in controls:
            control.observe(on_change, names="value")
        return widgets.VBox([widgets.HBox(controls, layout=widgets.Layout(flex_flow="row wrap")), image, message])

    @staticmethod
    def _make_widget(name: str, control: Control, widgets):
        description = control.label or name
        common = {"description": description, "continuous_update": True, "style": {"description_width": "initial"}}
        if control.kind == "choice":
            common.pop("continuous_update")
            made = widgets.Dropdown(options=list(control.options), value=control.value, **common)
        elif control.kind == "int":
            made = widgets.IntSlider(
                min=int(control.minimum),
                max=int(control.maximum),
                step=int(control.step or 1),
                value=control.value,
                readout_format=",d",
                **common,
            )
        elif control.kind == "log":  # the stops, each labelled as the reader reads it
            options = [(format_value(stop), stop) for stop in control.stops()]
            made = widgets.SelectionSlider(options=options, value=control.value, **common)
        else:
            step = control.step or (control.maximum - control.minimum) / 100
            decimals = next((n for n in range(4) if abs(round(step, n) - step) < 1e-9 * step), 4)
            made = widgets.FloatSlider(
                min=control.minimum,
                max=control.maximum,
                step=step,
                value=control.value,
                readout_format=f",.{decimals}f",
                **common,
            )
        made.description_name = name
        return made

    def show(self):
        """Display the live widget in a kernel, the website's form on the website (``POSENC_STATIC=1``)."""
        from IPython.display import HTML, display

        if static_mode():
            display(HTML(self.static_html()))
        else:
            display(self.widget())
