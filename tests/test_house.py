"""The shape of the house: imports go down only, every game is declared once and has
the same shape.

``core`` imports no game and nothing above it; a game's modules (all but its
``__init__``, which takes the PettingZoo-style ``env()`` entry points from the
registry) import ``core`` and their own game only. Every game of the package has a
spec that names real modules, and no module lists the games by hand.

Every game and the template game (``tests/toy_game``) have the same files
(``docs/adding_a_game.md``): ``spec.py``, ``game.py``, ``state.py``, ``render.py``,
``verbs.py``, ``rules/`` and ``strategy/``; ``rules/`` never imports ``strategy/``;
``verbs.py`` is imported by nobody (the spec loader registers it); no module imports
another module's private names.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from trafficenvs.core.spec import specs

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "trafficenvs"
TEMPLATE = ROOT / "tests" / "toy_game"
GAMES = sorted(s.name for s in specs() if s.game.startswith("trafficenvs."))


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m.startswith("trafficenvs")}


def test_the_package_has_three_games_declared_by_their_specs():
    assert GAMES == ["jakarta_traffic", "jamming_traffic", "traffic_jam"]


@pytest.mark.parametrize("path", sorted((PKG / "core").glob("*.py")), ids=lambda p: p.name)
def test_core_imports_no_game_and_nothing_above_it(path):
    allowed = ("trafficenvs.core", "trafficenvs.numba_cache")
    bad = [m for m in _imports(path) if not m.startswith(allowed)]
    assert not bad, f"core/{path.name} imports {bad}"


@pytest.mark.parametrize("game", GAMES)
def test_a_games_modules_import_core_and_their_own_game_only(game):
    allowed = ("trafficenvs.core", f"trafficenvs.{game}")
    for path in sorted((PKG / game).rglob("*.py")):
        if path.relative_to(PKG / game) == Path("__init__.py"):
            continue
        bad = [m for m in _imports(path) if not m.startswith(allowed)]
        assert not bad, f"{game}/{path.name} imports {bad}"


def test_no_module_lists_the_games_by_hand():
    """Outside a game's own folder, no package module names two games (a hand-made list)."""
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG)
        if rel.parts[0] in GAMES:
            continue
        text = path.read_text()
        named = [g for g in GAMES if f'"{g}"' in text]
        assert len(named) < 2, f"{rel} names the games {named}"


# --------------------------------------------------------------------------- one shape

SHAPE = {"__init__.py", "spec.py", "game.py", "state.py", "render.py", "verbs.py", "rules",
         "strategy"}
GAME_DIRS = [PKG / g for g in GAMES] + [TEMPLATE]


def _listing(folder: Path) -> set[str]:
    """A folder's modules and packages (``data/`` holds a game's data files, if any)."""
    return {p.name for p in folder.iterdir()
            if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()))}


def _top_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


@pytest.mark.parametrize("folder", GAME_DIRS, ids=lambda p: p.name)
def test_every_game_and_the_template_have_the_same_files(folder):
    assert _listing(folder) == SHAPE
    extra = {p.name for p in folder.iterdir() if p.is_dir()} - SHAPE - {"data", "__pycache__"}
    assert not extra, f"{folder.name} has folders outside the shape: {extra}"
    assert {"__init__.py", "layout.py"} <= _listing(folder / "rules")
    assert {"__init__.py", "greedy.py"} <= _listing(folder / "strategy")
    assert {"to_dict", "from_dict", "check_invariants"} <= _top_names(folder / "state.py")
    assert {"render_text", "render_image"} <= _top_names(folder / "render.py")


@pytest.mark.parametrize("folder", GAME_DIRS, ids=lambda p: p.name)
def test_verbs_gathers_every_verb_and_the_greedy_one(folder):
    from trafficenvs.core.verbs import VERBS

    names = _top_names(folder / "verbs.py")
    missing = set(VERBS) - names
    assert not missing, f"{folder.name}/verbs.py lacks {missing}"
    assert {"RECORD_DTYPE", "greedy"} <= names


def _module_of(path: Path) -> str:
    rel = path.relative_to(ROOT / "tests" if path.is_relative_to(TEMPLATE) else ROOT)
    return ".".join(rel.with_suffix("").parts)


@pytest.mark.parametrize("folder", GAME_DIRS, ids=lambda p: p.name)
def test_rules_import_no_strategy_and_strategy_no_python_face(folder):
    pkg = _module_of(folder / "__init__.py").removesuffix(".__init__")
    for path in sorted((folder / "rules").glob("*.py")):
        bad = [m for m in _imports_any(path) if m.startswith(pkg)
               and not m.startswith(f"{pkg}.rules")]
        assert not bad, f"{folder.name}/rules/{path.name} imports {bad}"
    for path in sorted((folder / "strategy").glob("*.py")):
        bad = [m for m in _imports_any(path) if m.startswith(pkg)
               and not m.startswith((f"{pkg}.rules", f"{pkg}.strategy"))]
        assert not bad, f"{folder.name}/strategy/{path.name} imports {bad}"


def _imports_any(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def _python_files() -> list[Path]:
    return sorted(p for root in ("trafficenvs", "tests", "benchmarks")
                  for p in (ROOT / root).rglob("*.py") if ".venv" not in p.parts)


def test_no_module_imports_a_verbs_module():
    """``verbs.py`` only gathers names for the spec loader: importing it would give every
    verb a second import path."""
    for path in _python_files():
        bad = [m for m in _imports_any(path) if m.endswith(".verbs")
               and not m.startswith("trafficenvs.core")]
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_no_module_imports_a_private_name_from_another_module():
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(
                    ("trafficenvs", "toy_game")):
                private = [a.name for a in node.names if a.name.startswith("_")]
                parts = [p for p in node.module.split(".") if p.startswith("_")]
                assert not private and not parts, \
                    f"{path.relative_to(ROOT)} imports {private or parts} from {node.module}"
