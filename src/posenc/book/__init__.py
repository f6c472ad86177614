"""What only the book needs, apart from the kernels: explorers (live widgets and the website's
player), plot styles and helpers, the Sphinx extension and its static assets.

``posenc.widgets``, ``posenc.plotting`` and ``posenc.sphinxext`` remain as names for these
modules (the chapters import them so).
"""
