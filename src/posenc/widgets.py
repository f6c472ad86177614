"""The same module as :mod:`posenc.book.widgets` (what only the book needs lives in ``posenc.book``)."""

import sys

from .book import widgets as _module

sys.modules[__name__] = _module
