"""The ``{eval}`` role on the website: ``{eval}`glued("name:.3f")``` shows the glued value.

The chapters quote computed numbers with MyST inline expressions so that JupyterLab (with
jupyterlab-myst) evaluates them in the reader's kernel (:func:`posenc.book.glue.glued`). myst-nb
evaluates ``{eval}`` only when it executes notebooks inline, which gives up the execution cache;
the book keeps the cache and renders the one expression the chapters use, ``glued("spec")``, from
the notebook's glued outputs with myst-nb's own ``{glue:text}`` role (same retrieval, same
formatting, same warning for a missing name). Any other expression is a build warning (an error
under ``-W``), so the website never shows an expression it did not evaluate.
"""

from __future__ import annotations

import re

from myst_nb.core.variables import create_warning
from myst_nb.ext.glue.roles import PasteTextRole

# glued("name") or glued("name:format"), quoted with " or ', nothing else: no "doc::name" (myst-nb's
# reference to another page's glue, which glued() in the reader's kernel cannot follow)
GLUED_CALL = re.compile(r"""^\s*glued\((?P<q>["'])(?P<spec>(?:(?!::)[^"'\\])+)(?P=q)\)\s*$""")


class GluedEvalRole(PasteTextRole):
    """``{eval}`glued("spec")``` rendered as ``{glue:text}`spec```."""

    def run(self):
        match = GLUED_CALL.match(self.text)
        if match is None:
            message = (
                f'{{eval}} expression {self.text!r}: the book renders only glued("name") or '
                f'glued("name:format") on the website (see posenc.book.eval_role)'
            )
            return [], [create_warning(message, self.document, self.line, subtype="eval")]
        self.text = match["spec"]
        return super().run()


def setup(app):
    app.setup_extension("myst_nb")  # registers its own eval role first; ours replaces it
    app.add_role("eval", GluedEvalRole(), override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
