"""What a course or another author needs to adopt the book: licences, a citation, one version,
a changelog and a corrections page that can be checked against the history.

- ``LICENSE`` is the standard MIT text and ``LICENSE-CC-BY-4.0.txt`` the canonical CC BY 4.0
  legal code; the landing page and every page's footer state both.
- ``CITATION.cff`` validates against the CFF 1.2.0 schema (vendored in ``tests/data``, source in
  its README), names the book as ``_config.yml`` does, and the landing page's BibTeX, generated
  from it by ``posenc.book.citation``, carries the same fields.
- ``posenc.__version__`` is the version of ``pyproject.toml`` (read from it), of ``CITATION.cff``
  and of the newest entry in ``CHANGELOG.md``; ``CITATION.cff`` gives that entry's release date,
  or none while the entry is "Unreleased".
- The corrections page is in the table of contents, every commit it names is in the history, the
  text it says was replaced is in the version before that commit, and its numbers are recomputed
  here: from NumPy's float16, from posenc, and from the lab's results files (the 3-seed file read
  from the history). The tests that need git skip outside a git checkout.
"""

import calendar
import copy
import dataclasses
import hashlib
import html as html_module
import json
import re
import shutil
import subprocess
import tomllib

import jsonschema
import nbformat
import numpy as np
import pytest
import yaml

import posenc
from posenc.book.citation import bibtex_entry, load_cff

from conftest import ROOT, toc_files

CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
CFF_PATH = ROOT / "CITATION.cff"
SCHEMA_PATH = ROOT / "tests" / "data" / "cff-1.2.0-schema.json"
CORRECTIONS = ROOT / "chapters" / "corrections.md"
CHANGELOG = ROOT / "CHANGELOG.md"
INDEX = ROOT / "index.md"

# The MIT licence's text after its copyright line (opensource.org / SPDX "MIT"); compared with
# whitespace normalised, since the line breaks of copies differ.
MIT_BODY = """Permission is hereby granted, free of charge, to any person obtaining a copy of this software
and associated documentation files (the "Software"), to deal in the Software without restriction,
including without limitation the rights to use, copy, modify, merge, publish, distribute,
sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT
NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES
OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN
CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE."""

# sha256 of Creative Commons' plain-text legal code of CC BY 4.0 (legalcode.txt), as Debian ships
# it in /usr/share/doc/libuv1/copyright; the file must be that text, byte for byte.
CC_BY_4_SHA256 = "5931a95fb29822f36cd331e0254397e17cdba8d8f4d8bacde7471ffae5ac91bf"
CC_BY_4_SECTIONS = (
    "Definitions",
    "Scope",
    "License Conditions",
    "Sui Generis Database Rights",
    "Disclaimer of Warranties and Limitation of Liability",
    "Term and Termination",
    "Other Terms and Conditions",
    "Interpretation",
)


def words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# --- licences ---------------------------------------------------------------------------------


def test_licence_of_the_code_is_the_standard_mit_text_with_the_books_authors():
    lines = (ROOT / "LICENSE").read_text().splitlines()
    assert lines[0] == "MIT License"
    assert lines[2] == f"Copyright (c) {CONFIG['copyright']} {CONFIG['author']}"
    assert lines[2] == "Copyright (c) 2026 The posenc authors"
    assert words("\n".join(lines[3:])) == words(MIT_BODY)


def test_licence_of_the_text_and_figures_is_the_canonical_cc_by_4_legal_code():
    data = (ROOT / "LICENSE-CC-BY-4.0.txt").read_bytes()
    assert hashlib.sha256(data).hexdigest() == CC_BY_4_SHA256
    text = data.decode("utf-8")
    assert text.startswith("Attribution 4.0 International\n")
    headings = re.findall(r"^Section (\d) -- (.+)\.$", text, re.M)
    assert headings == [(str(i), title) for i, title in enumerate(CC_BY_4_SECTIONS, start=1)]
    assert "Creative Commons Attribution 4.0 International Public License" in text


def test_landing_page_states_both_licences_and_what_each_covers():
    text = words(INDEX.read_text())
    section = text[text.index("## Licences") :]
    cc, mit = section.index("CC BY 4.0"), section.index("MIT licence")
    for name in ("`LICENSE-CC-BY-4.0.txt`", "`images/`", "website"):  # text and figures
        assert cc < section.index(name) < mit, name
    for name in ("`LICENSE`", "`src/`", "`tests/`", "`benchmarks/`", "code cells"):  # code
        assert section.index(name) > mit, name


def test_the_footer_of_every_page_states_both_licences():
    footer = CONFIG["html"]["extra_footer"]
    assert "CC BY 4.0" in footer and "MIT" in footer
    assert 'href="https://creativecommons.org/licenses/by/4.0/"' in footer


