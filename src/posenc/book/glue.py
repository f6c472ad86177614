"""Numbers for the prose: ``glue(name, value)`` hands a computed value to the page.

In the book build (myst-nb) the value is stored in the notebook's outputs and the
prose quotes it with ``{glue:text}`name:.3f```; so no number the text quotes is ever
typed by hand. Outside the build (a plain Jupyter kernel, Colab, a script) myst-nb may
be missing: the value is then printed when ``display`` is true and otherwise ignored.
Either way the value is returned, so a cell can assert on it beside the glue call.
"""

from __future__ import annotations

__all__ = ["glue"]


def glue(name: str, value, display: bool = False):
    """Store ``value`` under ``name`` for the page's ``{glue:text}`` roles and return it."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a string such as 'ch04-max-error', got {name!r} of type {type(name).__name__}")
    if not name.strip():
        raise ValueError(f"name must be a non-empty string such as 'ch04-max-error', got {name!r}")
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        # a NumPy scalar: its text form "np.float64(0.5)" cannot take a format spec such as :.3f
        value = value.item()
    try:
        from myst_nb import glue as myst_glue
    except ImportError:  # no myst-nb: nothing can quote the value, so only show it if asked
        if display:
            print(f"{name} = {value!r}")
        return value
    myst_glue(name, value, display=display)
    return value
