"""Jamming Traffic's verbs, gathered for the drivers (``core.verbs.register_module``).

The rules (J1-J9 of ``docs/rules/jamming_traffic.md``, whose "Where each rule lives"
table names each ruling's function) are in modules named after what they hold:

- ``layout.py``: limits, constants, the record and config dtypes (every field
  explained), the observation and action layouts;
- ``geometry.py``: the one-way sign, the roundabout, a pushed car's exit (J4, J7);
- ``queues.py``: roads as queues, visits and the win (J2, J5, J9);
- ``jams.py``: the one chain walk, the real jam, endless loops and their laps, stops
  (J6-J8);
- ``jam_check.py``: whether a move's jam may be played (J7's last rule, J8's full
  loops);
- ``legality.py``: ``is_legal`` and the masks (C3);
- ``observe.py``: a seat's observation (C4) and its derived features;
- ``evaluate.py``: the race estimate search agents cut their rollouts off with;
- ``turns.py``: set-up, dice, placements, moves and the turn's end; ``init``, ``step``.

Everything tests, the greedy player, the renderer and the Game import from here stays
importable from here.
"""

from __future__ import annotations

from trafficenvs.jamming_traffic.evaluate import evaluate
from trafficenvs.jamming_traffic.geometry import can_enter, can_leave, pushed_exit, rb_exit
from trafficenvs.jamming_traffic.jam_check import (
    dead_end_possible,
    full_loop_possible,
    jam_check_needed,
)
from trafficenvs.jamming_traffic.jams import loop_towns_of, walk_chain
from trafficenvs.jamming_traffic.layout import (
    CFG_DTYPE,
    MAX_DEGREE,
    MAX_FACES,
    MAX_MOVES,
    MAX_PLAYERS,
    MAX_ROADS,
    MAX_TOWNS,
    MOVE,
    ONE_WAY,
    OVER,
    PHASES,
    PLACE,
    QLEN,
    RECORD_DTYPE,
    ROUNDABOUT,
    SETUP,
    STOP,
    obs_dim,
)
from trafficenvs.jamming_traffic.legality import (
    is_legal,
    legal_mask,
    legal_mask_exhaustive,
    mask_without_dead_ends,
)
from trafficenvs.jamming_traffic.observe import observe
from trafficenvs.jamming_traffic.queues import needed_towns
from trafficenvs.jamming_traffic.turns import (
    current_player,
    init,
    is_over,
    is_truncated,
    step,
)
from trafficenvs.jamming_traffic.turns import move as _move  # the tests' reference step

__all__ = [
    # the verbs
    "init", "step", "is_legal", "legal_mask", "observe", "current_player", "is_over",
    "is_truncated", "evaluate", "RECORD_DTYPE",
    # data
    "CFG_DTYPE", "MAX_PLAYERS", "MAX_TOWNS", "MAX_ROADS", "MAX_DEGREE", "MAX_MOVES",
    "MAX_FACES", "QLEN", "ROUNDABOUT", "ONE_WAY", "SETUP", "PLACE", "MOVE", "STOP", "OVER",
    "PHASES", "obs_dim",
    # helpers the tests, the Game and the greedy player use
    "legal_mask_exhaustive", "mask_without_dead_ends", "dead_end_possible",
    "full_loop_possible", "jam_check_needed", "loop_towns_of", "needed_towns", "rb_exit",
    "pushed_exit", "can_enter", "can_leave", "walk_chain", "_move",
]
