"""The command line answers ``--help`` without the numerical stack.

Building the parser (and printing any ``--help``) must import neither numpy,
scipy nor matplotlib; each check runs in a fresh interpreter, since this one
has them loaded already. The speed itself is measured in benchmarks/bench_cli.py.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("numpy", "scipy", "matplotlib")

_CHILD = """
import contextlib, io, json, sys
from snlmarkov.cli import build_parser, main
parser = build_parser()
sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
loaded = {"build_parser": sorted({m.split(".")[0] for m in sys.modules} & set(HEAVY))}
for argv in [["--help"]] + [[name, "--help"] for name in sub.choices]:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        try:
            main(argv)
        except SystemExit as exc:
            assert exc.code == 0, (argv, exc.code)
    assert "usage: snlmarkov" in out.getvalue(), argv
    loaded[" ".join(argv)] = sorted({m.split(".")[0] for m in sys.modules} & set(HEAVY))
print(json.dumps(loaded))
"""


def _child(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", f"HEAVY = {HEAVY!r}\n" + code], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_building_the_parser_imports_no_numerical_library():
    code = "import sys\nfrom snlmarkov.cli import build_parser\nbuild_parser()\n"
    code += "print(sorted(m for m in sys.modules if m.split('.')[0] in HEAVY))"
    assert _child(code).strip() == "[]"


def test_every_help_page_imports_no_numerical_library():
    loaded = json.loads(_child(_CHILD))
    assert len(loaded) >= 1 + 1 + 5  # the parser, snlmarkov --help and at least the five first commands
    assert {argv: mods for argv, mods in loaded.items() if mods} == {}


def test_the_check_sees_a_heavy_import():
    """The same probe reports numpy once something imports it (no false pass)."""
    code = "import sys\nimport snlmarkov.board\n"
    code += "print(sorted({m.split('.')[0] for m in sys.modules} & set(HEAVY)))"
    assert _child(code).strip() == "['numpy']"
