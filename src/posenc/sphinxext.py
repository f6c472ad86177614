"""The same module as :mod:`posenc.book.sphinxext` (what only the book needs lives in ``posenc.book``)."""

import sys

from .book import sphinxext as _module

sys.modules[__name__] = _module
