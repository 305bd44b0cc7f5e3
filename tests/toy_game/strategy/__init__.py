"""The strategy: the rule-based ("greedy") player, as a batch player reading
observations (``TollGateGreedy``) and as the ``greedy`` verb reading records (the
search agents' rollouts). It reads the rules, never the other way round.

- ``greedy.py``: leave a multiple of 4 cars when it can, else wave one car through.
"""
