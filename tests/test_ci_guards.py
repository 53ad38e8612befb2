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
