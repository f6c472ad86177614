"""BibTeX for the landing page, generated from the book's ``CITATION.cff`` (``citation-bibtex`` directive).

``CITATION.cff`` (Citation File Format 1.2.0) is the one place that says how to cite the book;
this module turns it into a BibTeX entry when the book is built, so the two cannot drift apart.
The entry describes the file's ``preferred-citation`` when it has one (as GitHub's "Cite this
repository" does), else its top level:

* entry type: CFF ``book`` is ``@book``, ``report`` ``@techreport``, ``thesis`` ``@phdthesis``,
  ``article`` ``@article``; any other type ``@misc``;
* ``author``: the authors joined by ``and``; a person as ``family-names, given-names``, an
  entity (``name``) in braces, so that BibTeX does not split it into first and last names;
* ``title`` in braces (BibTeX styles keep its capitals);
* ``year`` and ``month``: CFF's ``year`` and ``month``, else those of ``date-released``;
* ``note``: ``Version <version>`` (plain BibTeX styles print ``note``; they ignore ``version``);
* the key: the first word of the first author's name (or family name) that is not an article,
  lowercased, then the year: ``posenc2026`` for "The posenc authors", 2026.
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path
from typing import ClassVar

import yaml
from docutils import nodes
from docutils.parsers.rst import Directive, directives

__all__ = ["BibtexFromCff", "bibtex_entry", "load_cff"]

ENTRY_TYPES = {"book": "book", "report": "techreport", "thesis": "phdthesis", "article": "article"}
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_ARTICLES = {"the", "a", "an"}
_LATEX_SPECIAL = re.compile(r"([&%$#_{}])")


def load_cff(path: str | Path) -> dict:
    """The citation metadata in ``path`` (a ``CITATION.cff``), with YAML dates cast to ``YYYY-MM-DD`` strings.

    The CFF 1.2.0 schema asks tools to cast YAML date objects to strings before validating.
    """
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"path: {path} does not hold a YAML mapping of citation metadata")
    return _dates_to_strings(data)


def _dates_to_strings(value):
    if isinstance(value, dict):
        return {key: _dates_to_strings(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_dates_to_strings(item) for item in value]
    if isinstance(value, datetime.date):
        return value.isoformat()
    return value


def _escape(text: str) -> str:
    return _LATEX_SPECIAL.sub(r"\\\1", str(text))


def _author(person: dict) -> str:
    if "name" in person:
        return "{" + _escape(person["name"]) + "}"
    family = " ".join(str(person[key]) for key in ("name-particle", "family-names") if person.get(key))
    if not family:
        raise ValueError(f"authors: {person!r} has neither 'name' nor 'family-names'")
    given = person.get("given-names")
    return _escape(f"{family}, {given}" if given else family)


def _key(first_author: dict, year: int | str) -> str:
    words = str(first_author.get("name") or first_author.get("family-names") or "").split()
    words = [w for w in words if w.lower() not in _ARTICLES] or ["ref"]
    return re.sub(r"[^a-z0-9]", "", words[0].lower()) + str(year)


def bibtex_entry(cff: dict) -> str:
    """The BibTeX entry for citation metadata ``cff`` (as returned by :func:`load_cff`); rules above."""
    work = cff.get("preferred-citation") or cff
    authors = work.get("authors")
    if not authors:
        raise ValueError("authors: the citation metadata names no authors")
    date = str(work.get("date-released") or "")
    year = work.get("year") or (date[:4] if date else None)
    month = work.get("month") or (date[5:7] if len(date) >= 7 else None)
    fields = [
        ("title", "{" + _escape(work["title"]) + "}"),
        ("author", " and ".join(_author(a) for a in authors)),
    ]
    if year:
        fields.append(("year", str(int(year))))
    if month:
        fields.append(("month", MONTHS[int(month) - 1]))
    if work.get("version"):
        fields.append(("note", f"Version {_escape(work['version'])}"))
    entry_type = ENTRY_TYPES.get(work.get("type", "software"), "misc")
    width = max(len(name) for name, _ in fields)
    lines = [f"@{entry_type}{{{_key(authors[0], year or '')},"]
    for name, value in fields:
        # month is a BibTeX macro (jan, ..., dec) and goes unbraced
        shown = value if name == "month" else "{" + value + "}"
        lines.append(f"  {name.ljust(width)} = {shown},")
    lines.append("}")
    return "\n".join(lines)


class BibtexFromCff(Directive):
    """``.. citation-bibtex:: [path]``: the BibTeX entry of a ``CITATION.cff`` as a literal block.

    ``path`` is relative to the book's root and defaults to ``CITATION.cff``; the page is rebuilt
    when the file changes.
    """

    optional_arguments = 1
    has_content = False
    option_spec: ClassVar[dict] = {"class": directives.class_option}

    def run(self):
        env = self.state.document.settings.env
        relative = self.arguments[0] if self.arguments else "CITATION.cff"
        path = Path(env.srcdir) / relative
        if not path.is_file():
            raise self.error(f"citation-bibtex: no file {relative} at the book's root ({env.srcdir})")
        env.note_dependency(str(path))
        text = bibtex_entry(load_cff(path))
        block = nodes.literal_block(text, text, language="bibtex", classes=self.options.get("class", []))
        return [block]


def setup(app):
    app.add_directive("citation-bibtex", BibtexFromCff)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
