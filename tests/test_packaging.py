"""The package as users install it: what the wheel holds, the version it reports, the changelog.

The wheel itself is built, installed in a fresh venv and run outside the source tree by CI
(.ci/run, ``wheel_smoke``); these checks are the cheap part of that guard.
"""

from __future__ import annotations

import fnmatch
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import snlmarkov
from snlmarkov.cli import _version, main

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_package_data_covers_every_file_the_package_holds_beside_its_modules():
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["snlmarkov"]
    package = ROOT / "snlmarkov"
    data = [
        p.relative_to(package).as_posix()
        for p in package.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    ]
    assert "web/static/index.html" in data  # the browser game's page
    missing = [f for f in data if not any(fnmatch.fnmatch(f, pat) for pat in patterns)]
    assert missing == [], f"not in [tool.setuptools.package-data]: {missing}"


def test_the_version_has_one_source():
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "snlmarkov._version.__version__"}


def test_version_prints_the_installed_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"snlmarkov {_version()}\n"


def test_version_falls_back_to_the_source_and_names_a_stale_install(monkeypatch):
    def not_installed(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", not_installed)
    assert _version() == snlmarkov.__version__
    monkeypatch.setattr(metadata, "version", lambda name: "0.0.1")
    assert _version() == f"{snlmarkov.__version__} (installed metadata: 0.0.1)"


def test_version_needs_no_numerical_library():
    code = "import sys\nfrom snlmarkov.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
    code += "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'scipy', 'matplotlib'}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("[]"), out.stdout


def test_the_changelog_has_a_section_for_the_next_version():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "\n## Unreleased\n" in text
    assert f"\n## {snlmarkov.__version__} " in text


def test_the_docs_extra_installs_what_the_docs_build_imports():
    docs = " ".join(PYPROJECT["project"]["optional-dependencies"]["docs"])
    for needed in ("sphinx", "numpydoc", "pydata-sphinx-theme", "myst-nb", "starlette"):
        assert needed in docs, needed


def test_the_notebooks_extra_can_execute_a_notebook():
    notebooks = " ".join(PYPROJECT["project"]["optional-dependencies"]["notebooks"])
    for needed in ("jupyter", "nbconvert", "nbclient", "ipykernel"):
        assert needed in notebooks, needed
