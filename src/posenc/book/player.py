"""The website's form of an :class:`~posenc.book.widgets.Explorer`: every control, redrawn in the browser.

Where no kernel runs, an explorer becomes a figure that a script redraws on a canvas: the
figure's background as one PNG, and its moving parts recorded by posenc at build time over a
grid of every control's values (:mod:`posenc.book.webfigure`). Each control is a labelled range
slider (or a menu) with its value shown beside it; a play button steps the main control; the
canvas's text alternative follows the state. Before the script runs (or without it) the figure in
its default state is an ordinary image. Nothing is loaded from other hosts.

The player's code is in the files :data:`PLAYER_FILES` of the book's static folder
(``posenc/book/_book_static``): its styles, the browser formulas' ports and the player. An
explorer's HTML carries them inline (:func:`player_code`), so that it works on its own in a
notebook's output, followed by its figure and one line of script that hands its data to the
player. On the website the book's Sphinx extension (:mod:`posenc.book.sphinxext`) takes the
inline copies out of each page and links the files instead, which the browser loads once for the
whole site.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
from pathlib import Path

from .._validation import check_int
from .webfigure import figure_data

__all__ = ["static_player", "explorer_html", "player_code", "min_width_css", "PLAYER_FILES", "READABLE_PX", "STATIC"]

#: The book's static folder, shipped with the package and copied into the website's ``_static``.
STATIC = Path(__file__).with_name("_book_static")
#: The player's files in :data:`~posenc.book.player.STATIC`, in the order a page loads them: the styles
#: (``.posenc-explorer``), the ports of the browser formulas (``posencFormulas``, keyed by the
#: names of ``posenc.book.browser_formulas.BROWSER_FORMULAS``) and the player
#: (``posencPlayer(id, data, interval_ms)``).
PLAYER_FILES = ("posenc-player.css", "posenc-formulas.js", "posenc-player.js")


#: The smallest text a figure may show, in CSS pixels. On a narrow screen a figure is shown no
#: narrower than the width at which its smallest text is this tall (:func:`min_width_css`).
READABLE_PX = 9


def min_width_css(width_px: int, smallest_text_px: float) -> str:
    """``--posenc-min-width``: the width at which a ``width_px`` image's smallest text is :data:`READABLE_PX`.

    An image of ``width_px`` pixels shown ``w`` CSS pixels wide scales its text by ``w / width_px``;
    text of ``smallest_text_px`` image pixels is ``READABLE_PX`` CSS pixels tall at
    ``w = width_px * READABLE_PX / smallest_text_px`` (rounded up).
    """
    if not smallest_text_px > 0:
        raise ValueError(f"smallest_text_px must be positive, got {smallest_text_px!r}")
    return f"--posenc-min-width:{math.ceil(width_px * READABLE_PX / smallest_text_px)}px"


def player_code() -> str:
    """The player's files inline: ``<style>`` with the styles, ``<script>`` with the scripts.

    The files are :data:`~posenc.book.player.PLAYER_FILES`, read from the package. Every explorer's
    HTML starts with this block; the website replaces it by links to the files.
    """
    css, *scripts = ((STATIC / name).read_text(encoding="utf-8") for name in PLAYER_FILES)
    return f"<style>{css}</style><script>{''.join(scripts)}</script>"


def static_player(explorer) -> str:
    """The website's form of ``explorer``: its figure over a grid of every control's values."""
    return explorer_html(figure_data(explorer), explorer.caption)


def _control_html(element_id: str, k: int, control: dict) -> str:
    ident = f"{element_id}-{k}"
    label = f'<label for="{ident}">{html.escape(control["label"])}</label>'
    shown = html.escape(control["shown"][control["start"]])
    if control["kind"] == "select":
        options = "".join(
            f'<option value="{i}"{" selected" if i == control["start"] else ""}>{html.escape(text)}</option>'
            for i, text in enumerate(control["shown"])
        )
        return f'{label}<select id="{ident}">{options}</select><output for="{ident}" hidden>{shown}</output>'
    last = len(control["values"]) - 1
    return (
        f'{label}<input type="range" id="{ident}" min="0" max="{last}" step="1" value="{control["start"]}" '
        f'aria-valuetext="{shown}"><output for="{ident}" aria-live="polite">{shown}</output>'
    )


def explorer_html(data: dict, caption: str | None = None, interval_ms: int = 600) -> str:
    """The self-contained HTML of one explorer from :func:`~posenc.book.webfigure.figure_data`.

    The player's code (:func:`player_code`), the figure (its still image, the canvas and the
    controls) and ``<script>posencPlayer(id, data, interval_ms)</script>``; the play button steps
    the main control every ``interval_ms``.
    """
    interval_ms = check_int("interval_ms", interval_ms, minimum=1)
    data = dict(data)
    still, alt = data.pop("still"), data.pop("still_alt")
    smallest = data.pop("smallest_text_px", None)
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=True).replace("</", "<\\/")
    element_id = "posenc-explorer-" + hashlib.sha1(payload.encode()).hexdigest()[:10]  # deterministic
    main = data["controls"][data["main"]]["label"]
    controls = "".join(_control_html(element_id, k, c) for k, c in enumerate(data["controls"]))
    caption_html = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return (
        f"{player_code()}"
        f'<figure class="posenc-explorer" id="{element_id}">'
        + (
            f'<div class="posenc-figure-box" style="{min_width_css(data["width"], smallest)}" '
            f'data-smallest-text-px="{smallest:g}">'
            if smallest
            else '<div class="posenc-figure-box">'
        )
        + f'<img src="data:image/png;base64,{base64.b64encode(still).decode("ascii")}" alt="{html.escape(alt)}" '
        f'width="{data["width"]}">'
        f'<canvas width="{data["width"]}" height="{data["height"]}" role="img" aria-label="{html.escape(alt)}" '
        f"hidden></canvas></div>"
        f'<div class="pe-controls" hidden><button type="button" aria-pressed="false" '
        f'title="Step through {html.escape(main)}">Play</button>{controls}</div>'
        f"{caption_html}</figure><script>posencPlayer({json.dumps(element_id)},{payload},{interval_ms});</script>"
    )
