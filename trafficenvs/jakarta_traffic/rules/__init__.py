"""Jakarta Traffic's rules: numba kernels over one game record, each rule in the module named for
what it holds. ``layout.py`` holds the record and configuration dtypes, the limits,
the vocabulary (the names render and play need) and the observation and action
layouts. Nothing here imports ``strategy/``; ``verbs.py`` gathers the verbs.

- ``board.py``: The board and its paths (K2, K3, K6's tracing): tile links, path tracing,
  the derived caches, and which cells are occupied.
- ``drive.py``: Driving (K6) and what happens where the moped parks (K7): the drive along a
  path, the detour dice, and the encounters in the rulebook's order (marker, chat, charging,
  an order stack, a building).
- ``honk.py``: The honk phase (K5): rotate any street tile, or swap the spare tile in; which
  cells may be honked; the honk part of the mask.
- ``invariants.py``: Rule-level invariants of a record, as a compiled check (tests run it
  after every step): tiles, tokens, stars, limits and the derived caches (K2-K9).
- ``layout.py``: Jakarta Traffic's data: limits and vocabulary, the record and config
  dtypes, and the observation and action layouts (docs/rules/jakarta_traffic.md).
- ``legality.py``: Jakarta Traffic's legal actions (C3): ``is_legal`` for one action,
  ``legal_mask`` for all.
- ``observe.py``: The observation, v1 (C4: everything is open; seats are ordered from the
  observer's), written by the layout of ``layout.obs_layout`` into a ``uint8`` row: every
  category one-hot, every count a small integer within its layout bound (``high``).
- ``orders.py``: Orders (K7's limits and accepting, K8's order board): what a seat may
  accept, which addresses want which orders, what a star pays, accepting, placing the rest
  of a stack, and delivering (stars, then the order board shifts).
- ``rowbytes.py``: Writing (and reading back) several bytes of a ``uint8`` observation row
  at once.
- ``scoring.py``: The end of a turn and of the game (K9): the end trigger, the round, the
  final score and its tie-breaks, and the zero-sum result (C2).
- ``setup.py``: Set-up (K4): dealing the tiles into rows, the order stacks (one per row and
  column), the order board, the mopeds on charging stations, and :func:`init`.
- ``tiles.py``: Jakarta Traffic street tiles as data (rulings K2, K3): loading, validation,
  tables.
- ``turns.py``: Jakarta Traffic's turn flow (K4-K9): the seat to move, a decision, the end.
"""
