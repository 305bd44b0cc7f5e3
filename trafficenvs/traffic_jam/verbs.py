"""Traffic Jam's verbs, gathered: the one module the spec loader registers.

``core.spec.GameSpec.load`` hands this module to ``core.verbs.register_module``, which
registers every function named after a verb for records of ``RECORD_DTYPE``; the batch
drivers (CPU and GPU) and the searches then reach them through the verbs' dispatch.
Nothing else imports this module: code that needs a rule imports it from the module
that defines it, under ``rules/`` (the rules, T1-T6 and C1-C4, and the determinization
of hidden cards) or ``strategy/`` (the rule-based player).
"""

from __future__ import annotations

from trafficenvs.traffic_jam.rules.determinize import determinize
from trafficenvs.traffic_jam.rules.layout import RECORD_DTYPE
from trafficenvs.traffic_jam.rules.legality import is_legal, legal_mask
from trafficenvs.traffic_jam.rules.observe import observe
from trafficenvs.traffic_jam.rules.turns import current_player, init, is_over, step
from trafficenvs.traffic_jam.strategy.greedy import rollout_move as greedy

__all__ = ["RECORD_DTYPE", "init", "step", "is_legal", "legal_mask", "observe",
           "current_player", "is_over", "determinize", "greedy"]
