"""The real configs of released models stored in the repository, each stored once, in one of two folders.

``src/posenc/zoo_configs``: the configs that zoo entries of :data:`posenc.MODELS` read their fields from
(package data, shipped with posenc); ``tests/data/configs``: the others, which only the tests read. In each
folder ``SOURCES.json`` names every file's source (model, repository, path, commit, where in the file).
"""

import json
from pathlib import Path

import posenc

#: The two folders: the zoo's (in the package) and the tests' own.
FOLDERS = (Path(posenc.__file__).parent / "zoo_configs", Path(__file__).parent / "data" / "configs")


def _sources(folder: Path) -> dict:
    return json.loads((folder / "SOURCES.json").read_text())


#: Config name -> its stored file, from both folders.
FILES = {path.stem: path for folder in FOLDERS for path in sorted(folder.glob("*.json")) if path.stem != "SOURCES"}
#: Config name -> its source, from both folders' SOURCES.json.
SOURCES = {name: source for folder in FOLDERS for name, source in _sources(folder).items()}
#: Every stored config's name, sorted.
CONFIGS = sorted(SOURCES)


def load(name: str) -> dict:
    """The stored config ``name``, whole."""
    return json.loads(FILES[name].read_text())


def text_config(name: str) -> dict:
    """The stored config ``name``'s language model: its ``text_config`` where it has one."""
    config = load(name)
    return config.get("text_config", config)
