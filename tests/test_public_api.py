"""The public surface: what the API reference lists is what a module declares public, and no more.

Public are the names of ``snlmarkov.__all__`` (``import snlmarkov as snl``),
the ``__all__`` of each subpackage (``snlmarkov.plots``, ``snlmarkov.web``,
...) and of the top-level modules (``snlmarkov.limits``, ...), each with a page
in docs/api. A module inside a subpackage is implementation: its ``__all__``
lists only names its subpackage (or the top level) exports, so nothing it
holds looks public by accident.
"""

from __future__ import annotations

import importlib
import pathlib

import pytest

import snlmarkov

ROOT = pathlib.Path(snlmarkov.__file__).parent
SUBPACKAGES = sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").exists())


def _submodules(pkg: str) -> list[str]:
    return sorted(f"snlmarkov.{pkg}.{p.stem}" for p in (ROOT / pkg).glob("*.py") if p.stem != "__init__")


def test_every_top_level_name_resolves():
    for name in snlmarkov.__all__:
        assert getattr(snlmarkov, name) is not None, name


@pytest.mark.parametrize("pkg", SUBPACKAGES)
def test_a_submodule_declares_public_only_what_its_subpackage_exports(pkg):
    package = importlib.import_module(f"snlmarkov.{pkg}")
    public = set(getattr(package, "__all__", ())) | set(snlmarkov.__all__)
    for name in getattr(package, "__all__", ()):
        assert hasattr(package, name) or getattr(package, name, None) is not None, f"snlmarkov.{pkg}.{name}"
    extra = {}
    for module_name in _submodules(pkg):
        if pkg == "web" and module_name == "snlmarkov.web.app":
            pytest.importorskip("starlette")
        module = importlib.import_module(module_name)
        declared = set(getattr(module, "__all__", ()))
        for name in declared:
            assert hasattr(module, name), f"{module_name}.__all__ names {name!r}, which it does not define"
        if declared - public:
            extra[module_name] = sorted(declared - public)
    assert extra == {}, "internal names declared public (export them from the subpackage, or drop them from __all__)"


def test_the_check_sees_an_internal_name_declared_public(monkeypatch):
    """A planted internal name in a submodule's __all__ is caught."""
    import snlmarkov.chain.mechanics as mechanics

    monkeypatch.setattr(mechanics, "__all__", [*mechanics.__all__, "roll_slots"], raising=False)
    with pytest.raises(AssertionError, match="internal names declared public"):
        test_a_submodule_declares_public_only_what_its_subpackage_exports("chain")
