"""Under CI, a missing notebook dependency fails the run instead of skipping the notebook tests."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run_without_nbformat(tmp_path, ci: str) -> subprocess.CompletedProcess:
    (tmp_path / "nbformat.py").write_text("raise ImportError('nbformat hidden by the test')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "CI": ci}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "tests/test_notebooks.py"]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_missing_notebook_dependency_fails_under_ci(tmp_path):
    result = _run_without_nbformat(tmp_path, "true")
    assert result.returncode != 0, result.stdout
    assert "under CI a missing notebook dependency is a failure" in result.stdout + result.stderr


def test_missing_notebook_dependency_skips_locally(tmp_path):
    result = _run_without_nbformat(tmp_path, "")
    assert result.returncode == 5 or "skipped" in result.stdout, result.stdout  # 5: nothing collected


# ------------------------------------------------------------------ README, pyproject and .ci/run agree

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

README = (ROOT / "README.md").read_text()
CI = (ROOT / ".ci" / "run").read_text()
PYTEST = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]


def test_readme_test_command_is_the_fast_suite_that_ci_runs():
    assert ".venv/bin/python -m pytest\n" in README  # README's command, with no options
    assert "\nstep pytest python -m pytest\n" in CI  # run as it stands
    assert "-m 'not slow'" in PYTEST["addopts"] and "--strict-markers" in PYTEST["addopts"]
    assert any(m.startswith("slow:") for m in PYTEST["markers"])


def test_the_slow_tests_have_their_own_ci_step_and_readme_says_how_to_run_them():
    assert "python -m pytest -m slow" in README
    assert "pytest_may_collect_none python -m pytest -m slow" in CI


def test_the_exact_tests_run_again_under_two_blas_threads():
    block = CI[CI.index("EXACT_TESTS=(") : CI.index(")", CI.index("EXACT_TESTS=("))]
    paths = block.split()[1:]
    assert len(paths) >= 10
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert missing == [], f".ci/run names test paths that do not exist: {missing}"
    assert "export OPENBLAS_NUM_THREADS=2" in CI


def test_ci_builds_the_wheel_and_runs_it_outside_the_source_tree():
    for needle in ("python -m build --wheel", "wheel_smoke", 'snlmarkov" serve --host 127.0.0.1', "report --out"):
        assert needle in CI, needle
