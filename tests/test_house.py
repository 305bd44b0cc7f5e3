"""The shape of the house: imports go down only, every game is declared once.

``core`` imports no game and nothing above it; a game's modules (all but its
``__init__``, which takes the PettingZoo-style ``env()`` entry points from the
registry) import ``core`` and their own game only. Every game of the package has a
spec that names real modules, and no module lists the games by hand.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from trafficenvs.core.spec import specs

PKG = Path(__file__).resolve().parent.parent / "trafficenvs"
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
    allowed = ("trafficenvs.core", "trafficenvs._numba_cache")
    bad = [m for m in _imports(path) if not m.startswith(allowed)]
    assert not bad, f"core/{path.name} imports {bad}"


@pytest.mark.parametrize("game", GAMES)
def test_a_games_modules_import_core_and_their_own_game_only(game):
    allowed = ("trafficenvs.core", f"trafficenvs.{game}")
    for path in sorted((PKG / game).glob("*.py")):
        if path.name == "__init__.py":
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
