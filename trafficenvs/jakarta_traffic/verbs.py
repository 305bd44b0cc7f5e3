"""Jakarta Traffic's verbs, gathered: the one module the spec loader registers.

``core.spec.GameSpec.load`` hands this module to ``core.verbs.register_module``, which
registers every function named after a verb for records of ``RECORD_DTYPE``; the batch
drivers (CPU and GPU) and the searches then reach them through the verbs' dispatch.
Nothing else imports this module: code that needs a rule imports it from the module
that defines it, under ``rules/`` (the rules, K1-K9 and C1-C4) or ``strategy/`` (the
rule-based player, its maze and routes, the search estimate and the plan features).
"""

from __future__ import annotations

from trafficenvs.jakarta_traffic.rules.layout import RECORD_DTYPE
from trafficenvs.jakarta_traffic.rules.legality import is_legal, legal_mask
from trafficenvs.jakarta_traffic.rules.observe import observe
from trafficenvs.jakarta_traffic.rules.setup import init
from trafficenvs.jakarta_traffic.rules.turns import (
    current_player,
    is_over,
    is_truncated,
    step,
)
from trafficenvs.jakarta_traffic.strategy.evaluate import evaluate
from trafficenvs.jakarta_traffic.strategy.greedy import rollout_move as greedy

__all__ = ["RECORD_DTYPE", "init", "step", "is_legal", "legal_mask", "observe",
           "current_player", "is_over", "is_truncated", "evaluate", "greedy"]