@pytest.mark.book
def test_every_built_page_shows_the_licence_footer_and_the_landing_page_its_bibtex(built_book):
    _, _, html = built_book
    pages = [p for p in html.rglob("*.html") if "_static" not in p.parts]
    assert len(pages) >= len(toc_files())
    for page in pages:
        text = page.read_text()
        assert 'class="posenc-licences"' in text and "CC BY 4.0" in text and "MIT licence" in text, page.name
    # the highlighted entry, its markup removed, is the entry the module writes from CITATION.cff
    index = html_module.unescape(re.sub(r"<[^>]+>", "", (html / "index.html").read_text()))
    assert bibtex_entry(cff()) in index


def test_the_package_metadata_says_mit_and_ships_the_licence():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]


# --- citation ---------------------------------------------------------------------------------


def cff() -> dict:
    return load_cff(CFF_PATH)


def validate(data: dict) -> None:
    schema = json.loads(SCHEMA_PATH.read_text())
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    validator.validate(data)


def test_vendored_schema_is_cff_1_2_0():
    schema = json.loads(SCHEMA_PATH.read_text())
    assert schema["$id"] == "https://citation-file-format.github.io/1.2.0/schema.json"
    assert schema["properties"]["cff-version"]["pattern"] == r"^1\.2\.0$"
    assert hashlib.sha256(SCHEMA_PATH.read_bytes()).hexdigest() in (SCHEMA_PATH.parent / "README.md").read_text()


def test_citation_file_validates_against_the_cff_schema():
    data = cff()
    assert data["cff-version"] == "1.2.0"
    validate(data)


@pytest.mark.parametrize(
    "break_it",
    [
        lambda d: d.pop("authors"),
        lambda d: d.update({"date-released": "25 November 2026"}),
        lambda d: d.update({"license": "MIT and CC BY"}),
        lambda d: d["preferred-citation"].update({"type": "novel"}),
    ],
    ids=["no authors", "date not ISO", "licence not SPDX", "unknown reference type"],
)
def test_the_schema_check_rejects_a_broken_citation_file(break_it):
    data = copy.deepcopy(cff())
    break_it(data)
    with pytest.raises(jsonschema.ValidationError):
        validate(data)


def test_citation_names_the_book_as_its_configuration_does_and_no_made_up_address():
    data = cff()
    book = data["preferred-citation"]
    assert book["type"] == "book"
    for work in (data, book):
        assert work["title"] == CONFIG["title"]
        assert work["authors"] == [{"name": CONFIG["author"]}]
        assert work["version"] == data["version"] and work.get("date-released") == data.get("date-released")
    # both licences at the top level (the text's and the code's); the book's citation is the text's
    assert data["license"] == ["CC-BY-4.0", "MIT"] and book["license"] == "CC-BY-4.0"
    if "date-released" not in book:  # an unreleased version: the year of the book's copyright
        assert book["year"] == int(CONFIG["copyright"])
    # _config.yml names no public repository yet, so neither may the citation
    assert not CONFIG["repository"]["url"]
    text = CFF_PATH.read_text()
    for key in ("url", "repository-code", "repository", "repository-artifact", "doi", "identifiers"):
        assert not re.search(rf"^\s*{key}:", text, re.M), key


def parse_bibtex(text: str) -> tuple[str, str, dict[str, str]]:
    """(entry type, key, fields) of one BibTeX entry; field values keep their braces."""
    match = re.fullmatch(r"@(\w+)\{([^,\s]+),\n(.*)\n\}", text.strip(), re.S)
    assert match, text
    fields = {}
    for line in match[3].splitlines():
        name, value = re.fullmatch(r"\s+(\w+)\s*=\s*(.+),", line).groups()
        fields[name] = value
    return match[1], match[2], fields


def unbrace(value: str) -> str:
    while value.startswith("{") and value.endswith("}"):
        value = value[1:-1]
    return value


def test_bibtex_carries_the_fields_of_the_citation_file():
    data = cff()
    book = data["preferred-citation"]
    entry_type, key, fields = parse_bibtex(bibtex_entry(data))
    assert entry_type == "book"
    assert unbrace(fields["title"]) == book["title"]
    assert fields["title"] == "{{" + book["title"] + "}}"  # capitals protected
    assert fields["author"] == "{{" + book["authors"][0]["name"] + "}}"  # an entity: one name, not split
    if "date-released" in book:
        year, month, _ = book["date-released"].split("-")
        assert fields["month"] == calendar.month_abbr[int(month)].lower()  # a BibTeX macro, unbraced
    else:  # an unreleased version: its year, no month
        year = str(book["year"])
        assert "month" not in fields
    assert unbrace(fields["year"]) == year
    assert unbrace(fields["note"]) == f"Version {book['version']}"
    assert key == "posenc" + year
    assert set(fields) == {"title", "author", "year", "note"} | ({"month"} if "date-released" in book else set())


