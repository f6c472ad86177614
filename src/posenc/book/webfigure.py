"""An explorer's figure as data, for the website: drawn again in the browser from posenc's numbers.

At build time every explorer is evaluated on a grid of each control's values (:func:`web_grids`).
The figure without its moving parts is one PNG (the *background*: axes, ticks, labels, legends).
The moving parts (the artists that ``update`` returns) are recorded in every state of the grid,
in the figure's pixel coordinates, as matplotlib would draw them:

* lines: the transformed, clipped and simplified path (``Path.cleaned``, the path the Agg
  renderer strokes), its colour, width, dashes, and its markers' shape and positions;
* images: the colour-mapped pixels as palette indices, and the rectangle they fill;
* texts: each line's string, baseline position, width, font and alignment;
* patches and scatter collections: their polygons and colours.

Coordinates are stored as 16-bit integers in 1/8 pixel; identical records are stored once, and
a table names, for each state and artist, the record to draw (most artists depend on only some
of the controls, so most records repeat). The browser's canvas redraws a state in a few
milliseconds (:mod:`posenc.book.player`); ``axes`` carries each panel's data-to-pixel mapping so
that tests can read the drawn values back as data and compare them with posenc. Artists too large
to record in every state are computed by the browser instead (:mod:`posenc.book.browser_formulas`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from itertools import product

import numpy as np

from .._validation import check_int
from .browser_formulas import _ARRAY_DIGITS, BROWSER_FORMULAS
from .controls import format_value
from .plotting import smallest_text_px

__all__ = ["web_grids", "control_grid", "figure_data", "live_frame", "alt_text"]

MAX_STATES = 2000  # grid points per explorer: a page stays under 3 MB, its data well under 1 MB gzipped
CHECK_FIRST, CHECK_EVERY = 20, 10  # a browser formula is checked in its first 20 states, then 1 in 10
MAIN_STOPS, OTHER_STOPS, MIN_STOPS = 64, 16, 3
SUBPIXEL = 8  # coordinates in 1/8 px
BREAK = -32768  # int16 marker: start a new sub-path
_GEOMETRY = {"p", "mp", "lines", "pixels", "args", "sh"}  # what changes from record to record; the rest is style
_SENTENCE = re.compile(r"(?<=[.:;]) ")  # alt texts repeat most of their sentences from state to state
_LIMIT = 2047  # px: |coordinate| after clipping; steps between points stay inside int16


def control_grid(control, count: int, keep=()) -> tuple:
    """At most about ``count`` values of ``control`` for the website, spread over its range.

    A choice keeps every option. A slider keeps every value it can take if there are at most
    ``count``; else ``count`` values evenly spread over them (in steps of the slider, or of its
    logarithmic stops), plus its default and ``keep`` (the main control's frames) exactly.
    """
    count = check_int("count", count, minimum=1)
    if control.kind == "choice":
        return tuple(control.options)
    if control.kind == "log":
        allowed = list(control.stops())
    elif control.kind == "int" or (control.kind == "float" and control.step):
        step = control.step or 1
        n = round((control.maximum - control.minimum) / step) + 1
        allowed = list(dict.fromkeys(control.clamp(control.minimum + k * step) for k in range(n)))
    else:
        allowed = [control.clamp(v) for v in np.linspace(control.minimum, control.maximum, count)]
    must = {control.clamp(v) for v in (control.value, *keep)}
    if len(allowed) > count:
        picks = np.unique(np.round(np.linspace(0, len(allowed) - 1, count)).astype(int))
        allowed = sorted({allowed[i] for i in picks} | must)
    return tuple(dict.fromkeys(allowed))


def web_grids(explorer, max_states: int = MAX_STATES) -> dict[str, tuple]:
    """Each control's website values: the main control up to 64, others up to 16, fewer while
    the grid holds more than ``max_states`` points (the control with most values per weight
    gives one up first; the main control counts triple; choices keep every option)."""
    max_states = check_int("max_states", max_states, minimum=1)
    names = list(explorer.controls)
    counts = {n: MAIN_STOPS if n == explorer.animate else OTHER_STOPS for n in names}

    def grid(name):
        keep = explorer.frames if name == explorer.animate else ()
        return control_grid(explorer.controls[name], counts[name], keep)

    grids = {n: grid(n) for n in names}
    while math.prod(len(g) for g in grids.values()) > max_states:
        shrinkable = [
            n
            for n in names
            if explorer.controls[n].kind != "choice" and len(grids[n]) > MIN_STOPS and counts[n] > MIN_STOPS
        ]
        if not shrinkable:
            break
        weight = {n: 3.0 if n == explorer.animate else 1.0 for n in names}
        name = max(shrinkable, key=lambda n: len(grids[n]) / weight[n])
        counts[name] = min(counts[name], len(grids[name])) - 1
        grids[name] = grid(name)
    return grids


def _marked(points: np.ndarray, markevery) -> np.ndarray:
    """The points that carry a marker under ``Line2D.set_markevery`` (int, (start, step), slice,
    list of indices or booleans); spacing by distance (floats) is not supported."""
    if markevery is None:
        return points
    if isinstance(markevery, int | np.integer):
        return points[::markevery]
    if isinstance(markevery, tuple) and all(isinstance(v, int | np.integer) for v in markevery):
        return points[markevery[0] :: markevery[1]]
    if isinstance(markevery, slice):
        return points[markevery]
    chosen = np.asarray(markevery)
    if chosen.dtype == bool or np.issubdtype(chosen.dtype, np.integer):
        return points[chosen]
    raise NotImplementedError(f"the website cannot place markers with markevery={markevery!r}")


def _rgba(colour, alpha=None) -> str | None:
    from matplotlib.colors import to_rgba

    if colour is None or (isinstance(colour, str) and colour.lower() == "none"):
        return None
    r, g, b, a = to_rgba(colour, alpha)
    if a == 0:
        return None
    return f"rgba({round(255 * r)},{round(255 * g)},{round(255 * b)},{round(a, 3):g})"


def _hashable(value):
    """``value`` as a dictionary key: itself if hashable, an array by its bytes (numpy's repr of a long
    array elides its middle), anything else by its repr."""
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


class _Recorder:
    """Collects the unique records, their binary arrays and the marker shapes of one explorer."""

    def __init__(self, figure, check_formulas: bool = True):
        self.figure = figure
        self.check_formulas = check_formulas
        self.height = figure.bbox.height
        self.px_per_point = figure.dpi / 72.0
        self.renderer = figure.canvas.get_renderer()
        self.xy: list[np.ndarray] = []  # int16 chunks
        self.xy_length = 0
        self.pixels: list[bytes] = []
        self.pixels_length = 0
        self.items: list[dict] = []
        self.index: dict[str, int] = {}
        self.axes: list = []
        self.shapes, self.luts, self.arrays, self.styles = [], [], [], []  # each entry stored once
        self._interned: dict[tuple, int] = {}
        self.checked: dict[str, int] = {}
        self._lines: dict[tuple, int] = {}  # a line's record by what _line reads (_line_key)

    # -- binary storage ---------------------------------------------------------------------

    @staticmethod
    def _encode(parts) -> np.ndarray:
        """Sub-paths (arrays of canvas px, y down) as int16 pairs in 1/8 px.

        Each sub-path is its first point and then the steps between points (small numbers that
        compress well); a ``BREAK`` pair separates sub-paths.
        """
        chunks = []
        for part in parts:
            part = np.asarray(part, dtype=float).reshape(-1, 2)
            if part.size == 0:
                continue
            if chunks:
                chunks.append(np.array([[BREAK, BREAK]]))
            fixed = np.round(np.clip(part, -_LIMIT, _LIMIT) * SUBPIXEL).astype(np.int32)
            chunks.append(np.concatenate([fixed[:1], np.diff(fixed, axis=0)]))
        return np.concatenate(chunks).astype("<i2") if chunks else np.zeros((0, 2), "<i2")

    def _canvas(self, points) -> np.ndarray:
        points = np.asarray(points, dtype=float).reshape(-1, 2)
        return np.column_stack([points[:, 0], self.height - points[:, 1]])

    def _clip(self, artist):
        if not artist.get_clip_on() or artist.get_clip_box() is None:
            return None
        x0, y0, x1, y1 = artist.get_clip_box().extents
        return [round(x0, 2), round(self.height - y1, 2), round(x1 - x0, 2), round(y1 - y0, 2)]

    def _axis(self, artist):
        ax = artist.axes
        if ax is None:
            return None
        if ax not in self.axes:
            self.axes.append(ax)
        return self.axes.index(ax)

    def _intern(self, table: str, value) -> int:
        """The index of ``value`` in the shared table ``table`` ("shapes", "luts", ...), appended if new."""
        key = (table, json.dumps(value, sort_keys=True))
        if key not in self._interned:
            self._interned[key] = len(getattr(self, table))
            getattr(self, table).append(value)
        return self._interned[key]

    def _shape(self, path, transform, filled: bool) -> int:
        polygons = path.to_polygons(transform, closed_only=False)
        flipped = [[round(float(v), 2) for xy in poly for v in (xy[0], -xy[1])] for poly in polygons]
        return self._intern("shapes", [flipped, filled])

    def add(self, record: dict, arrays: dict) -> int:
        """Store ``record`` once (with its arrays, compared as stored: quantised); returns its index."""
        encoded = {
            name: (parts[0] if name == "pixels" else self._encode(parts).tobytes()) for name, parts in arrays.items()
        }
        digest = hashlib.sha1(json.dumps(record, sort_keys=True).encode())
        for name in sorted(encoded):
            digest.update(name.encode() + b":" + encoded[name])
        key = digest.hexdigest()
        if key in self.index:
            return self.index[key]
        style = {k: v for k, v in record.items() if k not in _GEOMETRY}  # shared by many records
        record = {k: v for k, v in record.items() if k in _GEOMETRY}
        record["s"] = self._intern("styles", style)
        for name, data in encoded.items():
            if name == "pixels":
                if self.pixels_length % 2:  # two-byte pixels start at an even offset
                    self.pixels.append(b"\0")
                    self.pixels_length += 1
                record[name] = [self.pixels_length, len(data)]
                self.pixels.append(data)
                self.pixels_length += len(data)
            else:
                pairs = np.frombuffer(data, dtype="<i2").reshape(-1, 2)
                record[name] = [self.xy_length, pairs.shape[0]]
                self.xy.append(pairs)
                self.xy_length += pairs.shape[0]
        self.index[key] = len(self.items)
        self.items.append(record)
        return self.index[key]

    # -- artists ----------------------------------------------------------------------------

    def record(self, artist) -> int:
        from matplotlib.collections import PathCollection
        from matplotlib.image import AxesImage
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch
        from matplotlib.text import Text

        if not artist.get_visible():
            return self.add({"t": "none"}, {})
        if isinstance(artist, Line2D):
            key = self._line_key(artist)
            if key is None:
                return self._line(artist)
            if key not in self._lines:
                self._lines[key] = self._line(artist)
            return self._lines[key]
        if isinstance(artist, Text):
            return self._text(artist)
        if isinstance(artist, AxesImage):
            return self._image(artist)
        if isinstance(artist, Patch):
            return self._patch(artist)
        if isinstance(artist, PathCollection):
            return self._scatter(artist)
        raise NotImplementedError(f"the website cannot draw a changing {type(artist).__name__} yet")

    @staticmethod
    def _line_key(line) -> tuple | None:
        """Everything :meth:`_line` reads of ``line``, as a key: the same key, the same record. Most
        explorers move a few of their lines with one control, and a figure's grid holds each line's
        state many times over (chapter 2's wave stack: 8 times; recording took 20 s of its 28).
        None (not kept) for a line whose transform is not affine (a log axis) or whose data the
        browser computes."""
        transform, marker = line.get_transform(), line.get_marker()
        if not transform.is_affine or getattr(line, "_posenc_formula", None) is not None:
            return None
        if not isinstance(marker, str | int):  # a marker given as a path or vertices
            return None
        clip = line.get_clip_box() if line.get_clip_on() else None
        style = (
            line.get_linestyle(), line.get_linewidth(), line.get_color(), line.get_alpha(),
            getattr(line, "_dash_pattern", None), line.get_dash_capstyle(), line.get_solid_capstyle(),
            line.get_dash_joinstyle(), line.get_solid_joinstyle(), line.get_drawstyle(),
            marker, line.get_fillstyle(), line.get_markersize(), line.get_markerfacecolor(),
            line.get_markeredgecolor(), line.get_markeredgewidth(), line.get_markevery(),
        )  # fmt: skip
        xy = np.asarray(line.get_xydata(), dtype=float)
        return (
            id(line.axes),
            None if clip is None else tuple(clip.extents),
            transform.get_matrix().tobytes(),
            xy.shape,
            xy.tobytes(),
            tuple(map(_hashable, style)),
        )

    def _line(self, line) -> int:
        from matplotlib.markers import MarkerStyle
        from matplotlib.transforms import Affine2D

        record = {"t": "l", "clip": self._clip(line), "ax": self._axis(line)}
        arrays = {}
        transform = line.get_transform()
        width = line.get_linewidth() * self.px_per_point
        formula = getattr(line, "_posenc_formula", None)
        if formula is not None:
            name, arguments = formula
            shipped, rounded = self._formula_arguments(name, arguments)
            if self._should_check(name):
                x, y = BROWSER_FORMULAS[name](**rounded)
                drawn = line.get_xydata()
                if drawn.shape != (len(x), 2) or not np.allclose(drawn, np.column_stack([x, y]), rtol=0, atol=1e-6):
                    raise ValueError(f"computed_in_browser: {name}({arguments}) does not give the line's data")
            if line.get_marker() not in (None, "None", "", " ") or line.get_drawstyle() != "default":
                raise NotImplementedError("a browser-computed line has no markers and the default drawstyle")
            record.update(fn=name, args=shipped)
        stroked = line.get_linestyle() not in ("None", "", " ") and width > 0
        if stroked and formula is None:
            display = transform.transform_path(line.get_path())  # drawstyle (steps) included
            clip = line.get_clip_box().extents if record["clip"] else None
            cleaned = display.cleaned(remove_nans=True, clip=clip, simplify=True)
            codes = cleaned.codes
            drawn = np.flatnonzero((codes == 1) | (codes == 2))  # MOVETO, LINETO: the polyline's points
            starts = np.flatnonzero(codes[drawn] == 1)  # each MOVETO starts a sub-path
            parts = np.split(cleaned.vertices[drawn], starts[starts > 0])
            arrays["p"] = [self._canvas(part) for part in parts if len(part) > 1]
        if stroked:
            offset, pattern = getattr(line, "_dash_pattern", (0, None))
            dashed = pattern is not None and len(pattern) > 0
            record.update(
                c=_rgba(line.get_color(), line.get_alpha()),
                w=round(width, 3),
                d=[round(v * self.px_per_point, 3) for v in pattern] if dashed else [],
                o=round((offset or 0) * self.px_per_point, 3),
                cap=(line.get_dash_capstyle() if dashed else line.get_solid_capstyle()),
                join=(line.get_dash_joinstyle() if dashed else line.get_solid_joinstyle()),
            )
        marker = MarkerStyle(line.get_marker(), line.get_fillstyle())
        size = line.get_markersize() * self.px_per_point
        if marker.get_marker() not in (None, "None", "", " ") and size > 0:
            scale = marker.get_transform() + Affine2D().scale(size)
            filled = marker.is_filled() and marker.get_fillstyle() != "none"
            points = _marked(transform.transform(line.get_xydata()), line.get_markevery())
            points = points[np.all(np.isfinite(points), axis=1)]
            if record["clip"]:
                x0, y0, x1, y1 = line.get_clip_box().extents
                inside = (points[:, 0] > x0 - size) & (points[:, 0] < x1 + size)
                points = points[inside & (points[:, 1] > y0 - size) & (points[:, 1] < y1 + size)]
            record["m"] = {
                "s": self._shape(marker.get_path(), scale, filled),
                "f": _rgba(line.get_markerfacecolor(), line.get_alpha()) if filled else None,
                "e": _rgba(line.get_markeredgecolor(), line.get_alpha()),
                "w": round(line.get_markeredgewidth() * self.px_per_point, 3),
            }
            arrays["mp"] = [self._canvas(points)]
        return self.add(record, arrays)

    def _text(self, text) -> int:
        string = text.get_text()
        if not string.strip():
            return self.add({"t": "none"}, {})
        if text.get_rotation() % 360 != 0:
            raise NotImplementedError("the website cannot draw a changing rotated text yet")
        if text.get_bbox_patch() is not None:
            raise NotImplementedError("the website cannot draw a changing text with a box yet")
        _, info, _ = text._get_layout(self.renderer)  # matplotlib's own line layout
        x, y = text.get_transform().transform(text.get_unitless_position())
        align = text.get_horizontalalignment() if len(info) == 1 else (text._multialignment or "center")
        lines = []
        for line, wad, (dx, dy) in info:
            width = wad[0]
            if text._preprocess_math(line)[1]:
                raise NotImplementedError(f"the website cannot typeset math in a changing text: {line!r}")
            left = x + dx
            anchor = {"left": left, "center": left + width / 2, "right": left + width}[align]
            lines.append([line, round(anchor, 2), round(self.height - (y + dy), 2), round(width, 2)])
        props = text.get_fontproperties()
        weight = props.get_weight()
        weight = {"normal": 400, "bold": 700}.get(weight, weight)
        size = props.get_size_in_points() * self.px_per_point
        record = {
            "t": "t",
            "lines": lines,
            "a": align,
            "f": f'{weight} {round(size, 2)}px "DejaVu Sans", Verdana, Arial, sans-serif',
            "c": _rgba(text.get_color(), text.get_alpha()),
        }
        return self.add(record, {})

    def _image(self, image) -> int:
        array = image.get_array()
        if array.ndim != 2:
            raise NotImplementedError("the website draws colour-mapped 2-D images only")
        formula = getattr(image, "_posenc_formula", None)
        if formula is not None:
            return self._formula_image(image, *formula)
        rgba = image.to_rgba(array, bytes=True, alpha=image.get_alpha())
        packed = rgba.reshape(-1, 4).copy().view("<u4").ravel()
        colours, indices = np.unique(packed, return_inverse=True)
        if colours.size > 2**16:
            raise NotImplementedError("an image with more than 65536 colours")
        depth = 1 if colours.size <= 256 else 2  # bytes per pixel
        pixels = indices.reshape(array.shape).astype(np.uint8 if depth == 1 else "<u2")
        rect, flip_rows, flip_columns, smooth = self._placement(image, array.shape)
        if flip_rows:
            pixels = pixels[::-1]
        if flip_columns:
            pixels = pixels[:, ::-1]
        palette = colours.view(np.uint8).reshape(-1, 4).ravel().tolist()
        record = {
            "t": "i",
            "clip": self._clip(image),
            "ax": self._axis(image),
            "size": [array.shape[1], array.shape[0]],
            "rect": rect,
            "pal": palette,
            "smooth": smooth,
            "bpp": depth,
        }
        return self.add(record, {"pixels": [np.ascontiguousarray(pixels).tobytes()]})

    def _placement(self, image, shape) -> tuple:
        """The canvas rectangle (x, y, width, height) of the image and whether rows/columns flip."""
        left, right, bottom, top = image.get_extent()
        first_row = top if image.origin == "upper" else bottom
        last_row = bottom if image.origin == "upper" else top
        (xa, ya), (xb, yb) = image.axes.transData.transform([(left, first_row), (right, last_row)])
        ya, yb = self.height - ya, self.height - yb
        flip_columns, flip_rows = bool(xa > xb), bool(ya > yb)
        xa, xb = min(xa, xb), max(xa, xb)
        ya, yb = min(ya, yb), max(ya, yb)
        rect = [round(xa, 2), round(ya, 2), round(xb - xa, 2), round(yb - ya, 2)]
        return rect, flip_rows, flip_columns, bool((xb - xa) / shape[1] < 3)

    def _should_check(self, name: str) -> bool:
        if not self.check_formulas:
            return False
        count = self.checked.get(name, 0)
        self.checked[name] = count + 1
        return count < CHECK_FIRST or count % CHECK_EVERY == 0

    def _formula_arguments(self, name: str, arguments: dict) -> tuple[dict, dict]:
        """The arguments as shipped (arrays rounded and stored once, referred to by index) and as
        the Python twin receives them (the same rounded arrays)."""
        shipped, rounded = {}, {}
        for key, value in arguments.items():
            if isinstance(value, np.ndarray | list | tuple):
                values = [float(f"{v:.{_ARRAY_DIGITS}g}") for v in np.asarray(value, dtype=float).ravel()]
                shipped[key], rounded[key] = {"array": self._intern("arrays", values)}, np.array(values)
            elif isinstance(value, str):
                shipped[key] = rounded[key] = value
            elif isinstance(value, bool | np.bool_):
                shipped[key] = rounded[key] = bool(value)
            elif isinstance(value, int | np.integer):
                shipped[key] = rounded[key] = int(value)
            else:
                shipped[key] = rounded[key] = float(value)
        return shipped, rounded

    def _formula_image(self, image, name: str, arguments: dict) -> int:
        from matplotlib.colors import Normalize

        data = np.ma.filled(image.get_array().astype(float), np.nan)
        shipped, rounded = self._formula_arguments(name, arguments)
        if self._should_check(name):
            expected = BROWSER_FORMULAS[name](**rounded)
            if expected.shape != data.shape or not np.allclose(expected, data, rtol=0, atol=1e-6, equal_nan=True):
                raise ValueError(f"computed_in_browser: {name}({arguments}) does not give the image's data")
        if type(image.norm) is not Normalize:
            raise NotImplementedError("a browser-computed image needs a linear Normalize")
        cmap = image.get_cmap()
        cmap(0.0)  # builds the look-up table
        lut = np.round(np.asarray(cmap._lut) * 255).astype(int)  # N colours, then under, over, bad
        rect, flip_rows, flip_columns, smooth = self._placement(image, data.shape)
        record = {
            "t": "i",
            "clip": self._clip(image),
            "ax": self._axis(image),
            "size": [data.shape[1], data.shape[0]],
            "rect": rect,
            "flip": [flip_rows, flip_columns],
            "smooth": smooth,
            "fn": name,
            "args": shipped,
            "lut": self._intern("luts", {"n": int(cmap.N), "rgba": lut.ravel().tolist()}),
            "range": [float(image.norm.vmin), float(image.norm.vmax)],
        }
        return self.add(record, {})

    def _patch(self, patch) -> int:
        # transform the path first: to_polygons(transform) drops the non-affine part (a log axis)
        polygons = patch.get_transform().transform_path(patch.get_path()).to_polygons(closed_only=False)
        record = {
            "t": "p",
            "clip": self._clip(patch),
            "ax": self._axis(patch),
            "f": _rgba(patch.get_facecolor()) if patch.get_fill() else None,
            "e": _rgba(patch.get_edgecolor()),
            "w": round(patch.get_linewidth() * self.px_per_point, 3),
        }
        return self.add(record, {"p": [self._canvas(p) for p in polygons]})

    def _scatter(self, collection) -> int:
        from matplotlib.transforms import Affine2D

        offsets = collection.get_offset_transform().transform(collection.get_offsets())
        count = len(offsets)
        paths, transforms = collection.get_paths(), collection.get_transforms()
        faces = collection.get_facecolors() if count else []
        edges = collection.get_edgecolors() if count else []
        widths = collection.get_linewidths()
        shapes, fills, strokes = [], [], []
        for k in range(count):
            matrix = transforms[k % len(transforms)] if len(transforms) else np.eye(3)
            shapes.append(self._shape(paths[k % len(paths)], Affine2D(matrix), True))
            fills.append(_rgba(faces[k % len(faces)]) if len(faces) else None)
            strokes.append(_rgba(edges[k % len(edges)]) if len(edges) else None)
        record = {
            "t": "s",
            "clip": self._clip(collection),
            "ax": self._axis(collection),
            "sh": shapes,
            "f": fills,
            "e": strokes,
            "w": round(float(widths[0] if len(widths) else 0) * self.px_per_point, 3),
        }
        return self.add(record, {"mp": [self._canvas(offsets)]})

    def axes_data(self) -> list:
        """Each panel's mapping from data to canvas pixels: [px at lim0, px at lim1, lim0, lim1, scale]."""
        described = []
        for ax in self.axes:
            x0, y0, x1, y1 = ax.bbox.extents
            xlim, ylim = ax.get_xlim(), ax.get_ylim()
            described.append(
                {
                    "x": [x0, x1, *map(float, xlim), ax.get_xscale()],
                    "y": [self.height - y0, self.height - y1, *map(float, ylim), ax.get_yscale()],
                }
            )
        return described


def alt_text(data: dict, index: int) -> str:
    """Alt text number ``index`` of :func:`figure_data`'s result (stored as sentence numbers)."""
    return " ".join(data["sentences"][k] for k in data["alts"][index])


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def figure_data(explorer, grids: dict[str, tuple] | None = None) -> dict:
    """Everything the browser needs to redraw ``explorer`` in any state of its grid (see above)."""

    names = list(explorer.controls)
    defaults = {name: control.value for name, control in explorer.controls.items()}
    if grids is None:
        grids = web_grids(explorer, explorer.website_states or MAX_STATES)
    explorer.values = dict(defaults)
    explorer._draw(defaults)  # lays the figure out once and learns which artists move
    moving = list(explorer._animated)
    figure = explorer.figure
    for artist in moving:
        artist.set_animated(True)
    figure.canvas.draw()
    background = explorer._png(compress_level=9, palette=True)

    recorder = _Recorder(figure)
    table, alts, alt_index, sentence_index = [], [], {}, {}  # alt texts as sentences, each stored once
    for combination in product(*(grids[n] for n in names)):
        values = dict(zip(names, combination, strict=True))
        changed = explorer._update(**values)
        extra = [a for a in (changed or []) if a not in moving]
        if changed is None or extra:
            raise NotImplementedError("the website needs update() to return the same artists in every state")
        table.append([recorder.record(artist) for artist in moving])
        alt = explorer.alt_text(values)
        if alt not in alt_index:
            alt_index[alt] = len(alts)
            alts.append([sentence_index.setdefault(part, len(sentence_index)) for part in _SENTENCE.split(alt)])
        table[-1].append(alt_index[alt])

    explorer.values = dict(defaults)
    explorer._draw(defaults)  # leave the figure in its default state
    still = explorer._png(compress_level=9, palette=True)
    still_alt = explorer.alt_text(defaults)
    smallest = smallest_text_px(figure)  # drawn in its default state just above
    controls = []
    for name in names:
        control, grid = explorer.controls[name], grids[name]
        start = min(range(len(grid)), key=lambda i: _distance(grid[i], defaults[name]))
        controls.append(
            {
                "name": name,
                "label": control.label or name,
                "kind": "select" if control.kind == "choice" else "range",
                "values": [v if isinstance(v, str) else float(v) for v in grid],
                "shown": [format_value(v) for v in grid],
                "start": start,
            }
        )
    return {
        "width": round(figure.bbox.width),
        "height": round(figure.bbox.height),
        "main": names.index(explorer.animate),
        "controls": controls,
        **_painter_data(recorder, len(moving), table, alts, list(sentence_index)),
        "background": _b64(background),
        "still": still,  # the default state as matplotlib draws it, for readers without JavaScript
        "still_alt": still_alt,
        "smallest_text_px": None if smallest is None else round(smallest, 3),  # font size x dpi / 72
    }


def _painter_data(recorder: _Recorder, artists: int, table: list, alts: list, sentences: list) -> dict:
    """What the browser's painter (``posencPainter`` in posenc-player.js) reads: the records, their
    shared tables and binary arrays, and ``table``: per state, each artist's record and the alt text."""
    states = np.asarray(table, dtype=np.int64).reshape(len(table), artists + 1)
    wide = states.max(initial=0) >= 2**16
    pixels = b"".join(recorder.pixels)
    xy = np.concatenate(recorder.xy) if recorder.xy else np.zeros((0, 2), "<i2")
    return {
        "artists": artists,
        "items": recorder.items,
        "styles": recorder.styles,
        "shapes": recorder.shapes,
        "luts": recorder.luts,
        "arrays": recorder.arrays,
        "axes": recorder.axes_data(),
        "alts": alts,
        "sentences": sentences,
        "table": _b64(states.astype("<u4" if wide else "<u2").tobytes()),
        "wide": bool(wide),
        "xy": _b64(xy.astype("<i2").tobytes()),
        "px": _b64(pixels),
    }


def live_frame(figure, moving: list, alt: str = "") -> dict:
    """The moving artists of ``figure`` in its current state, as the painter's data with one state.

    What a live explorer's kernel sends the browser on each move (``posenc.book.live``): the
    same records as one state of :func:`figure_data`, drawn by the same painter over the figure's
    background. The browser formulas are not checked against Python here: :func:`figure_data`
    checks them on every build of the website, over each explorer's grid.
    """
    recorder = _Recorder(figure, check_formulas=False)
    row = [recorder.record(artist) for artist in moving]
    return _painter_data(recorder, len(moving), [[*row, 0]], [[0]], [alt])


def _distance(a, b) -> float:
    try:
        return abs(float(a) - float(b))
    except (TypeError, ValueError):
        return 0.0 if a == b else 1.0
