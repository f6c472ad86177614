"""The prose keeps its promises: one notation page that every chapter links from its
opening, each cited work with the same authors, year and title everywhere, and every
work a chapter cites listed in the bibliography; every chapter's first code cell says how to
install posenc when it is missing."""

import ast
import re
from collections import defaultdict

import nbformat
import pytest

from conftest import ROOT, chapter_notebooks, toc_files

NOTEBOOKS = chapter_notebooks()
BIBLIOGRAPHY = ROOT / "chapters" / "bibliography.md"

# "- Surname, Surname, ... (2021). *Title*. ..." : one entry of a Sources list or the bibliography
ENTRY = re.compile(r"^- (?P<authors>[^\n]+?) \((?P<year>\d{4})\)\. \*(?P<title>[^*]+)\*", re.M)
# "Surname et al. (2021" or "Surname et al. 2021" in running text
INLINE = re.compile(r"\b([A-Z][\w\-]+) et al\.,? \(?(\d{4})\b")


def markdown_of(path):
    cells = nbformat.read(path, as_version=4).cells
    return "\n".join(cell.source for cell in cells if cell.cell_type == "markdown")


def entries(text):
    """(authors, year, title) of every list entry in ``text``, continuation lines joined."""
    text = re.sub(r"\n +", " ", text)
    return [
        (match["authors"].strip(), match["year"], re.sub(r"\s+", " ", match["title"]).strip())
        for match in ENTRY.finditer(text)
    ]


def sources_section(path):
    text = markdown_of(path)
    start = text.find("## Sources")
    assert start >= 0, f"{path.name} has no '## Sources' section"
    return text[start:]


def test_the_parser_reads_an_entry_over_several_lines():
    text = "## Sources\n\n- Su, Lu, Pan (2021). *RoFormer: Enhanced\n  Transformer*. arXiv.\n- Not an entry\n"
    assert entries(text) == [("Su, Lu, Pan", "2021", "RoFormer: Enhanced Transformer")]


def test_the_notation_page_is_in_the_table_of_contents():
    assert "chapters/notation" in toc_files()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_chapter_links_the_notation_page_from_its_opening(path):
    opening = nbformat.read(path, as_version=4).cells[0].source
    assert "{doc}`notation`" in opening, f"{path.name}: the first cell does not link {{doc}}`notation`"