def test_bibtex_of_people_special_characters_and_a_file_without_preferred_citation():
    data = {
        "cff-version": "1.2.0",
        "message": "m",
        "title": "Fast & Small: 100% Tested_Kernels",
        "authors": [
            {"family-names": "Druskat", "given-names": "Stephan"},
            {"name-particle": "van", "family-names": "Rossum", "given-names": "Guido"},
            {"family-names": "Plato"},
        ],
        "version": "2.1",
        "date-released": "2021-08-01",
    }
    validate(data)
    entry_type, key, fields = parse_bibtex(bibtex_entry(data))
    assert entry_type == "misc"  # type software (the default): no BibTeX type of its own
    assert key == "druskat2021"
    assert fields["author"] == "{Druskat, Stephan and van Rossum, Guido and Plato}"
    assert fields["title"] == r"{{Fast \& Small: 100\% Tested\_Kernels}}"
    assert fields["month"] == "aug" and fields["year"] == "{2021}" and fields["note"] == "{Version 2.1}"


def test_bibtex_needs_authors():
    with pytest.raises(ValueError, match="authors"):
        bibtex_entry({"title": "t", "authors": []})
    with pytest.raises(ValueError, match="family-names"):
        bibtex_entry({"title": "t", "authors": [{"given-names": "Ada"}]})


def test_the_landing_page_has_a_how_to_cite_section_with_the_generated_bibtex():
    text = INDEX.read_text()
    section = text[text.index("## How to cite") :]
    assert "```{citation-bibtex}\n```" in section
    assert "@book" not in section  # generated at build time, never typed


def sphinx_build(tmp_path, page: str, cff: bool = True) -> str:
    """Build a one-page Sphinx project using the directive, with warnings as errors; its HTML."""
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace, patch_docutils

    src = tmp_path / "src"
    src.mkdir()
    if cff:
        shutil.copy(CFF_PATH, src / "CITATION.cff")
    (src / "conf.py").write_text('extensions = ["posenc.book.citation"]\n')
    (src / "index.rst").write_text(page)
    # a fresh docutils registry for each build, as sphinx-build itself does
    with patch_docutils(src), docutils_namespace():
        app = Sphinx(src, src, tmp_path / "out", tmp_path / "doctrees", "html", status=None, warningiserror=True)
        app.build()
    return (tmp_path / "out" / "index.html").read_text()


def test_the_citation_directive_renders_the_entry_in_a_sphinx_build(tmp_path):
    page = sphinx_build(tmp_path, "Cite\n====\n\n.. citation-bibtex::\n")
    assert "posenc2026" in page and "Version " + cff()["version"] in page
    assert 'class="highlight-bibtex' in page


def test_the_citation_directive_says_which_file_is_missing(tmp_path):
    from sphinx.errors import SphinxWarning

    with pytest.raises(SphinxWarning, match=r"no file missing\.cff at the book's root"):
        sphinx_build(tmp_path, "Cite\n====\n\n.. citation-bibtex:: missing.cff\n", cff=False)


# --- one version --------------------------------------------------------------------------------


def changelog_releases() -> list[tuple[str, str]]:
    """(version, date) of each release heading of CHANGELOG.md, in order; the date "Unreleased" for
    a version not released yet."""
    return re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d\d-\d\d|Unreleased)$", CHANGELOG.read_text(), re.M)


def test_the_version_lives_in_the_package_and_everything_else_agrees():
    version = posenc.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "posenc.__version__"}
    data = cff()
    assert data["version"] == version == data["preferred-citation"]["version"]
    newest, date = changelog_releases()[0]
    assert newest == version
    if date == "Unreleased":  # no release date anywhere until it is released
        assert "date-released" not in data and "date-released" not in data["preferred-citation"]
    else:
        assert date == data["date-released"] == data["preferred-citation"]["date-released"]


def test_changelog_lists_each_release_once_newest_first():
    releases = changelog_releases()
    versions = [tuple(int(x) for x in v.split(".")) for v, _ in releases]
    assert versions == sorted(set(versions), reverse=True)
    assert [v for v, _ in releases][-1] == "0.1.0"
    assert "Unreleased" not in [d for _, d in releases[1:]]  # only the newest may be unreleased
    dates = [d for _, d in releases if d != "Unreleased"]
    assert dates == sorted(dates, reverse=True)
    # every "## " heading of the changelog is a release heading the pattern reads
    assert len(releases) == len(re.findall(r"^## ", CHANGELOG.read_text(), re.M))
    assert "<!--" not in CHANGELOG.read_text()  # no note to its editor left in the file


# --- the corrections page -----------------------------------------------------------------------


def test_the_corrections_page_is_an_appendix_linked_from_the_landing_page():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    appendices = next(part for part in toc["parts"] if part["caption"] == "Appendices")
    assert {"file": "chapters/corrections"} in appendices["chapters"]
    assert "chapters/corrections" in toc_files()
    assert "{doc}`chapters/corrections`" in INDEX.read_text()


