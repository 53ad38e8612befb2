"""The command line answers ``--help`` without the numerical stack.

Building the parser (and printing any ``--help``) must import neither numpy,
scipy nor matplotlib; each check runs in a fresh interpreter, since this one
has them loaded already. The speed itself is measured in benchmarks/bench_cli.py.
"""

from __future__ import annotations

import json
import subprocess
import sys

from snlmarkov.cli import build_parser

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


#: What building the parser must not import either: the configuration classes (dataclasses, with
#: inspect and ast behind it; fractions and decimal for the dice) and the modules of the commands'
#: work (json, sqlite3). They cost more than a bare interpreter's start-up together.
CONFIG = ("dataclasses", "fractions", "decimal", "json", "sqlite3", "snlmarkov.rules", "snlmarkov.dice")


def test_building_the_parser_imports_no_configuration_class():
    code = f"import sys\nfrom snlmarkov.cli import build_parser\nbuild_parser()\nCONFIG = {CONFIG!r}\n"
    code += "print(sorted(m for m in CONFIG if m in sys.modules))"
    assert _child(code).strip() == "[]"


def test_the_configuration_check_sees_an_import():
    code = f"import sys\nimport snlmarkov.rules\nCONFIG = {CONFIG!r}\n"
    code += "print(sorted(m for m in CONFIG if m in sys.modules))"
    assert "snlmarkov.rules" in _child(code)


#: the sub-commands' modules: a command line imports only the one it runs
_MODULES = """
import contextlib, io, json, sys
from snlmarkov.cli import _COMMANDS, main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(ARGV)
    except SystemExit:
        pass
print(json.dumps(sorted(m for m in sys.modules if m.removeprefix("snlmarkov.cli.") in _COMMANDS)))
"""


def test_the_top_help_imports_no_command_module():
    assert json.loads(_child(_MODULES.replace("ARGV", '["--help"]'))) == []


def test_a_command_line_imports_only_its_command_module():
    assert json.loads(_child(_MODULES.replace("ARGV", '["race", "--help"]'))) == ["snlmarkov.cli.race"]
    assert json.loads(_child(_MODULES.replace("ARGV", '["bogus"]'))) == []


def test_the_module_check_sees_an_import():
    """The same probe lists a command module once one is imported (no false pass)."""
    code = _MODULES.replace("ARGV", '["--help"]').replace("import contextlib", "import snlmarkov.cli.odds, contextlib")
    assert json.loads(_child(code)) == ["snlmarkov.cli.odds"]


def _help(parser, *argv):
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()) as out:
        try:
            parser.parse_args([*argv, "--help"])
        except SystemExit as exc:
            assert exc.code == 0
    return out.getvalue()


def test_a_command_built_alone_helps_and_parses_as_in_the_full_parser():
    from snlmarkov.cli import _COMMANDS

    full = build_parser()
    assert _help(build_parser("race")) == _help(full)  # the list of sub-commands and their lines
    for name in _COMMANDS:
        alone = build_parser(name)
        assert _help(alone, name) == _help(full, name)
        assert "--" in _help(full, name).split("options:")[1]  # every command has options of its own
    args = build_parser("race").parse_args(["race", "--players", "3", "--mode", "last_one_standing"])
    assert (args.command, args.players, args.mode) == ("race", 3, "last_one_standing")
    assert args.func.__module__ == "snlmarkov.cli.race"


def test_the_command_is_the_first_word_that_is_not_an_option():
    from snlmarkov.cli import _command_of

    assert _command_of(["--version", "race", "--players", "3"]) == "race"
    assert _command_of(["-h"]) == ""
    assert _command_of([]) == ""
    assert _command_of(["bogus", "race"]) == "bogus"


def test_importing_the_package_does_not_import_typing():
    """``import snlmarkov`` (the first thing every ``--help`` does) leaves :mod:`typing` unloaded, unless the
    interpreter had it already; and the probe sees it once something imports it."""
    code = "import sys\nbefore = 'typing' in sys.modules\nimport snlmarkov\n"
    code += (
        "print(before or 'typing' not in sys.modules, end=' ')\nimport snlmarkov.board\nprint('typing' in sys.modules)"
    )
    assert _child(code).strip() == "True True"
