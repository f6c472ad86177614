"""No made-up addresses: the book links to its repository, and offers Binder, Colab and the
repository and issues buttons, only when ``_config.yml`` names a repository. Until the book is
published it names none, and each chapter page still offers its notebook for download."""

import os
from pathlib import Path

import yaml

from conftest import ROOT

# joined at run time, so that this file (and its bytecode) does not contain the string itself
MADE_UP = "/".join(["posenc-book", "positional-encoding"]).encode()
# build outputs, the virtual environment, git's own files and caches: not part of the repository
SKIPPED_DIRS = {"_build", ".venv", ".venv-lab", ".git", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache"}
SKIPPED_DIRS |= {".ipynb_checkpoints"}
REPOSITORY_BUTTONS = ("use_repository_button", "use_issues_button", "use_edit_page_button")
LAUNCH_KEYS = ("binderhub_url", "jupyterhub_url", "colab_url", "deepnote_url", "jupyterlite_url", "thebe")


def repository_files():
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info")]
        for name in files:
            yield Path(folder) / name


def test_no_file_names_the_made_up_repository():
    found = [str(path.relative_to(ROOT)) for path in repository_files() if MADE_UP in path.read_bytes()]
    assert found == [], f"files naming the made-up repository {MADE_UP.decode()!r}: {found}"


def buttons_without_a_repository(config: dict) -> list[str]:
    """The buttons ``config`` (a parsed ``_config.yml``) turns on although it names no repository url."""
    if str((config.get("repository") or {}).get("url") or "").strip():
        return []
    html = config.get("html") or {}
    launch = config.get("launch_buttons") or {}
    return [f"html.{key}" for key in REPOSITORY_BUTTONS if html.get(key)] + [
        f"launch_buttons.{key}" for key in LAUNCH_KEYS if launch.get(key)
    ]


def test_the_check_catches_a_launch_button_without_a_repository():
    assert buttons_without_a_repository({"launch_buttons": {"colab_url": "https://colab.research.google.com"}}) == [
        "launch_buttons.colab_url"
    ]
    assert buttons_without_a_repository({"repository": {"url": ""}, "html": {"use_issues_button": True}}) == [
        "html.use_issues_button"
    ]
    published = {"repository": {"url": "https://example.org/a/b"}, "launch_buttons": {"binderhub_url": "x"}}
    assert buttons_without_a_repository(published) == []


def test_config_turns_no_button_on_without_a_repository_url():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert buttons_without_a_repository(config) == []


def final_theme_options() -> dict:
    """The theme options Jupyter Book derives from ``_config.yml`` (its defaults merged in)."""
    from jupyter_book.config import get_final_config

    sphinx_config, _ = get_final_config(
        user_yaml=ROOT / "_config.yml",
        cli_config={"latex_individualpages": False},
        sourcedir=ROOT,
        raise_on_invalid=True,
    )
    return sphinx_config["html_theme_options"]


def test_the_built_site_gets_no_repository_default_and_offers_the_notebook_download():
    options = final_theme_options()
    named = str((yaml.safe_load((ROOT / "_config.yml").read_text()).get("repository") or {}).get("url") or "")
    # without repository.url in _config.yml, Jupyter Book's default (its own repository) would leak in
    assert options.get("repository_url", "") == named, 'set repository.url in _config.yml (to "" until published)'
    if not named:
        assert not any(options.get(key) for key in REPOSITORY_BUTTONS)
        assert not any((options.get("launch_buttons") or {}).get(key) for key in LAUNCH_KEYS)
    assert options.get("use_download_button", True) is True  # each chapter page: download its .ipynb
