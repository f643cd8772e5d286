"""One version, wherever it is read: pyproject.toml, `trncost.__version__` (the API's `/health`,
the OpenAPI document, the CLI's User-Agent, the agent's events, each estimate's
`engine_version`) and the newest release in CHANGELOG.md agree."""

from __future__ import annotations

import json
import re
import tomllib

from tests.support.examples import ROOT
from trncost import __version__

RELEASE = re.compile(r"^## (\d+\.\d+\.\d+) — (\d{4}-\d{2}-\d{2})$", re.MULTILINE)


def test_the_package_version_is_the_projects() -> None:
    # Given pyproject.toml
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    # Then the package says the same version
    assert project["version"] == __version__


def test_the_newest_release_in_the_changelog_is_the_version() -> None:
    # Given CHANGELOG.md: an Unreleased section, then releases newest first
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = RELEASE.findall(text)
    assert text.index("## Unreleased") < text.index(f"## {releases[0][0]} ")
    # Then the newest release is the version the package says, and dates only go back
    assert releases[0][0] == __version__
    assert [d for _, d in releases] == sorted((d for _, d in releases), reverse=True)


def test_the_checked_in_openapi_document_has_the_version() -> None:
    # Given the OpenAPI document clients generate from
    doc = json.loads((ROOT / "openapi.json").read_text(encoding="utf-8"))
    # Then it names the same version
    assert doc["info"]["version"] == __version__
