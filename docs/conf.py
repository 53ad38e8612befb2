"""Sphinx configuration of the snlmarkov documentation.

Build it (warnings are errors, as in CI)::

    pip install -e ".[docs]"
    sphinx-build -W -b html docs docs/_build/html

The API pages (``api/``) and the gallery (``gallery.md``) are written here,
at configuration time, from the package's ``__all__`` lists and the files in
``figures/``, so a new public name or a new figure appears without editing the
docs. The notebooks are rendered with their stored outputs; none is executed.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import snlmarkov  # noqa: E402

project = "snlmarkov"
author = "the snlmarkov developers"
copyright = "the snlmarkov developers"
version = release = snlmarkov.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",  # Markdown pages (MyST) and notebooks, rendered without running them
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**/.ipynb_checkpoints", "notebooks/README.md", "Thumbs.db", ".DS_Store"]
root_doc = "index"
templates_path = ["_templates"]  # autosummary/class.rst: methods and properties on the class page

# notebooks: shown with the outputs stored in them, never executed here
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3

# API: numpydoc renders the docstrings; autosummary makes one page per public name
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
add_module_names = False

intersphinx_mapping = {}  # no network in CI: links to numpy/scipy stay plain text

html_theme = "pydata_sphinx_theme"
html_title = f"snlmarkov {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_static_path: list[str] = []
html_show_sourcelink = False

# --------------------------------------------------------------------------- API pages
# One page per module of the layers contract in pyproject.toml, bottom layer
# first, so a new subpackage gets its page once it is placed in the contract.
TITLES = {
    "snlmarkov.errors": "Errors",
    "snlmarkov.builtin_boards": "Built-in boards",
    "snlmarkov.board": "Boards",
    "snlmarkov.rules": "Rules",
    "snlmarkov.limits": "Input limits",
    "snlmarkov.reach": "Reachability",
    "snlmarkov.state": "Game state",
    "snlmarkov.chain": "Exact models",
    "snlmarkov.game": "The game engine",
    "snlmarkov.sim": "The simulator",
    "snlmarkov.analysis": "Analysis",
    "snlmarkov.races": "Races",
    "snlmarkov.checks": "Checks",
    "snlmarkov.search": "Board design and sweeps",
    "snlmarkov.plots": "Plots",
    "snlmarkov.report": "Report",
    "snlmarkov.web": "Browser game",
    "snlmarkov.cli": "Command line",
}


def _layer_modules() -> list[str]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    return [m.strip() for entry in reversed(layers) for m in entry.split("|")]


def _slug(module: str) -> str:
    return module.replace("snlmarkov.", "").replace(".", "-")


def _public(module_name: str) -> list[str]:
    module = importlib.import_module(module_name)
    return [name for name in getattr(module, "__all__", []) if not name.startswith("_")]


def _write_if_changed(path: Path, text: str) -> None:
    """Write only what changed, so sphinx-build rebuilds only what it must."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _autosummary(names: list[str]) -> str:
    lines = [".. autosummary::", "   :toctree: generated", "   :nosignatures:", ""]
    lines += [f"   {name}" for name in names]
    return "\n".join(lines) + "\n"


