"""Numbers for the prose: ``glue(name, value)`` hands a computed value to the page, and
``glued("name:.3f")`` writes it as the page shows it.

The prose quotes a value with MyST's inline expression ``{eval}`glued("name:.3f")```, so no
number the text quotes is ever typed by hand, and the same markdown shows the number in both
places a reader meets it:

- on the website, the book's Sphinx extension (:mod:`posenc.book.eval_role`) renders the role
  from the value the executed notebook glued, exactly as myst-nb's ``{glue:text}`name:.3f```
  would (a name that was not glued is a build warning, an error under ``-W``);
- in JupyterLab with jupyterlab-myst, the kernel evaluates ``glued("name:.3f")`` when the
  markdown cell runs, and the reader sees the string it returns, one pair of outer quotes
  stripped. With Run All, JupyterLab sends the markdown cells' expressions after every code cell,
  so each number shows; cell by cell, a number the prose quotes before the cell that computes it
  shows an error box that says so, until the cell is run again.

``glued`` formats as myst-nb's ``format_plain_text`` does (the value's ``text/plain`` form read
back with ``ast.literal_eval``, converted by the format's type character, then ``format``),
so both show the same characters (tests/test_glue.py compares them over the book's formats).
A glued string is refused if its ``repr`` would differ from its text once the quotes are
stripped (a backslash, a character Python escapes, both kinds of quote): JupyterLab shows that
``repr``, the website the text.
Outside the build myst-nb may be missing: ``glue`` then only keeps the value for ``glued``, and
prints it when ``display`` is true. Either way the value is returned, so a cell can assert on it
beside the glue call.
"""

from __future__ import annotations

import ast

__all__ = ["glue", "glued", "glued_text"]

# name -> value, for glued() in this kernel (myst-nb keeps its own copy in the cell's outputs)
_GLUED: dict[str, object] = {}


def glue(name: str, value, display: bool = False):
    """Store ``value`` under ``name`` for the page's ``{eval}`glued("name")``` roles and return it."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a string such as 'ch04-max-error', got {name!r} of type {type(name).__name__}")
    if not name.strip() or ":" in name:
        raise ValueError(f"name must be a non-empty string without ':' such as 'ch04-max-error', got {name!r}")
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        # a NumPy scalar: its text form "np.float64(0.5)" cannot take a format spec such as :.3f
        value = value.item()
    if isinstance(value, str) and ("\\" in value or not value.isprintable() or ("'" in value and '"' in value)):
        raise ValueError(
            f"value {value!r} for {name!r}: a glued string may not hold a backslash, a character Python "
            "escapes, or both kinds of quote (JupyterLab would show its escaped form)"
        )
    _GLUED[name] = value
    try:
        from myst_nb import glue as myst_glue
    except ImportError:  # no myst-nb: nothing but glued() can quote the value, so only show it if asked
        if display:
            print(f"{name} = {value!r}")
        return value
    myst_glue(name, value, display=display)
    return value


def glued(spec: str) -> str:
    """The text of a glued value as the page shows it: ``spec`` is ``"name"`` or ``"name:format"``
    (a format specification ending in its type character, e.g. ``".3f"``, ``",d"``, ``".1%"``)."""
    if not isinstance(spec, str) or not spec.strip():
        raise TypeError(f"spec must be a non-empty string such as 'ch04-max-error:.3f', got {spec!r}")
    name, colon, fmt = spec.rpartition(":")  # as myst-nb reads "name:format": the last colon
    if not colon:
        name, fmt = spec, "s"
    if name not in _GLUED:
        raise KeyError(
            f"{name!r} is not computed yet in this kernel: the cell that glues it is further down or has "
            "not run. Run > Run All Cells shows every number"
        )
    return glued_text(_GLUED[name], fmt)


def _plain_text(value) -> str:
    """The value's ``text/plain`` form as IPython's display formatter writes it (what myst-nb stores)."""
    try:
        from IPython.lib.pretty import pretty
    except ImportError:
        return repr(value)
    return pretty(value, max_width=79)


def glued_text(value, fmt: str = "s") -> str:
    """``value`` written as myst-nb's ``{glue:text}`name:fmt``` writes a glued value.

    The ``text/plain`` form is read back with ``ast.literal_eval`` (a string loses its quotes);
    then the format's last character picks the type: ``s`` str, ``bcdoxX`` int, ``eEfFgGn%``
    float; an empty format gives ``str``. Source: myst-nb 1.4, ``myst_nb.core.variables.format_plain_text``.
    """
    if not isinstance(fmt, str):
        raise TypeError(f"fmt must be a format specification string such as '.3f', got {fmt!r}")
    text = _plain_text(value)
    try:
        value = ast.literal_eval(text)
    except (SyntaxError, ValueError):
        value = text
    if fmt == "":
        return str(value)
    kind = fmt[-1]
    if kind == "s":
        value = str(value)
    elif kind in "bcdoxX":
        value = int(value)
    elif kind in "eEfFgGn%":
        value = float(value)
    return format(value, fmt)
