"""Jamming Traffic's strategy: the rule-based ("greedy") player and what it and the searches
use, under public names. It reads the rules (``rules/``), never the other way round.

- ``estimate.py``: The greedy player's race estimate: how far each seat is from winning.
- ``evaluate.py``: Jamming Traffic's ``evaluate`` verb: who is ahead in the race, for search
  cut-offs.
- ``greedy.py``: The rule-based ("greedy") Jamming Traffic player: each decision simulated,
  then judged.
- ``position.py``: The greedy player's view of a position: the game record rebuilt from an
  observation.
"""
