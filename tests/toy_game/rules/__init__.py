"""The rules: numba kernels over one game record, each in the module named for what it
holds (the verbs' contract is in ``trafficenvs/core/verbs.py``).

- ``layout.py``: limits, the record and config dtypes, the observation and action
  layouts (everything render and play need to name);
- ``turns.py``: set-up, the seat to move, a wave, the end;
- ``legality.py``: ``is_legal`` and ``legal_mask``;
- ``observe.py``: a seat's observation, by the layout's offsets.

Nothing here imports ``strategy/``; ``verbs.py`` gathers the verbs.
"""
