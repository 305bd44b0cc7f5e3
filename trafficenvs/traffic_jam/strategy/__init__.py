"""Traffic Jam's strategy: the rule-based ("greedy") player and what it and the searches
use, under public names. It reads the rules (``rules/``), never the other way round.

- ``greedy.py``: The rule-based ("greedy") Traffic Jam player: a one-trip look-ahead on the
  odds.
"""
