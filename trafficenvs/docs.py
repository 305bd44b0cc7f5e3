"""Rewrite the generated tables of the rules pages from the games' layouts.

Each rules page (``GameSpec.rules_page``) holds its observation and action tables
between ``<!-- layout:observation -->`` / ``<!-- layout:action -->`` and
``<!-- /layout -->``; this writes :meth:`~trafficenvs.core.layout.Layout.markdown`
of the game built with ``GameSpec.doc_options`` there. The tests check the pages
with :func:`check_rules_page`, so a layout change without a page update fails::

    python -m trafficenvs.docs              # rewrite the tables of every rules page
    python -m trafficenvs.docs traffic_jam  # of one game's
"""

from __future__ import annotations

import sys
from pathlib import Path

from trafficenvs.core.layout import Layout, check_doc, replace_doc_section
from trafficenvs.core.spec import GameSpec, specs

ROOT = Path(__file__).resolve().parent.parent


def doc_layouts(spec: GameSpec) -> dict[str, Layout]:
    """The layouts a rules page shows, by section key, for ``spec.doc_options``."""
    from trafficenvs.registry import make_game

    game = make_game(spec.name, **spec.doc_options)
    return {"observation": game.obs_layout, "action": game.action_layout}


def check_rules_page(spec: GameSpec) -> None:
    """AssertionError unless the game's rules page shows its current layouts."""
    assert spec.rules_page, f"{spec.name} has no rules page"
    for key, layout in doc_layouts(spec).items():
        check_doc(layout, ROOT / spec.rules_page, key)


def write_rules_page(spec: GameSpec) -> bool:
    """Rewrite the tables of the game's rules page; True if the page changed."""
    path = ROOT / spec.rules_page
    text = old = path.read_text()
    for key, layout in doc_layouts(spec).items():
        text = replace_doc_section(text, key, layout.markdown())
    if text != old:
        path.write_text(text)
    return text != old


def main(argv: list[str] | None = None) -> int:
    names = sys.argv[1:] if argv is None else argv
    for spec in specs():
        if names and spec.name not in names:
            continue
        if spec.rules_page and (ROOT / spec.rules_page).exists():
            print(f"{spec.rules_page}: {'rewritten' if write_rules_page(spec) else 'unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
