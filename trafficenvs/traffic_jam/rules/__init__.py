"""Traffic Jam's rules: numba kernels over one game record, each rule in the module named for
what it holds. ``layout.py`` holds the record and configuration dtypes, the limits,
the vocabulary (the names render and play need) and the observation and action
layouts. Nothing here imports ``strategy/``; ``verbs.py`` gathers the verbs.

- ``deal.py``: Chance in Traffic Jam: the shuffled deck, the deal (T3) and the reshuffle
  (T4).
- ``deck.py``: Traffic Jam decks as data (ruling T2): loading, validation, and card kinds.
- ``determinize.py``: Traffic Jam's determinization: redraw every card a seat cannot see
  (OpenSpiel's ``resample_from_infostate``, as the ``determinize`` verb of
  ``core/verbs.py``).
- ``layout.py``: Traffic Jam's data: limits, card vocabulary, the record and config dtypes,
  and the observation and action layouts.
- ``legality.py``: Traffic Jam's legal actions (C3): ``is_legal`` for one action,
  ``legal_mask`` for all.
- ``observe.py``: A seat's observation of Traffic Jam (C4), written by the layout
  ``layout.obs_layout``.
- ``scoring.py``: Traffic Jam's assessment and joy (T2, T5): road sizes, which cars score,
  the end.
- ``stages.py``: Compiled verbs of Traffic Jam's parallel env (``parallel.py``): one call
  per stage.
- ``turns.py``: Traffic Jam's turn flow (T3-T6, C1-C3): set-up, the seat to move, a
  decision, the end.
"""
