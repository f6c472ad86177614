"""The same module as :mod:`posenc.book.plotting` (what only the book needs lives in ``posenc.book``)."""

import sys

from .book import plotting as _module

sys.modules[__name__] = _module