def corrections() -> list[dict]:
    """Each entry of the corrections page: its release, chapter heading, text and commits."""
    entries, release, heading, current = [], None, None, None
    for line in CORRECTIONS.read_text().splitlines():
        if line.startswith("## "):
            release, heading, current = line[3:].split()[0], None, None
        elif line.startswith("### "):
            heading, current = line[4:], None
        elif line.startswith("- ") and release:
            current = {"release": release, "heading": heading, "text": line[2:]}
            entries.append(current)
        elif line.startswith("  ") and current is not None:
            current["text"] += " " + line.strip()
        else:
            current = None
    for entry in entries:
        entry["commits"] = re.findall(r"`([0-9a-f]{7,40})`", entry["text"])
    return entries


def test_corrections_are_grouped_by_the_changelogs_releases_and_each_names_its_commit():
    releases = re.findall(r"^## (\d+\.\d+\.\d+)", CORRECTIONS.read_text(), re.M)
    assert releases == [v for v, _ in changelog_releases()][: len(releases)]
    entries = corrections()
    assert len(entries) >= 20
    for entry in entries:
        assert entry["commits"], f"no commit named: {entry['text'][:80]}"
        assert entry["text"].count("→") == 1, f"not one 'wrong → right': {entry['text'][:80]}"


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def _full_history() -> bool:
    if shutil.which("git") is None:
        return False
    inside = git("rev-parse", "--is-inside-work-tree")
    return (
        inside.returncode == 0
        and inside.stdout.strip() == "true"
        and git("rev-parse", "--is-shallow-repository").stdout.strip() == "false"
    )


needs_history = pytest.mark.skipif(not _full_history(), reason="not a full git checkout: the history is not here")


@needs_history
def test_every_commit_the_corrections_page_names_is_in_the_history():
    for commit in sorted({c for entry in corrections() for c in entry["commits"]}):
        assert git("merge-base", "--is-ancestor", commit, "HEAD").returncode == 0, f"{commit} is not in git log"


def book_text_at(revision: str) -> str:
    """The chapters' cells and pages and the landing page at ``revision``, as one text."""
    paths = git("ls-tree", "-r", "--name-only", revision, "chapters", "index.md").stdout.split()
    texts = []
    for path in paths:
        if path.endswith((".ipynb", ".md")):
            source = git("show", f"{revision}:{path}").stdout
            if path.endswith(".ipynb"):
                source = "\n".join(cell.source for cell in nbformat.reads(source, as_version=4).cells)
            texts.append(source)
    return "\n".join(texts)


def normalise(text: str) -> str:
    """Quotes, emphasis, case and line breaks aside: the page quotes the old text inside its own quotes."""
    text = re.sub("[\"'\u201c\u201d\u2018\u2019]", "'", text.replace("*", ""))
    return re.sub(r"\s+", " ", text).strip().lower()


@needs_history
def test_each_correction_quotes_text_that_the_commit_replaced_in_that_chapter():
    before, checked = {}, 0
    for entry in corrections():
        first = entry["commits"][0]
        old_side = entry["text"].split("→")[0]
        quotes = re.findall(r'"([^"]+)"', old_side)
        if first not in before:
            before[first] = normalise(book_text_at(f"{first}^"))
        for quote in quotes:
            assert normalise(quote) in before[first], f"not in the book before {first}: {quote!r}"
            checked += 1
        chapter = re.search(r"\{doc\}`(\d\d_\w+)`", entry["heading"] or "")
        if chapter:
            changed = set()
            for commit in entry["commits"]:
                changed |= set(git("show", "--name-only", "--format=", commit).stdout.split())
            assert f"chapters/{chapter[1]}.ipynb" in changed, f"{entry['commits']} did not change {chapter[1]}"
    assert checked >= 20


# The numbers the corrections page states, recomputed.


def float16_merged_neighbours(n: int) -> np.ndarray:
    """Positions p whose code p/(n-1), stored in float16, equals that of p + 1 (plain NumPy)."""
    codes = (np.arange(n) / (n - 1)).astype(np.float16)
    return np.flatnonzero(codes[1:] == codes[:-1])


def test_chapter_1_float16_numbers():
    first = next(n for n in range(3, 5000) if float16_merged_neighbours(n).size)
    assert first == 2051
    assert 4095 in float16_merged_neighbours(4097) and 4094 not in float16_merged_neighbours(4096)
    assert float16_merged_neighbours(4097).size == 1024
    # the step at 4097 is exactly half the spacing of float16 just below 1: a tie, rounded to 1
    assert 1 / 4096 == 0.5 * float(np.spacing(np.float16(1 - 2**-11)))
    assert np.float16(4095 / 4096) == np.float16(1.0)
    for n in (2050, 2051, 4097):
        assert np.array_equal(posenc.normalized_code_collisions(n), float16_merged_neighbours(n))


