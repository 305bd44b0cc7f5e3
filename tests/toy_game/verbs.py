"""The verbs, gathered: the one module the spec loader registers (``verbs=`` in
``spec.py``). Nothing else imports it: code that needs a rule imports it from the module
that defines it."""

from __future__ import annotations

from toy_game.rules.layout import RECORD_DTYPE
from toy_game.rules.legality import is_legal, legal_mask
from toy_game.rules.observe import observe
from toy_game.rules.turns import current_player, init, is_over, step
from toy_game.strategy.greedy import rollout_move as greedy

__all__ = ["RECORD_DTYPE", "init", "step", "is_legal", "legal_mask", "observe",
           "current_player", "is_over", "greedy"]
