"""Formulas the website's browser computes itself: a Python twin and a JavaScript port of each.

Most of an explorer's figure is shipped as data recorded at build time
(:mod:`posenc.book.webfigure`). Where that data would be too large (a 128 x 64 heat map in each
of two thousand states, a 2,049-point oscillating curve that does not simplify), a chapter
marks the artist with :func:`computed_in_browser`; the page ships the formula's arguments and
the browser computes the values with the formula's JavaScript port, kept under the same name in
``posencFormulas`` in the book's static folder (``_book_static/posenc-formulas.js``, loaded by
:mod:`posenc.book.player`). Each formula is checked four ways: its Python twin against the
artist's data at build time (to 1e-6), the twin against posenc in ``tests/test_widgets.py``, the
port against the twin in node (``tests/test_player_files.py``), and the browser's values against
posenc in ``tests/test_site_explorers.py`` (to 1e-6).
"""

from __future__ import annotations

import numpy as np

__all__ = ["computed_in_browser"]


def _sinusoidal_padded(n_positions, d_model, base, rows, cols):
    from .. import sinusoidal

    table = np.full((rows, cols), np.nan)
    table[:n_positions, :d_model] = sinusoidal(n_positions, d_model, base)
    return table


def _sinusoidal_similarity(n_positions, d_model, base):
    from .. import similarity, sinusoidal

    return similarity(sinusoidal(n_positions, d_model, base), normalize=True)


def _pairs(vector, layout: str):
    half = vector.size // 2
    if layout == "interleaved":
        return vector[0::2], vector[1::2]
    return vector[:half], vector[half:]


def _rope_scores(q, k, base, max_offset, layout="half", rotate_k_by=0, normalize=False):
    """``<R(m) q, k>`` for m = 0..max_offset (``posenc.rope_scores``), ``k`` first turned by ``rotate_k_by``
    positions; divided by ``|q| |k|`` if ``normalize``. Per pair: ``(q0 k0 + q1 k1) cos(m theta) +
    (q0 k1 - q1 k0) sin(m theta)``, ``theta_i = base**(-2i/d)``."""
    q, k = np.asarray(q, float), np.asarray(k, float)
    theta = base ** (-np.arange(0, q.size, 2) / q.size)
    k0, k1 = _pairs(k, layout)
    if rotate_k_by:
        turn = rotate_k_by * theta
        k0, k1 = k0 * np.cos(turn) - k1 * np.sin(turn), k0 * np.sin(turn) + k1 * np.cos(turn)
    q0, q1 = _pairs(q, layout)
    m = np.arange(max_offset + 1, dtype=float)
    y = np.cos(np.outer(m, theta)) @ (q0 * k0 + q1 * k1) + np.sin(np.outer(m, theta)) @ (q0 * k1 - q1 * k0)
    if normalize:
        y = y / (np.linalg.norm(q) * np.sqrt(np.sum(k0**2 + k1**2)))
    return m, y


def _rope_decay_bound(base, head_dim, max_offset, normalize=False):
    from .. import rope_decay_bound, rope_inv_freq

    m = np.arange(max_offset + 1, dtype=float)
    y = rope_decay_bound(m, rope_inv_freq(head_dim, base))
    return m, (y / y[0] if normalize else y)


# Records too many to ship for every state: the browser computes them with a few lines of
# JavaScript (posencFormulas[name] in _book_static/posenc-formulas.js), tested against posenc to
# 1e-6 in the browser test. Each is its Python twin: images return the array, lines (x, y).
BROWSER_FORMULAS = {
    "sinusoidal": _sinusoidal_padded,  # posenc.sinusoidal(n, d, base) in a NaN-padded rows x cols table
    "sinusoidal_similarity": _sinusoidal_similarity,  # posenc.similarity(posenc.sinusoidal(...), normalize=True)
    "rope_scores": _rope_scores,  # posenc.rope_scores(q, k, 0..max_offset, rope_inv_freq(d, base), layout)
    "rope_decay_bound": _rope_decay_bound,  # posenc.rope_decay_bound(0..max_offset, rope_inv_freq(d, base))
}
_ARRAY_DIGITS = 9  # arrays in a formula's arguments are shipped to 9 significant digits


def computed_in_browser(artist, formula: str, **arguments) -> None:
    """Mark ``artist`` (an image or a line) as computed on the website by the browser's port of ``formula``.

    Call it in ``update`` after setting the artist's data; the build checks that the formula with
    ``arguments`` gives that data (to 1e-6), and the page ships the arguments instead of the
    pixels or points. ``formula`` is a name in ``posenc.book.browser_formulas.BROWSER_FORMULAS``.
    """
    from .._validation import check_choice

    check_choice("formula", formula, BROWSER_FORMULAS)
    artist._posenc_formula = (formula, dict(arguments))
