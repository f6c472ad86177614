"""An explorer's controls: sliders (linear or logarithmic) and menus, and how a value reads.

:func:`posenc.book.controls.slider` and :func:`posenc.book.controls.choice` describe a control (kind,
range, default, label); the live form (:mod:`posenc.book.widgets`) turns it into an ipywidget, the website's form
(:mod:`posenc.book.webfigure`, :mod:`posenc.book.player`) into a grid of values and an HTML control.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Control", "choice", "format_value", "slider"]

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
