"""Jakarta Traffic's strategy: the rule-based ("greedy") player and what it and the searches
use, under public names. It reads the rules (``rules/``), never the other way round.

- ``evaluate.py``: Jakarta Traffic's ``evaluate`` verb: who is ahead, for search cut-offs.
- ``greedy.py``: The rule-based ("greedy") Jakarta Traffic player: a courier's route
  planner.
- ``maze.py``: The greedy Jakarta Traffic player's maze: paths, honks and distances in
  turns.
- ``plan.py``: Jakarta Traffic read as a route planner reads it: the features of the
  ``plan`` network.
- ``reading.py``: The greedy Jakarta Traffic player's reading of one observation row (C4,
  v1: uint8 entries, rows, columns and categories one-hot).
- ``route.py``: The greedy Jakarta Traffic player's valuation: the worth of ending a turn on
  a cell.
"""