# The first code cell of every chapter starts with this: a reader without posenc learns how to
# install it, with ipywidgets, a CPU torch and JupyterLab as `make lab` sets it up, in one command
# (the README's). No address of the
# book's repository: it names none until it is published (_config.yml), so REPOSITORY stands there.
INSTALL_COMMAND = (
    'pip install "posenc[lab] @ git+REPOSITORY" torch==2.13.0 --extra-index-url https://download.pytorch.org/whl/cpu'
)
INSTALL_CHECK = """try:
    import posenc
except ImportError:
    raise ModuleNotFoundError(
        "This notebook needs the book's library posenc, with ipywidgets and a CPU "
        "build of torch. In a clone of the book's repository, run `make lab` at its "
        "root. With this notebook alone, one command installs them all, with "
        "JupyterLab as the book sets it up (torch from PyTorch's CPU wheel index, "
        "the rest from PyPI; REPOSITORY: the address of the book's git repository); "
        "then run `jupyter lab` in the notebook's folder:\\n"
        '  pip install "posenc[lab] @ git+REPOSITORY" torch==2.13.0 '
        "--extra-index-url https://download.pytorch.org/whl/cpu"
    ) from None
"""


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_chapter_says_how_to_install_posenc_when_it_is_missing(path):
    first = next(c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code").source
    assert first.startswith(INSTALL_CHECK), (
        f"{path.name}: the first code cell must start with the install check every chapter shares:\n{INSTALL_CHECK}"
    )


def test_the_readme_gives_the_same_install_command_as_the_chapters():
    assert INSTALL_COMMAND in (ROOT / "README.md").read_text()
    raised = next(node for node in ast.walk(ast.parse(INSTALL_CHECK)) if isinstance(node, ast.Call))
    assert INSTALL_COMMAND in raised.args[0].value  # the message, its literals joined


def test_each_work_is_cited_with_the_same_authors_year_and_title_everywhere():
    bibliography = {title: (authors, year) for authors, year, title in entries(BIBLIOGRAPHY.read_text())}
    assert len(bibliography) >= 20
    mismatches, missing = [], []
    for path in NOTEBOOKS:
        for authors, year, title in entries(sources_section(path)):
            if title not in bibliography:
                missing.append(f"{path.name}: *{title}*")
            elif bibliography[title] != (authors, year):
                mismatches.append(f"{path.name}: {authors} ({year}) for *{title}*; bibliography: {bibliography[title]}")
    assert missing == [], f"cited in a chapter but not in the bibliography: {missing}"
    assert mismatches == [], f"authors or year differ from the bibliography: {mismatches}"


def test_every_chapter_cites_at_least_one_listed_work():
    for path in NOTEBOOKS:
        assert entries(sources_section(path)), f"{path.name}: its Sources section lists no work"


def test_et_al_citations_in_the_text_name_a_first_author_of_the_bibliography():
    first_authors = defaultdict(set)
    for authors, year, _ in entries(BIBLIOGRAPHY.read_text()):
        first_authors[authors.split(",")[0].strip()].add(year)
    wrong = []
    pages = [(path.name, "\n".join(c.source for c in nbformat.read(path, as_version=4).cells)) for path in NOTEBOOKS]
    pages += [(path.name, path.read_text()) for path in sorted((ROOT / "chapters").glob("*.md"))]
    for name, text in pages:
        for surname, year in INLINE.findall(re.sub(r"\s+", " ", text)):
            if year not in first_authors.get(surname, ()):
                wrong.append(f"{name}: {surname} et al. {year}")
    assert wrong == [], f"'et al.' citations whose first author and year are not in the bibliography: {wrong}"


def test_the_bibliography_names_every_chapter_that_cites_a_work():
    """Each paper's entry lists, with {doc}, exactly the chapters whose Sources cite it."""
    text = re.sub(r"\n +", " ", BIBLIOGRAPHY.read_text())
    listed = {}
    for line in text.splitlines():
        found = entries(line)
        if found:
            listed[found[0][2]] = set(re.findall(r"\{doc\}`(\d\d_\w+)`", line))
    citing = defaultdict(set)
    for path in NOTEBOOKS:
        for _, _, title in entries(sources_section(path)):
            citing[title].add(path.stem)
    wrong = {
        title: {"bibliography": sorted(listed[title]), "cited in": sorted(citing[title])}
        for title in listed
        if listed[title] != citing[title]
    }
    assert wrong == {}, f"bibliography entries whose chapter list differs from the chapters citing them: {wrong}"


def test_yarns_temperature_t_is_used_only_where_the_notation_page_says():
    """The notation page: YaRN's temperature $t$ is "used only in {doc}`11_yarn` and
    {doc}`16_positions_in_practice`; in {doc}`14_reading_a_config` $t$ is M-RoPE's time id"."""
    notation = (ROOT / "chapters" / "notation.md").read_text()
    assert (
        "used only in {doc}`11_yarn` and {doc}`16_positions_in_practice`; in "
        "{doc}`14_reading_a_config` $t$ is M-RoPE's time id" in notation
    )
    yarn_t = re.compile(r"sqrt\{1/t\}|sqrt\(1/t\)|\b1/t\b|temperature \$t\$")
    mrope_t = re.compile(r"\(t, h, w\)|t = h = w")
    found = {"yarn": set(), "mrope": set()}
    for path in NOTEBOOKS:
        text = "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells)
        for name, pattern in (("yarn", yarn_t), ("mrope", mrope_t)):
            if pattern.search(text):
                found[name].add(path.stem)
    assert found == {
        "yarn": {"11_yarn", "16_positions_in_practice"},
        "mrope": {"14_reading_a_config"},
    }
