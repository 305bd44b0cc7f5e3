"""Jamming Traffic's rules: numba kernels over one game record, each rule in the module named for
what it holds. ``layout.py`` holds the record and configuration dtypes, the limits,
the vocabulary (the names render and play need) and the observation and action
layouts. Nothing here imports ``strategy/``; ``verbs.py`` gathers the verbs.

- ``geometry.py``: Where a car may go: the one-way sign, the roundabout, a pushed car's exit
  (J4, J7).
- ``jam_check.py``: Whether a move's jam may be played (J7's last rule, J8's full loops),
  for the masks.
- ``jams.py``: Jams (J6-J8): the one chain walk, the real jam, endless loops, laps at once,
  stops.
- ``layout.py``: Jamming Traffic's data: limits, constants, the record and config dtypes,
  and the observation and action layouts (plain numpy; the rules that read them are in the
  other modules of this package, see ``docs/rules/jamming_traffic.md``, "Where each rule
  lives").
- ``legality.py``: The legal actions (C3): ``is_legal`` for one action, ``legal_mask`` for
  all of them.
- ``maps.py``: Jamming Traffic maps (ruling J1): towns with coordinates, roads as town
  pairs.
- ``observe.py``: A seat's observation (C4), written by the observation layout
  (``layout.obs_layout``).
- ``queues.py``: Roads as queues, visits and the win (J2, J5, J9).
- ``tables.py``: Jamming Traffic's configuration record: the options and the map's look-up
  tables.
- ``turns.py``: The turn flow (J3-J5, J9): set-up, dice, placements, moves, the end of a
  turn, and the verbs ``init``, ``step``, ``current_player``, ``is_over``, ``is_truncated``.
"""