def test_chapter_7_shaw_table_has_seven_rows_and_the_end_rows_serve_far_keys():
    rows = posenc.shaw_relative_indices(20, 3)
    assert sorted(np.unique(rows)) == list(range(7))
    assert rows[10, 10] == 3 and rows[10, 0] == 0 and rows[10, 19] == 6
    assert [rows[10, 10 + r] for r in range(-3, 4)] == list(range(7))


def test_chapter_9_the_critical_dimension_is_not_a_function_of_l_over_the_base():
    def critical(d, b, length):  # Liu et al.'s d_extra, by hand
        return 2 * int(np.ceil(d / 2 * np.log(length / (2 * np.pi)) / np.log(b)))

    same_ratio = [(10000.0, 4096), (20000.0, 8192), (5000.0, 2048)]
    values = [posenc.critical_dimension(128, b, length) for b, length in same_ratio]
    assert values == [critical(128, b, length) for b, length in same_ratio]
    assert values[0] == 92 and len(set(values)) == 3


def lab_value(results, task, scheme, seed, extension="none", finetuned=False, factor=1, part="all"):
    for run in results["runs"]:
        config = run["config"]
        if (config["task"], config["scheme"], config["seed"]) == (task, scheme, seed):
            for e in run["evaluations"]:
                if (e["extension"], e["finetuned"], e["test_factor"]) == (extension, finetuned, factor):
                    return e[part]
    raise KeyError((task, scheme, seed, extension, finetuned, factor))


@needs_history
def test_chapter_12_numbers_from_the_3_seed_results_of_0_1_0():
    results = json.loads(git("show", "08620a2:chapters/data/lab_results.json").stdout)
    seeds = sorted({run["config"]["seed"] for run in results["runs"]})
    assert seeds == [0, 1, 2]

    def value(*args, **kw):
        return lab_value(results, *args, **kw)

    # ALiBi against no positions, lookup within L: 0.31 to 0.33 against 0.19 to 0.20, every seed
    alibi = [value("lookup", "alibi", s) for s in seeds]
    none = [value("lookup", "none", s) for s in seeds]
    assert all(0.305 <= a < 0.335 for a in alibi) and all(0.185 <= n < 0.205 for n in none)
    assert all(a > n for a, n in zip(alibi, none, strict=True))
    # the best zero-shot extension at 4L: YaRN on lookup in all 3 seeds, on text in 2 (NTK-aware in the third)
    extensions = ("none", "linear", "ntk", "dynamic", "yarn", "yarn_short")
    best_lookup = [max(extensions, key=lambda e: value("lookup", "rope", s, e, factor=4)) for s in seeds]
    best_text = [min(extensions, key=lambda e: value("text", "rope", s, e, factor=4)) for s in seeds]
    assert best_lookup == ["yarn"] * 3
    assert best_text.count("yarn") == 2
    third = seeds[best_text.index(next(b for b in best_text if b != "yarn"))]
    assert value("text", "rope", third, "ntk", factor=4) < value("text", "rope", third, "yarn", factor=4)
    # every fine-tuned model has a higher text loss at L than the original, in every seed
    for extension in extensions[1:]:
        for s in seeds:
            assert value("text", "rope", s, extension, True) > value("text", "rope", s), (extension, s)

    # past L (the positions beyond it), against no positions: the learned table is worse on both
    # tasks at 2L and 4L in every seed; the sinusoidal code on text and at 4L in every seed, but on
    # lookup at 2L in only 1 of 3
    def worse_than_none(scheme, task, factor, s):
        own, none = (value(task, x, s, factor=factor, part="beyond") for x in (scheme, "none"))
        return own < none if task == "lookup" else own > none  # accuracy / bits per character

    for factor in (2, 4):
        for task in ("lookup", "text"):
            assert all(worse_than_none("learned", task, factor, s) for s in seeds), (task, factor)
    assert all(worse_than_none("sinusoidal", "text", factor, s) for factor in (2, 4) for s in seeds)
    assert all(worse_than_none("sinusoidal", "lookup", 4, s) for s in seeds)
    assert sum(worse_than_none("sinusoidal", "lookup", 2, s) for s in seeds) == 1


