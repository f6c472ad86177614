"""The chapters that read files from chapters/data/ name them in their first cell, so that a reader
who downloaded one notebook learns at once which files are missing and where they are."""

import re
from pathlib import Path

import nbformat
import pytest

from posenc.book import require_data_files

from conftest import chapter_notebooks

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
NOTEBOOKS = chapter_notebooks()


def files_read(source: str) -> set[str]:
    """The data/... paths a chapter's code names: "data/x.npz" or Path("data") / "lab" / "x.json"."""
    found = {"data/" + name for name in re.findall(r'"data/([^"]+)"', source)}
    for parts in re.findall(r'Path\("data"\)((?:\s*/\s*"[^"]+")+)', source):
        found.add("/".join(["data", *re.findall(r'"([^"]+)"', parts)]))
    return found


def test_the_reader_of_a_chapter_sees_which_files_are_missing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "here.json").write_text("{}")
    assert require_data_files("data/here.json") is None
    with pytest.raises(FileNotFoundError) as error:
        require_data_files("data/here.json", "data/gone.json", "data/lab/also_gone.json")
    message = str(error.value)
    assert "data/gone.json, data/lab/also_gone.json" in message and "here.json" not in message
    assert "chapters/data/" in message and str(tmp_path) in message
    (tmp_path / "data" / "folder.json").mkdir()  # a folder is not a file
    with pytest.raises(FileNotFoundError, match=re.escape("data/folder.json")):
        require_data_files("data/folder.json")
    with pytest.raises(ValueError, match="paths"):
        require_data_files()
    for bad in (3, None, b"data/here.json", ""):  # not a path: the parameter and the value named
        with pytest.raises(TypeError, match=r"paths: each must be a file path .* got " + re.escape(repr(bad))):
            require_data_files("data/here.json", bad)


def test_files_read_finds_both_spellings():
    source = 'np.load("data/table.npz")\nlab.load_results(Path("data") / "lab" / "x.json")\nprint("no data/here")'
    assert files_read(source) == {"data/table.npz", "data/lab/x.json"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_a_chapter_names_every_data_file_it_reads_in_its_first_cell(path):
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    read = set().union(*(files_read(source) for source in cells))
    call = re.search(r"require_data_files\(([^)]*)\)", cells[0])
    named = set(re.findall(r'"([^"]+)"', call.group(1))) if call else set()
    assert named == read, f"{path.name}: reads {sorted(read)}, its first cell names {sorted(named)}"
    for name in named:
        assert (CHAPTERS / name).is_file(), f"{path.name} names {name}, which is not in chapters/"
