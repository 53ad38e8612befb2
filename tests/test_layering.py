"""The import-linter contracts in pyproject.toml hold, and they catch a break.

Each case copies the package and ``pyproject.toml`` to a temporary folder,
plants one forbidden import, and runs ``lint-imports`` there: it must fail and
name the import. The real tree must pass.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("importlinter", reason="import-linter is in the test extra")

ROOT = Path(__file__).resolve().parents[1]
LINT = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"


def lint_imports(where: Path) -> subprocess.CompletedProcess[str]:
    """Run ``lint-imports`` with ``where`` first on the path and as the working folder."""
    env = dict(os.environ, PYTHONPATH=str(where))
    return subprocess.run(
        [sys.executable, "-c", LINT, "--config", str(where / "pyproject.toml"), "--no-cache"],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def copy_tree(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "snlmarkov", tmp_path / "snlmarkov", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_real_tree_keeps_every_contract():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "planted", "edge"),
    [
        # the engine must never touch the exact models (forbidden contract, and chain | game are independent)
        ("game/engine.py", "import snlmarkov.chain.model", "snlmarkov.game.engine -> snlmarkov.chain.model"),
        # the simulator likewise
        ("sim/core.py", "from snlmarkov.analysis import single", "snlmarkov.sim.core -> snlmarkov.analysis"),
        # a lower layer never imports a higher one
        ("chain/solve.py", "import snlmarkov.races.core", "snlmarkov.chain.solve -> snlmarkov.races.core"),
        ("board.py", "import snlmarkov.report", "snlmarkov.board -> snlmarkov.report"),
        # the top-level package's lazy names would reach any layer unchecked: no module imports it
        ("chain/solve.py", "from snlmarkov import race", "snlmarkov.chain.solve -> snlmarkov"),
        ("game/engine.py", "import snlmarkov", "snlmarkov.game.engine -> snlmarkov"),
        ("sim/core.py", "from .. import analyze", "snlmarkov.sim.core -> snlmarkov"),
    ],
)
def test_a_planted_violation_breaks_a_contract(tmp_path, module, planted, edge):
    where = copy_tree(tmp_path)
    path = where / "snlmarkov" / module
    path.write_text(path.read_text() + f"\n{planted}  # deliberate layering violation\n")
    result = lint_imports(where)
    assert result.returncode != 0, result.stdout
    assert "BROKEN" in result.stdout
    assert edge in result.stdout, result.stdout


def test_the_copy_without_a_violation_passes(tmp_path):
    """The planted cases fail because of the plant, not because of the copy."""
    result = lint_imports(copy_tree(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_architecture_page_names_every_layer():
    """docs/architecture.md's table follows the contract (a new subpackage goes in both)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    page = (ROOT / "docs" / "architecture.md").read_text()
    missing = []
    for entry in layers:
        for module in entry.split("|"):
            name = module.strip().removeprefix("snlmarkov.")
            if f"`{name}/`" not in page and f"`{name}.py`" not in page:
                missing.append(name)
    assert missing == [], f"docs/architecture.md does not name these layers: {missing}"