def test_the_0_4_0_corrections_from_the_current_protocol_files():
    """The numbers of the corrections made when text and passkey were rerun (12 seeds)."""
    from posenc import lab
    from posenc.lab import claims

    folder = ROOT / "chapters" / "data" / "lab"
    runs = lab.load_results(folder / "text.json")["runs"] + lab.load_results(folder / "passkey.json")["runs"]
    seeds = sorted({r["config"]["seed"] for r in runs})
    assert len(seeds) == 12
    # chapter 12: the sinusoidal code above 0.95 within L in 11 of 12 seeds, lowest 0.920; the others all
    sinusoidal = lab.seed_values(runs, "passkey", "sinusoidal", 1)
    assert int(np.sum(sinusoidal > 0.95)) == 11 and f"{sinusoidal.min():.3f}" == "0.920"
    others = [lab.seed_values(runs, "passkey", s, 1) for s in lab.SCHEMES if s != "sinusoidal"]
    assert all(np.all(v > 0.95) for v in others)
    # the hybrid ahead of RoPE on passkey at 4L in 12 of 12 seeds, at 8L in 11 of 12
    for factor, count in ((4, 12), (8, 11)):
        gap = lab.seed_values(runs, "passkey", "rope_nope", factor) - lab.seed_values(runs, "passkey", "rope", factor)
        assert int(np.sum(gap > 0)) == count, factor

    # chapter 15: fine-tuned text loss at 4L minus at L, per seed
    def change(extension):
        at = [lab.seed_values(runs, "text", "rope", f, extension, True) for f in (1, 4)]
        return at[1] - at[0]

    def rule(extension, first_factor=4, value="all", against=None):
        first = lab.seed_values(runs, "text", "rope", first_factor, extension, True, value)
        second = against if against is not None else lab.seed_values(runs, "text", "rope", 1, extension, True)
        return claims.verdict(first, second, "text")["verdict"]  # "ahead": the first is lower

    for extension in ("dynamic", "longrope"):
        assert int(np.sum(change(extension) < 0)) == 11 and rule(extension) == "ahead", extension
    for extension in ("yarn", "linear", "ntk"):
        assert rule(extension) == "inconclusive", extension
    for extension in ("yarn_matched", "none"):
        assert np.all(change(extension) > 0), extension
    # against the original model's loss at L: no gain shows (every position and past L)
    original = lab.seed_values(runs, "text", "rope", 1)
    for extension in ("dynamic", "longrope"):
        for value in ("all", "beyond"):
            assert rule(extension, 4, value, original) == "inconclusive", (extension, value)


def test_chapter_12_rerun_fine_tuned_models_worse_at_l_in_every_seed_but_at_most_one():
    results = json.loads((ROOT / "chapters" / "data" / "lab_results.json").read_text())
    seeds = sorted({run["config"]["seed"] for run in results["runs"]})
    assert len(seeds) == 5
    runs = [run for run in results["runs"] if run["config"]["task"] == "text" and run["config"]["scheme"] == "rope"]
    extensions = sorted({e["extension"] for run in runs for e in run["evaluations"]} - {"none"})
    assert len(extensions) >= 6
    for extension in extensions:
        worse = [
            lab_value(results, "text", "rope", s, extension, True) > lab_value(results, "text", "rope", s)
            for s in seeds
        ]
        assert sum(worse) >= len(seeds) - 1, extension


def test_chapter_12_numbers_of_the_0_4_0_corrections_from_the_earlier_protocol_file():
    from posenc.lab import claims

    results = json.loads((ROOT / "chapters" / "data" / "lab_results.json").read_text())
    seeds = sorted({run["config"]["seed"] for run in results["runs"]})
    assert len(seeds) == 5

    def value(*args, **kw):
        return lab_value(results, *args, **kw)

    # ALiBi's text loss at 2L and 4L within 0.12 of its loss at L in every seed, the largest move 0.112 (at 2L)
    moves = {f: [abs(value("text", "alibi", s, factor=f) - value("text", "alibi", s)) for s in seeds] for f in (2, 4)}
    assert max(max(m) for m in moves.values()) < 0.12 and round(max(moves[2]), 3) == 0.112
    assert max(moves[2]) > max(moves[4])
    # fine-tuned at L against the original, by the margin rule: NTK and YaRN level, PI, dynamic, LongRoPE behind
    verdicts = {}
    for extension in ("linear", "ntk", "dynamic", "yarn", "yarn_matched", "longrope"):
        comparison = claims.Compare("text", 1, ("rope", extension, True), ("rope", "none", False), "all")
        verdicts[extension] = claims.compare(results["runs"], comparison)["verdict"]
    level, behind = {"ntk", "yarn"}, {"linear", "dynamic", "longrope"}
    assert verdicts == {
        **dict.fromkeys(level, "level"),
        **dict.fromkeys(behind, "behind"),
        "yarn_matched": "inconclusive",
    }
    # plain RoPE against NoPE on passkey at 8L: below by more than 0.031 in 4 seeds, -0.012 in the fifth
    gaps = sorted(value("passkey", "rope", s, factor=8) - value("passkey", "nope", s, factor=8) for s in seeds)
    assert sum(g < -0.031 for g in gaps) == 4 and round(gaps[-1], 3) == -0.012


