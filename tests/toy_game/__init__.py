"""Toll Gate: the template game (a tiny one) that shows every file a game needs.

A queue of cars waits at a toll gate (its length drawn by the game's generator);
players in turn wave 1, 2 or 3 cars through; whoever waves the last car through
wins. To add a game, copy this folder to ``trafficenvs/<your_game>/`` and follow
``docs/adding_a_game.md``; the tests build this copy in place
(``tests/test_template_game.py``) and run the conformance suite on it.
"""

from __future__ import annotations

from toy_game.spec import SPEC

__all__ = ["SPEC"]