def write_api_pages() -> None:
    api = HERE / "api"
    top = _public("snlmarkov")
    top_objects = {id(getattr(snlmarkov, name)): name for name in top}
    index = [
        "API reference",
        "=============",
        "",
        "Everything below is generated from the docstrings (numpydoc format).",
        "The public API is the top-level package: ``import snlmarkov as snl``",
        "gives every name in the first table. The subpackages follow the data",
        "flow (see :doc:`../architecture`); each page lists what it holds beyond",
        "the top-level names. That is the whole public API: the modules inside",
        "the subpackages (``snlmarkov.chain.mechanics``, ``snlmarkov.web.rooms``,",
        "...) are implementation, and their other names may change without notice",
        "(each declares in ``__all__`` only what its subpackage exports;",
        "``tests/test_public_api.py`` keeps it so).",
        "",
        "The ``snlmarkov`` package",
        "-------------------------",
        "",
        _autosummary([f"snlmarkov.{name}" for name in top if name != "__version__"]),
        ".. toctree::",
        "   :maxdepth: 1",
        "   :caption: Modules",
        "",
    ]
    for module_name in _layer_modules():
        title = TITLES.get(module_name, module_name.removeprefix("snlmarkov."))
        slug = _slug(module_name)
        index.append(f"   {slug}")
        names = _public(module_name)
        module = importlib.import_module(module_name)
        own = [n for n in names if id(getattr(module, n)) not in top_objects]
        shared = [top_objects[id(getattr(module, n))] for n in names if id(getattr(module, n)) in top_objects]
        heading = f"{title}: ``{module_name}``"
        page = [heading, "=" * len(heading), ""]
        page += [f".. automodule:: {module_name}", "   :no-members:", ""]
        if shared:
            page += ["Top-level names defined here: " + ", ".join(f":obj:`snlmarkov.{n}`" for n in shared) + ".", ""]
        if own:
            page += [_autosummary(own)]
        _write_if_changed(api / f"{slug}.rst", "\n".join(page))
    _write_if_changed(api / "index.rst", "\n".join(index) + "\n")


# --------------------------------------------------------------------------- gallery
def _captions() -> dict[str, str]:
    """``file name -> what it shows``, from the table in docs/figures.md."""
    out: dict[str, str] = {}
    for line in (HERE / "figures.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and "`" in cells[0]:
            for name in re.findall(r"`([^`]+)`", cells[0]):
                out[name] = cells[1]
    return out


def write_gallery() -> None:
    captions = _captions()
    lines = [
        "# Gallery",
        "",
        "The figures of `snlmarkov report` for the jungle board, as committed in the",
        "repository's `figures/` folder (regenerate them with `snlmarkov report`; see",
        "{doc}`figures` for how each is made). Every headline number is in",
        "`figures/summary.md`.",
        "",
    ]
    for png in sorted((ROOT / "figures").glob("*.png")):
        caption = captions.get(png.name, png.stem.replace("_", " "))
        lines += [
            f":::{{figure}} ../figures/{png.name}",
            f":alt: {png.stem}",
            ":width: 100%",
            "",
            f"**{png.name}**: {caption}",
            ":::",
            "",
        ]
    _write_if_changed(HERE / "gallery.md", "\n".join(lines))


# --------------------------------------------------------------------------- constants
def _constant_comment(name: str, obj: object) -> list[str] | None:
    """The ``#:`` comment of a constant, from the module that assigns it.

    A subpackage re-exports constants such as ``snlmarkov.analysis.DEFAULT_TAIL``
    from the module that defines them; autodoc looks for the comment only in the
    module it documents, and a float or a mapping has no docstring of its own
    (autodoc would show ``float``'s). The comment is found in the documented
    module's submodules, where the same object is assigned.
    """
    from sphinx.pycode import ModuleAnalyzer

    parent, _, attr = name.rpartition(".")
    for module_name in sorted(m for m in sys.modules if m == parent or m.startswith(parent + ".")):
        if getattr(sys.modules[module_name], attr, None) is not obj:
            continue
        try:
            comment = ModuleAnalyzer.for_module(module_name).find_attr_docs().get(("", attr))
        except Exception:  # a module without source (an extension) has no comments
            continue
        if comment:
            return list(comment)
    return None


def _document_constants(app, what, name, obj, options, lines) -> None:
    if what != "data" or callable(obj):
        return
    own = type(obj).__doc__
    inherited = [line.strip() for line in (own if isinstance(own, str) else "").strip().splitlines()]
    if lines and [line.strip() for line in lines if line.strip()] != [line for line in inherited if line]:
        return  # a docstring of its own
    comment = _constant_comment(name, obj)
    if comment:
        lines[:] = comment


def setup(app):
    app.connect("autodoc-process-docstring", _document_constants, priority=100)  # before numpydoc


write_api_pages()
write_gallery()
