"""The API page's table of scaling methods, written from what each method declares (``scaling-methods`` directive).

Each row comes from a registered method's :class:`posenc.scaling.MethodSpec`: the names a config
may use, the function, which config length is ``L``, how the factor is found, the config fields it
reads and whether its speeds follow the current length. A new method appears here by itself.
"""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import Directive

from ..scaling import SCALING_METHODS

__all__ = ["ScalingMethodsTable", "scaling_method_rows"]

HEADER = ("rope_type", "function", "L read from", "factor", "config parameters", "current length")

_LENGTH = {
    "original": "original_max_position_embeddings (else max_position_embeddings)",
    "max": "max_position_embeddings",
    None: "not used",
}
_FACTOR = {
    "required": "required",
    "optional": "optional (1)",
    "derived": "factor, else max_position_embeddings / L",
    None: "not used",
}


def scaling_method_rows() -> list[tuple[str, ...]]:
    """One row of text per registered method, in registration order (the columns of ``HEADER``)."""
    rows = []
    for function in SCALING_METHODS.values():
        spec = function.spec
        parameters = [p.name + (" (required)" if p.required else "") for p in spec.parameters]
        if spec.partial_rotary:
            parameters.append("partial_rotary_factor (the config's)")
        current = "seq_len (required)" if spec.seq_len_required else ("seq_len" if spec.reads_seq_len else "no")
        rows.append(
            (
                " or ".join(spec.config_names),
                f"posenc.scaling.{function.__name__}",
                _LENGTH[spec.length],
                _FACTOR[spec.factor],
                ", ".join(parameters) or "none",
                current,
            )
        )
    return rows


def _row(cells: tuple[str, ...], header: bool = False) -> nodes.row:
    row = nodes.row()
    for i, text in enumerate(cells):
        paragraph = nodes.paragraph()
        paragraph += nodes.literal(text=text) if (i < 2 and not header) else nodes.Text(text)
        row += nodes.entry("", paragraph)
    return row


class ScalingMethodsTable(Directive):
    """``.. scaling-methods::``: the table of registered scaling methods."""

    has_content = False

    def run(self):
        group = nodes.tgroup(cols=len(HEADER))
        group += [nodes.colspec(colwidth=1) for _ in HEADER]
        head = nodes.thead()
        head += _row(HEADER, header=True)
        body = nodes.tbody()
        body += [_row(cells) for cells in scaling_method_rows()]
        group += [head, body]
        table = nodes.table(classes=["posenc-scaling-methods"])
        table += group
        return [table]