def test_the_issue_45_corrections_recomputed():
    """The numbers of the issue-45 corrections of chapter 12: the lookup claim that failed on ten new
    seeds, and the comparisons that the claims' rule (per-seed margin, 9 in 10 of the seeds) leaves open."""
    from posenc import lab
    from posenc.lab import claims

    folder = ROOT / "chapters" / "data" / "lab"
    first, more = (lab.load_results(folder / name)["runs"] for name in ("lookup.json", "lookup_more.json"))
    assert sorted({r["config"]["seed"] for r in more}) == list(range(12, 22))

    def beyond(runs, scheme):
        return lab.seed_values(runs, "lookup", scheme, 4, value="beyond")

    # "RoPE and p-RoPE above 0.7, every other scheme below 0.6": all 12 first seeds, 5 of the 10 new
    for runs, holds in ((first, 12), (more, 5)):
        kept = np.minimum(beyond(runs, "rope"), beyond(runs, "p_rope")) > 0.7
        others = np.max([beyond(runs, s) for s in lab.SCHEMES if s not in ("rope", "p_rope")], axis=0) < 0.6
        assert int(np.sum(kept & others)) == holds
    assert f"{beyond(more, 'rope').min():.3f}" == "0.484"

    # the discovery seeds these corrections were decided on: lookup's first round (0-21), passkey's and text's
    discovery = {**{t: claims.SEEDS[t]["discovery"] for t in claims.SEEDS}, "lookup": tuple(range(22))}
    assert discovery["lookup"] == claims.FIRST_LOOKUP_ROUND["discovery"]

    def cleared(runs, task, factor, first_setting, second_setting, verdict, value):
        comparison = claims.Compare(task, factor, first_setting, second_setting, value)
        v = comparison.oriented(runs, discovery[task])
        m = claims.MARGINS["bits_per_char" if task == "text" else "accuracy"]
        count = {"ahead": np.sum(v >= m), "behind": np.sum(v <= -m), "level": np.sum(np.abs(v) < m)}[verdict]
        assert claims.rule_verdict(v, task)["verdict"] == "inconclusive"
        return int(count), v.size

    plain = lambda scheme: (scheme, "none", False)  # noqa: E731
    rope = lambda method, tuned=False: ("rope", method, tuned)  # noqa: E731
    lookup = first + more
    assert cleared(lookup, "lookup", 4, plain("p_rope"), plain("rope"), "level", "beyond") == (19, 22)
    assert cleared(lookup, "lookup", 4, plain("sinusoidal"), plain("nope"), "behind", "beyond") == (19, 22)
    for method, count in (("ntk", 19), ("dynamic", 19), ("yarn_matched", 18)):
        assert cleared(lookup, "lookup", 4, rope(method), rope("none"), "ahead", "beyond") == (count, 22)
    passkey, text = (lab.load_results(folder / f"{t}.json")["runs"] for t in ("passkey", "text"))
    assert cleared(passkey, "passkey", 8, rope("longrope"), rope("dynamic"), "ahead", "all") == (10, 12)
    assert cleared(passkey, "passkey", 8, plain("rope_nope"), plain("rope"), "ahead", "all") == (10, 12)
    assert cleared(passkey, "passkey", 8, plain("partial_rope"), plain("rope"), "behind", "all") == (10, 12)
    assert cleared(text, "text", 4, plain("p_rope"), plain("rope"), "behind", "all") == (10, 12)
    assert cleared(text, "text", 4, rope("dynamic"), rope("ntk"), "ahead", "all") == (10, 12)
    assert cleared(text, "text", 1, rope("longrope", True), rope("none"), "behind", "all") == (10, 12)
    # on the held-out seeds: the claims not confirmed, and how many held-out seeds held each (lookup: the
    # first round's, seeds 22-31, with the verdicts stated then; passkey: seeds 12-15)
    first_round = claims.FIRST_LOOKUP_ROUND
    lookup_runs = claims.task_runs("lookup", folder)
    held = {}
    for claim in claims.CLAIMS:
        if claim.name in first_round["not_confirmed"]:
            then = dataclasses.replace(claim, verdict=first_round["not_confirmed"][claim.name])
            held[claim.name] = claims.check_claim(
                lookup_runs, then, first_round["discovery"], first_round["held_out"]
            )["held_out"]
    for claim in claims.PASSKEY_CLAIMS:
        if claim.name in claims.NOT_CONFIRMED:
            held[claim.name] = claims.check_claim(claims.task_runs("passkey", folder), claim)["held_out"]
    assert held == {
        "rope-above-hybrid-lookup": (7, 10),
        "yarn-vs-matched-lookup": (8, 10),
        "yarn-vs-longrope-lookup": (8, 10),
        "rope-vs-nope-passkey-8x": (3, 4),
        "hybrid-vs-rope-passkey-2x": (2, 4),
        "longrope-ft-vs-plain-ft-passkey": (3, 4),
    }
    tie = claims.check_claim(
        lookup_runs,
        next(c for c in claims.CLAIMS if c.name == "yarn-vs-longrope-lookup"),
        first_round["discovery"],
        first_round["held_out"],
    )
    assert tie["all_verdict"] == "level" and tie["difference"]["n"] == 32 and tie["difference"]["high"] < 0
    rope_nope = claims.check_claim(
        claims.task_runs("passkey", folder),
        next(c for c in claims.PASSKEY_CLAIMS if c.name == "rope-vs-nope-passkey-8x"),
    )
    assert rope_nope["all_verdict"] == "inconclusive" and rope_nope["difference"]["n"] == 16
    # lookup's second round: decided on seeds 0-31, checked on 32-41
    assert claims.SEEDS["lookup"] == {"discovery": tuple(range(32)), "held_out": tuple(range(32, 42))}
    second = {r["name"]: r for r in claims.check_claims(lookup_runs, claims.CLAIMS)}
    assert not second["rope-above-hybrid-lookup"]["counted"]
    rope_hybrid = next(c for c in claims.CLAIMS if c.name == "rope-above-hybrid-lookup").comparison
    assert int(np.sum(rope_hybrid.oriented(lookup_runs, tuple(range(32))) >= 0.02)) == 28
    assert claims.finding_threshold(32) == 29
    assert second["hybrid-above-partial-lookup"]["discovery"] == (32, 32)
    assert second["hybrid-above-partial-lookup"]["held_out"] == (8, 10)
    for name in ("yarn-vs-matched-lookup", "yarn-vs-longrope-lookup"):
        assert second[name]["held_out"] == (10, 10) and second[name]["passed"]
    tie = second["yarn-vs-longrope-lookup"]["difference"]
    assert tie["n"] == 42 and tie["verdict"] == "level"
    assert f"{tie['mean']:+.3f} {tie['low']:+.3f} {tie['high']:+.5f}" == "-0.002 -0.004 +0.00004"
    # the chance that a ranking with no effect passes the held-out check, before and now
    assert claims.sign_test(2, 2) == 1 / 4
    assert claims.null_pass_probability(10) == 11 / 1024 and claims.null_pass_probability(4) == 1 / 16


