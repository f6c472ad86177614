"""Plot helpers for the book: arrays and a matplotlib ``Axes`` in, the same ``Axes`` out.

They compute nothing but layout (the numbers come from the kernels), never call
``plt.show()``, and use colour-blind-safe colours: the Okabe-Ito palette for lines
(with distinct line styles as a second cue), ``RdBu_r`` (diverging, ColorBrewer's
colour-blind-safe scheme) centred on 0 for signed values, ``cividis`` for values of
one sign.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes

from .._validation import as_real_array

__all__ = [
    "DIVERGING_CMAP",
    "LINE_STYLES",
    "OKABE_ITO",
    "SEQUENTIAL_CMAP",
    "book_style",
    "plot_binary_table",
    "plot_encoding_heatmap",
    "plot_heatmap",
    "plot_per_pair",
    "plot_similarity",
    "plot_wave_stack",
    "plot_wavelengths",
    "smallest_text_px",
    "SMALLEST_TEXT_KEY",
]

#: Okabe & Ito (2008) colours, distinguishable with the common colour-vision deficiencies.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
#: Line styles used with the colours, so that lines differ in more than colour.
LINE_STYLES = ("-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 1)), (0, (8, 2)))
#: Colour map for signed values, centred on 0 (ColorBrewer RdBu reversed, so negative is blue and positive red).
DIVERGING_CMAP = "RdBu_r"
#: Colour map for values of one sign (cividis, perceptually uniform and readable with colour-vision deficiencies).
SEQUENTIAL_CMAP = "cividis"


def book_style() -> dict:
    """``rcParams`` for the book's figures: readable fonts, Okabe-Ito cycle, an opaque white
    background (so figures stay legible on the site's dark theme), and a figure hook
    (:func:`record_smallest_text`) with which each figure's PNG records its smallest text, so
    that the website can keep it readable on a phone. Use with
    ``matplotlib.rc_context(book_style())`` or ``plt.rcParams.update(book_style())``."""
    return {
        "figure.dpi": 100,
        "savefig.dpi": 100,
        "figure.facecolor": "white",
        "savefig.facecolor": "white",
        "axes.facecolor": "white",
        "font.size": 11,
        "axes.titlesize": 12,
        "axes.labelsize": 11,
        "legend.fontsize": 10,
        "axes.prop_cycle": mpl.cycler(color=list(OKABE_ITO)),
        "axes.spines.top": False,
        "axes.spines.right": False,
        "image.cmap": SEQUENTIAL_CMAP,
        "figure.hooks": ["posenc.book.plotting:record_smallest_text"],
    }


#: The PNG text chunk in which a figure saved as PNG records :func:`smallest_text_px` (see
#: :func:`record_smallest_text`); the book's website reads it to keep the text readable on a phone.
SMALLEST_TEXT_KEY = "posenc:smallest-text-px"


def smallest_text_px(figure) -> float | None:
    """The font size in pixels of the smallest text that ``figure`` draws, or None if it draws none.

    A text of ``s`` points at ``dpi`` dots per inch is ``s * dpi / 72`` pixels tall (the em size).
    Call it on a figure that has been drawn (tick labels get their text when drawn); it draws
    nothing itself, so the figure's layout stays as it is. The texts counted are the visible,
    non-empty ones in visible axes.
    """
    from matplotlib.text import Text

    def drawn(artist) -> bool:
        return (
            isinstance(artist, Text)
            and artist.get_visible()
            and bool(artist.get_text().strip())
            and (artist.axes is None or artist.axes.get_visible())
        )

    sizes = [text.get_fontsize() for text in figure.findobj(drawn)]
    return min(sizes) * figure.dpi / 72 if sizes else None


def record_smallest_text(figure) -> None:
    """A ``figure.hooks`` hook (set by :func:`book_style`): a PNG of ``figure`` records its smallest text.

    Whenever the figure is printed as PNG (``savefig``, or a notebook's inline output), the PNG
    gets a text chunk :data:`SMALLEST_TEXT_KEY` with :func:`smallest_text_px` at the printed dpi,
    measured when the figure has been drawn for that PNG (matplotlib writes the chunks after it
    draws). Nothing else changes: no extra draw, the same pixels.
    """
    canvas = figure.canvas
    print_figure = canvas.print_figure

    def print_with_smallest_text(filename, *args, **kwargs):
        fmt = kwargs.get("format")
        if fmt is None and isinstance(filename, (str, os.PathLike)):
            fmt = os.path.splitext(os.fspath(filename))[1][1:] or None
        if str(fmt or mpl.rcParams["savefig.format"]).lower() != "png":
            return print_figure(filename, *args, **kwargs)
        metadata = dict(kwargs.get("metadata") or {})
        kwargs["metadata"] = metadata  # the same dict: filled in after each draw, written after the last

        def measure(event):
            px = smallest_text_px(figure)
            if px is not None:
                metadata[SMALLEST_TEXT_KEY] = f"{px:.3f}"  # at the dpi the figure is printed at

        connection = figure.canvas.mpl_connect("draw_event", measure)
        try:
            return print_figure(filename, *args, **kwargs)
        finally:
            figure.canvas.mpl_disconnect(connection)

    canvas.print_figure = print_with_smallest_text


def _colorbar(ax: Axes, image, label: str | None) -> None:
    bar = ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    if label:
        bar.set_label(label)


def plot_heatmap(
    matrix,
    ax: Axes,
    *,
    signed: bool | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    cmap: str | None = None,
    colorbar: bool = True,
    colorbar_label: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    title: str | None = None,
    extent=None,
) -> Axes:
    """A matrix as an image, row 0 at the top; NaN cells (a mask, padding) are left blank.

    ``signed`` (default: whether the matrix has negative entries) picks a diverging
    map with limits ``[-vmax, vmax]`` so that 0 is the neutral colour; otherwise a
    sequential map from ``vmin`` (default: the minimum) to ``vmax`` (default: the
    maximum). Pass the same limits to several panels to share one colour scale.
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"matrix must be 2-dimensional, got shape {matrix.shape}")
    if np.any(np.isinf(matrix)):
        raise ValueError("matrix must not contain infinities (use NaN for cells to leave blank)")
    finite = matrix[np.isfinite(matrix)]
    if finite.size == 0:
        finite = np.zeros(1)
    if signed is None:
        signed = bool(np.any(finite < 0))
    if signed:
        limit = vmax if vmax is not None else float(np.max(np.abs(finite))) or 1.0
        vmin, vmax = -limit, limit
        cmap = cmap or DIVERGING_CMAP
    else:
        vmin = float(np.min(finite)) if vmin is None else vmin
        vmax = float(np.max(finite)) if vmax is None else vmax
        cmap = cmap or SEQUENTIAL_CMAP
    image = ax.imshow(matrix, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest", extent=extent)
    if colorbar:
        _colorbar(ax, image, colorbar_label)
    ax.set_xlabel(xlabel or "")
    ax.set_ylabel(ylabel or "")
    if title:
        ax.set_title(title)
    return ax


def plot_encoding_heatmap(table, ax: Axes, *, title: str | None = None, colorbar: bool = True) -> Axes:
    """An encoding table (positions x dimensions) with values in [-1, 1] on a diverging map."""
    return plot_heatmap(
        table,
        ax,
        signed=True,
        vmax=1.0,
        colorbar=colorbar,
        colorbar_label="value",
        xlabel="dimension",
        ylabel="position p (token index)",
        title=title,
    )


def plot_similarity(sim, ax: Axes, *, title: str | None = None, colorbar_label: str = "dot product") -> Axes:
    """A similarity matrix (position x position); diverging if any entry is negative."""
    return plot_heatmap(
        sim, ax, colorbar_label=colorbar_label, xlabel="key position q", ylabel="query position p", title=title
    )


def plot_binary_table(bits, ax: Axes, *, title: str | None = None, colorbar: bool = True) -> Axes:
    """A table of 0/1 bits (positions x bits), bit 0 (fastest) on the left; black is 1."""
    bits = as_real_array("bits", bits, ndim=2)
    image = ax.imshow(bits, cmap="Greys", vmin=0, vmax=1, aspect="auto", interpolation="nearest")
    if colorbar:
        bar = ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04, ticks=[0, 1])
        bar.set_label("bit value")
    ax.set_xticks(range(bits.shape[1]))
    ax.set_xlabel("bit j (period 2^(j+1))")
    ax.set_ylabel("position p")
    if title:
        ax.set_title(title)
    return ax


def plot_wave_stack(
    curve_positions,
    curve_table,
    ax: Axes,
    *,
    token_positions=None,
    token_table=None,
    dims=None,
    highlight: int | None = None,
    spacing: float = 2.6,
    dim_labels=None,
) -> Axes:
    """One wave per dimension, stacked (dimension 0 at the top), tokens as sample points.

    ``curve_table`` (``len(curve_positions)`` x ``d``) draws each dimension as a
    continuous wave; ``token_table`` marks the values at integer positions. A
    token's encoding is the column of values it hits, read top to bottom; the
    ``highlight`` position is marked with a vertical line and its values printed.
    """
    curve_positions = as_real_array("curve_positions", curve_positions, ndim=1)
    curve_table = as_real_array("curve_table", curve_table, ndim=2)
    dims = list(range(curve_table.shape[1])) if dims is None else list(dims)
    if dim_labels is None:
        dim_labels = [f"dim {d} ({'sin' if d % 2 == 0 else 'cos'}, i={d // 2})" for d in dims]
    for row, d in enumerate(dims):
        offset = -row * spacing
        color = OKABE_ITO[(d // 2) % len(OKABE_ITO)]
        ax.axhline(offset, color="0.85", lw=0.8, zorder=0)
        ax.plot(curve_positions, curve_table[:, d] + offset, color=color, lw=1.6)
        if token_table is not None:
            ax.plot(token_positions, np.asarray(token_table)[:, d] + offset, "o", color=color, ms=4)
        if highlight is not None and token_table is not None:
            value = float(np.asarray(token_table)[highlight, d])
            ax.annotate(
                f"{value:+.3f}",
                (token_positions[highlight], value + offset),
                textcoords="offset points",
                xytext=(6, 6),
                fontsize=9,
                color="black",
            )
    if highlight is not None and token_positions is not None:
        ax.axvline(token_positions[highlight], color="black", ls="--", lw=1)
    ax.set_yticks([-row * spacing for row in range(len(dims))], dim_labels)
    ax.set_xlabel("position p (tokens)")
    ax.set_ylim(-(len(dims) - 1) * spacing - 1.5, 1.5)
    return ax


def plot_per_pair(
    curves: Mapping[str, np.ndarray],
    ax: Axes,
    *,
    ylabel: str,
    log: bool = False,
    hline: float | None = None,
    hline_label: str | None = None,
    xlabel: str = "pair index i (0 = fastest)",
    title: str | None = None,
) -> Axes:
    """One line per named per-pair quantity (rotation speed, scale, turns within a context...)."""
    for n, (label, values) in enumerate(curves.items()):
        values = as_real_array(f"curves[{label!r}]", values, ndim=1)
        ax.plot(
            np.arange(values.size),
            values,
            label=label,
            color=OKABE_ITO[n % len(OKABE_ITO)],
            ls=LINE_STYLES[n % len(LINE_STYLES)],
            lw=2,
        )
    if hline is not None:
        ax.axhline(hline, color="0.3", ls=":", lw=1.2, label=hline_label)
    if log:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if len(curves) > 1 or hline_label:
        ax.legend()
    return ax


def plot_wavelengths(
    curves: Mapping[str, np.ndarray],
    ax: Axes,
    *,
    context_length: float | None = None,
    title: str | None = None,
) -> Axes:
    """Wavelength (tokens per turn) against pair index on a log scale, with the context length marked."""
    return plot_per_pair(
        curves,
        ax,
        ylabel="wavelength (tokens per full turn)",
        log=True,
        hline=context_length,
        hline_label=None if context_length is None else f"context length L = {context_length:g}",
        title=title,
    )
