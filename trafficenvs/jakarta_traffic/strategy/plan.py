"""Jakarta Traffic read as a route planner reads it: the features of the ``plan`` network.

A flat network over the observation learned only 4-10% of the greedy player's honks
(the learned player's weak spot): a honk's worth is where *my drives* end once that
tile is turned or swapped, which takes tracing paths through the changed tile, and a
cell's worth depends on how many turns the next stops are from it. Both are what a person at the
table works out by following the streets with a finger; this module works them out
from the observation alone (the greedy player's maze reader, ``reading.py`` and
``maze.py``), for :mod:`trafficenvs.agents.plan_policy`:

- ``ends[a, e]`` for every action ``a`` of the honk and drive phases (rotate, swap,
  drive, detour: :data:`PLAN_ACTIONS`), the cell where my drive out of edge ``e`` would
  park after ``a`` (:data:`NO_DRIVE` for none: no path, a path back to my tile, or
  the action is no drive; a drive ``175 + e`` has only ``ends[a, 0]``). A honk of a
  tile off my paths leaves my drives as they are.
- ``cells[x]``, :data:`CELL_FEATURES` per cell: the turns from my tile to ``x`` and
  from the nearest competitor's, what a delivery there would pay me now, whether I
  could take the order stack there, its kind (charging, building), the turns from
  ``x`` to my nearest delivery address, to the nearest stack I could take and to the
  nearest other charging station, the competitors' mopeds there and whether I am
  there, and what a delivery there would pay the next player (the competitor a honk of
  mine can cut off: the greedy player spends free honks on that). Turns count a honk
  per turn on the moped's paths (``maze``); a cell further than 5 turns counts
  7. Everything is an exact small integer (:data:`CELL_BOUNDS`).
- ``next_ends[a, e]``: the same as ``ends`` for the next player's moped: where its
  drive out of edge ``e`` would park after my action ``a`` (a honk changes its drives
  only when it turns a tile on its paths; drives and the detour leave them as the
  board lies). A honk that turns the next player's way to its delivery into a dead
  end is worth as much as one that opens mine.

Nothing here is hidden information: the features are functions of the observation
(tested against a plain-Python trace of the state). The work arrays are rows of a
scratch (:func:`make_scratch`), so a batch allocates nothing per row.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from trafficenvs.core.jit import kernel
from trafficenvs.core.threads import batched
from trafficenvs.jakarta_traffic.rules.board import follow
from trafficenvs.jakarta_traffic.rules.layout import (
    A_CELL,
    A_DETOUR,
    A_DRIVE,
    MAX_PLAYERS,
    NCELLS,
    NTYPES,
    PL_HOLDS,
    PLAYER_F,
)
from trafficenvs.jakarta_traffic.strategy.greedy import SCRATCH_FIELDS as GREEDY_FIELDS
from trafficenvs.jakarta_traffic.strategy.maze import (
    FAR,
    honk_action,
    rotl,
    set_links,
    trace_cells,
    turn_distances,
)
from trafficenvs.jakarta_traffic.strategy.reading import (
    read_cells,
    read_me,
    read_opponents,
    read_orders,
)
from trafficenvs.jakarta_traffic.strategy.route import may_accept, nbits

#: actions with drive ends: rotate (0-74), swap (75-174), drive (175-178), detour (179)
PLAN_ACTIONS = A_DETOUR + 1
#: the "cell" of no drive in ``ends``
NO_DRIVE = NCELLS
#: per-cell features, in this order
CELL_FEATURE_NAMES = ("my_turns", "their_turns", "deliver_pays", "can_take_stack",
                      "charging", "building", "turns_to_delivery", "turns_to_stack",
                      "turns_to_charging", "others_here", "me_here", "next_pays")
CELL_FEATURES = len(CELL_FEATURE_NAMES)
#: each feature's exact largest value (the pays: two orders of the top slots, 7 + 5)
CELL_BOUNDS = np.array([FAR, FAR, 12, 1, 1, 1, FAR, FAR, FAR, MAX_PLAYERS - 1, 1, 12],
                       np.float32)

#: the work arrays of a row: the greedy player's arrays for reading the board and
#: counting turns (its first 14, in its order), since the reading is its own
SCRATCH_FIELDS = GREEDY_FIELDS[:14]


def make_scratch(b: int) -> tuple[np.ndarray, ...]:
    """The work arrays of :data:`SCRATCH_FIELDS` for ``b`` rows."""
    return tuple(np.zeros((b, *shape), dt) for _, dt, shape in SCRATCH_FIELDS)


@kernel
def _drive_ends(links, exit_to, me, ends, a):
    """``ends[a, e]``: where a drive from cell ``me`` out of edge ``e`` parks on
    ``links``."""
    for e in range(4):
        d = follow(links, exit_to, me, e)
        ends[a, e] = d if d >= 0 and d != me else NO_DRIVE


@kernel
def _ends_after_honks(links, bits, exit_to, q, spare, ends):
    """``ends[a, e]`` of the moped on ``q``: its drives as the board lies for every
    action, then on the board after each honk of a tile on its paths (rotations, and
    the honking player's ``spare`` laid there; every option of the tile, also one that
    repeats another or leaves the tile as it is: its action still exists, the mask says
    whether it is legal). A honk of a tile off its paths leaves its drives as they are.
    ``links`` is left as it was."""
    _drive_ends(links, exit_to, q, ends, 0)
    for a in range(1, PLAN_ACTIONS):
        for e in range(4):
            ends[a, e] = ends[0, e]
    path = np.int64(0)
    for e in range(4):
        path |= trace_cells(links, exit_to, q, e)
    cand = path & ~(np.int64(1) << q)
    for y in range(NCELLS):
        if (cand >> y) & 1 == 0:
            continue
        b0 = bits[y]
        for o in range(7):
            nb = rotl(b0, o + 1) if o < 3 else rotl(spare, o - 3)
            set_links(links, y, nb)
            _drive_ends(links, exit_to, q, ends, honk_action(y, o))
        set_links(links, y, b0)


@kernel
def _plan_row(ob, cfg, sc, i, ends, cells, next_ends):
    """Row ``i``: the plan features of observation ``ob`` (module docstring); the paths
    follow the game's own frame (``cfg.exit_to``)."""
    exit_to = cfg.exit_to
    (s_bits, s_kind, s_building, s_links, s_others, s_stack_type, s_opp_pos, s_opp_energy,
     s_addr, s_pay, s_stack, s_reach, s_first, s_dist) = sc
    bits, kind, building, links = s_bits[i], s_kind[i], s_building[i], s_links[i]
    others, stack_type = s_others[i], s_stack_type[i]
    n = cfg.num_players
    P = cfg.ob_players
    blocked = read_cells(ob, cfg.ob_cells, bits, kind, building, links, others, stack_type)
    me, _, _, _, _, _, held, spare = read_me(ob, P)
    opp_pos = s_opp_pos[i]
    read_opponents(ob, P, n, opp_pos, s_opp_energy[i])
    addr, pay, stack = s_addr[i], s_pay[i], s_stack[i]
    read_orders(ob, cfg.ob_types, stack_type, addr, pay, stack)
    # ends: my drives after every honk; a drive goes out of its own edge only, the
    # detour is no drive
    _ends_after_honks(links, bits, exit_to, me, spare, ends)
    for e in range(4):  # the detour's row still holds the drives as the board lies
        ends[A_DRIVE + e, 0] = ends[A_DETOUR, e]
        for k in range(1, 4):
            ends[A_DRIVE + e, k] = NO_DRIVE
    for k in range(4):
        ends[A_DETOUR, k] = NO_DRIVE
    # the next player's drives after each of my actions (drives leave the board as it is)
    _ends_after_honks(links, bits, exit_to, opp_pos[1], spare, next_ends)
    # cells: turns and the next stops from each cell
    dist = s_dist[i]
    turn_distances(links, bits, exit_to, blocked, building, spare, spare != 0, s_reach[i],
                    s_first[i], dist)
    nheld = nbits(held)
    free = 0  # the types I could take (K7's limits; energy aside)
    for t in range(NTYPES):
        free |= np.int64(may_accept(held, nheld, 1, t)) << t
    o_next = P + PLAYER_F  # the next player's block (C4: seats from mine on)
    for x in range(NCELLS):
        next_pays = 0.0
        for t in range(NTYPES):
            if ob[o_next + PL_HOLDS + t] and addr[t] == x:
                next_pays += pay[t]
        near = FAR
        for j in range(1, n):
            near = min(near, dist[opp_pos[j], x])
        pays = 0.0
        to_delivery = FAR
        to_stack = FAR
        for t in range(NTYPES):
            if (held >> t) & 1:
                to_delivery = min(to_delivery, dist[x, addr[t]])
                if addr[t] == x:
                    pays += pay[t]
            elif stack[t] >= 0 and (free >> t) & 1:
                to_stack = min(to_stack, dist[x, stack[t]])
        to_charging = FAR
        for c in range(NCELLS):
            if kind[c] == 1 and c != x:
                to_charging = min(to_charging, dist[x, c])
        cells[x, 0] = dist[me, x]
        cells[x, 1] = near
        cells[x, 2] = np.uint8(pays)
        cells[x, 3] = stack_type[x] >= 0 and (free >> stack_type[x]) & 1
        cells[x, 4] = kind[x] == 1
        cells[x, 5] = kind[x] == 2
        cells[x, 6] = to_delivery
        cells[x, 7] = to_stack
        cells[x, 8] = to_charging
        cells[x, 9] = others[x]
        cells[x, 10] = x == me
        cells[x, 11] = np.uint8(next_pays)


