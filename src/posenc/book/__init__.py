"""What only the book needs, apart from the kernels: explorers (live widgets and the website's
player), plot styles and helpers, numbers for the prose, the Sphinx extension and its assets.

A chapter imports what it uses from here, in one line::

    from posenc.book import Explorer, choice, glue, glued, plotting, slider

Each name has one home: :mod:`posenc.book.widgets` (``Explorer``), :mod:`posenc.book.controls`
(``slider``, ``choice``, and ``format_value``, which writes a number as the controls' readouts
do, for titles that quote a control's value), :mod:`posenc.book.browser_formulas` (``computed_in_browser``),
:mod:`posenc.book.glue` (``glue``, and ``glued``, which the prose's ``{eval}``
roles call), :mod:`posenc.book.data_files` (``require_data_files``, for the
chapters that read files from ``chapters/data/``) and :mod:`posenc.book.plotting`.
"""

from . import plotting
from .browser_formulas import computed_in_browser
from .controls import choice, format_value, slider
from .data_files import require_data_files
from .glue import glue, glued
from .widgets import Explorer

__all__ = [
    "Explorer",
    "choice",
    "computed_in_browser",
    "format_value",
    "glue",
    "glued",
    "plotting",
    "require_data_files",
    "slider",
]