def _module_at_commit(commit: str, path: str, package: str):
    """The module at ``path`` as it stood at ``commit``, loaded inside ``package`` (its relative imports
    resolve against today's package: for a module whose imports still exist)."""
    import importlib.util
    import sys
    import types

    shown = git("show", f"{commit}:{path}")
    if shown.returncode != 0:
        pytest.skip(f"git show {commit}:{path} failed (not a git checkout?): {shown.stderr.strip()}")
    name = f"{package}._at_{commit}"
    module = types.ModuleType(name)
    module.__package__ = package
    module.__spec__ = importlib.util.spec_from_loader(name, loader=None)
    sys.modules[name] = module  # dataclasses look their module up there
    try:
        exec(compile(shown.stdout, f"{path}@{commit}", "exec"), module.__dict__)
    finally:
        del sys.modules[name]
    return module


def test_the_issue_44_corrections_recomputed():
    """The numbers of the issue-44 corrections: chapter 12's held-out check (from the current
    protocol's files and posenc.lab.claims) and p-RoPE against RoPE; chapter 14's DeepSeek defaults
    (the quoted lines of tests/test_library_claims.py)."""
    from test_library_claims import deepseek_args

    from posenc import lab
    from posenc.lab import claims

    folder = ROOT / "chapters" / "data" / "lab"
    runs = [run for task in lab.TASKS for run in lab.load_results(folder / f"{task}.json")["runs"]]
    # the check as it stood at that commit (issue 45 replaced it): its own module, on the same files
    old = _module_at_commit("37796b4", "src/posenc/lab/claims.py", "posenc.lab")
    every = old.CLAIMS + old.PASSKEY_CLAIMS + old.TEXT_CLAIMS
    checked = {r["name"]: r for r in old.check_claims(runs, every)}
    tested = {n: r for n, r in checked.items() if r["held_out_check"]["passed"] is not None}
    assert len(old.HELD_OUT_SEEDS) == 2 and 0.5 ** len(old.HELD_OUT_SEEDS) == 1 / 4
    assert len(tested) == 85
    identities = [n for n in tested if n.startswith(("dynamic-exact-within-L-", "dynamic-is-its-control-"))]
    assert len(identities) == 6
    one_test = ("ntk_at_dynamic-ahead-of-none-lookup", "dynamic-ahead-of-none-lookup")
    assert checked[one_test[0]]["held_out_check"]["values"] == checked[one_test[1]]["held_out_check"]["values"]
    distinct = [n for n in tested if n not in identities and n != one_test[1]]
    assert len(distinct) == 78 and sum(bool(tested[n]["held_out_check"]["passed"]) for n in distinct) == 77
    d = claims.compare(runs, claims.Compare("lookup", 4, ("p_rope", "none", False), ("rope", "none", False)))
    assert d["verdict"] == "level" and (f"{d['low']:+.3f}", f"{d['high']:+.3f}") == ("+0.001", "+0.015")
    assert (d["positive"], d["n"]) == (10, 12) and d["high"] < d["margin"] == 0.02
    args = deepseek_args()
    assert (args.max_seq_len, args.original_seq_len) == (16_384, 4_096)