@batched
@njit(cache=True, parallel=True)
def _plan_batch(obs, cfg, sc, ends, cells, next_ends):
    for i in prange(obs.shape[0]):
        _plan_row(obs[i], cfg[0], sc, i, ends[i], cells[i], next_ends[i])


class PlanReader:
    """Computes the plan features of observation batches of one configuration.

    ``threads`` (default 1): numba threads for a batch. Inside a torch training loop one
    thread is what pays (torch has the cores; ``agents/README.md``, "Where the cores pay").
    """

    #: the sizes a network over the features needs (``agents/plan_policy.py``)
    plan_actions = PLAN_ACTIONS
    no_drive = NO_DRIVE
    n_cells = NCELLS
    cell_features = CELL_FEATURES
    cell_bounds = CELL_BOUNDS
    #: the action of cell x (a double-6 pick, where the rest of a stack goes) is ``a_cell + x``
    a_cell = A_CELL

    def __init__(self, cfg: np.ndarray, obs_dim: int, threads: int | None = 1):
        self.cfg = cfg
        self.obs_dim = obs_dim
        self.threads = threads
        self._sc = make_scratch(0)

    def __call__(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(ends, cells, next_ends)`` of a ``(B, obs_dim)`` uint8 batch:
        ``(B, PLAN_ACTIONS, 4)``, ``(B, NCELLS, CELL_FEATURES)`` and
        ``(B, PLAN_ACTIONS, 4)``, all uint8."""
        obs = np.asarray(obs)
        if obs.dtype != np.uint8 or obs.ndim != 2 or obs.shape[1] != self.obs_dim:
            raise ValueError(f"plan features need uint8 observations of shape (B, "
                             f"{self.obs_dim}), got {obs.dtype} {obs.shape}")
        obs = np.ascontiguousarray(obs)
        b = obs.shape[0]
        if self._sc[0].shape[0] < b:
            self._sc = make_scratch(b)
        ends = np.empty((b, PLAN_ACTIONS, 4), np.uint8)
        cells = np.empty((b, NCELLS, CELL_FEATURES), np.uint8)
        next_ends = np.empty((b, PLAN_ACTIONS, 4), np.uint8)
        _plan_batch(obs, self.cfg, self._sc, ends, cells, next_ends, threads=self.threads)
        return ends, cells, next_ends


__all__ = ["CELL_BOUNDS", "CELL_FEATURES", "CELL_FEATURE_NAMES", "NO_DRIVE", "PLAN_ACTIONS",
           "PlanReader", "make_scratch"]
