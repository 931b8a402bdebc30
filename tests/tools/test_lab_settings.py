"""jupyter/lab/settings/overrides.json (issue 18.8), which the Makefile copies into the venv,
keeps `make lab` and `make present` from asking whether to fetch the "official Jupyter
news"; read as JupyterLab reads it (jupyterlab_server), so a misspelt setting fails."""

import json
import pathlib
import sys

import pytest
from jupyterlab.commands import get_app_dir
from jupyterlab_server.settings_utils import get_settings

import book

OVERRIDES = book.ROOT / "jupyter" / "lab" / "settings" / "overrides.json"
NOTIFICATION = "@jupyterlab/apputils-extension:notification"


def effective_defaults(app_settings_dir, tmp_path):
    """The notification extension's defaults as JupyterLab serves them, with the overrides
    of ``app_settings_dir`` and no user settings."""
    app_dir = pathlib.Path(get_app_dir())
    result, _ = get_settings(str(app_settings_dir), str(app_dir / "schemas"),
                             str(tmp_path / "user-settings"), schema_name=NOTIFICATION)
    return {name: spec.get("default")
            for name, spec in result["schema"]["properties"].items()}


def test_the_overrides_turn_the_news_off_and_nothing_else(tmp_path):
    overrides = json.loads(OVERRIDES.read_text(encoding="utf-8"))
    assert overrides == {NOTIFICATION: {"fetchNews": "false"}}
    # Read by JupyterLab from a folder holding only this file: "Never", not "Ask".
    folder = tmp_path / "app-settings"
    folder.mkdir()
    (folder / "overrides.json").write_bytes(OVERRIDES.read_bytes())
    defaults = effective_defaults(folder, tmp_path)
    assert defaults["fetchNews"] == "false"
    assert defaults["checkForUpdates"] is True  # untouched: it only acts with the news on
    # Without the file JupyterLab asks ("none"): the test above can fail.
    (folder / "overrides.json").unlink()
    assert effective_defaults(folder, tmp_path)["fetchNews"] == "none"


def test_the_venv_has_the_overrides_installed(tmp_path):
    """The venv running the tests is the one `make` set up: its JupyterLab reads the file."""
    app_settings = pathlib.Path(get_app_dir()) / "settings"
    installed = app_settings / "overrides.json"
    if not installed.is_file():
        pytest.fail(f"{installed} is missing: `make lab` (the venv step of the Makefile) "
                    f"copies {OVERRIDES.relative_to(book.ROOT)} there")
    assert installed.read_bytes() == OVERRIDES.read_bytes(), (
        f"{installed} differs from {OVERRIDES.relative_to(book.ROOT)}: run `make lab` again")
    assert pathlib.Path(sys.prefix) in installed.parents
    assert effective_defaults(app_settings, tmp_path)["fetchNews"] == "false"
