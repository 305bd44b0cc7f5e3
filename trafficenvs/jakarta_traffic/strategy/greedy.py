"""The rule-based ("greedy") Jakarta Traffic player: a courier's route planner.

Strategy (also on docs/rules/jakarta_traffic.md, "Strategy of the greedy player"):

* **Reading the board.** The observation holds the whole open position. Each cell's
  four "path end leads to the spot" bits describe its tile fully (K2: 2 or 4 ends go
  to the spot, the others are joined to each other), so the player rebuilds the
  maze's links from them and follows paths through the fixed frame (K3) itself.
* **Distances in turns.** For every cell it computes where one turn can take a moped
  from there: the ends of its four paths, plus every end reachable after one honk that
  changes a tile *on* one of those paths (each distinct rotation, and the spare tile
  swapped in at each rotation; only tiles that may be honked: no stack, moped or
  marker). A breadth-first search over these one-turn sets gives the number of turns
  from any cell to any other (capped; far cells count as 7 turns).
* **Route value.** The worth of ending this turn on a cell is what happens there
  (deliver every matching order: the stars it pays plus 2 for each star token, less 1
  energy; accept an order if that pays; a charging station refills the battery; a
  chat gives energy and a speech-bubble bonus but also charges the competitors
  there), plus the best *route* that follows: up to three stops chosen among
  delivering a held order at its current address, picking up an order it may accept
  and a charging station, each gain discounted by 0.75 per turn it takes to get there,
  and no stop without the energy it costs. Energy counts 1 point (the final score),
  so a stop that only spends energy is worth taking only when it leads to stars.
* **The turn.** In the honk phase it tries every drive after every honk that changes
  a tile on its own paths (and no honk at all) and takes the best end cell, a honk
  only when it is strictly better than not honking. If its drive needs no honk and the
  next player could reach an address it may deliver to next turn, it spends the honk on
  a tile off its own drive's path that cuts the next player off from every such address
  (the marker then lies on that tile, so it cannot be turned back at once; K5). A
  detour is weighed by its exact dice odds (a diagonal cell 3/36, any other 1/36, and
  the best cell 1/36 for a double 6); it is taken only when it beats every drive. A
  double 6 parks on the best cell. Deliveries are always made; an order is accepted
  when the route says so.
* **The end.** On its last turn (the end triggered by someone else) it only counts
  final points: stars, energy, bubbles, no new orders. A turn that would trigger the
  end itself (a fourth star) is worth a bonus of 10 when its final score would then
  lead and a malus of 10 when it would trail, so it does not end a game it loses.
* **Stacks.** The rest of an accepted stack goes on the vacant pick-up tile that the
  nearest competitor needs the most turns to reach.

Why rebuild from the observation instead of running the game's kernels: the
observation does not say which tile (of several of one shape) lies where, so a record
cannot be rebuilt exactly; the paths, however, follow from the four bits, and the
frame is the game's own :func:`~trafficenvs.jakarta_traffic.rules.tiles.exit_table`. The
tests check the traced drives against the game's own drive mask and moves.

The code: ``reading.py`` reads the observation, ``maze.py`` rebuilds the
maze and the distances in turns, ``route.py`` values ending a turn on a cell
(the route planner); this module takes the decision.

It reads only what the interface gives (observation, mask), ties are broken by the
first best in a fixed order (no randomness; ``seed`` is accepted for the common
signature), and the whole batch is one compiled loop over the rows.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from trafficenvs.core.game import Game
from trafficenvs.core.jit import kernel
from trafficenvs.core.player import GreedyPlayer
from trafficenvs.core.threads import batched
from trafficenvs.jakarta_traffic.rules.board import follow
from trafficenvs.jakarta_traffic.rules.layout import (
    A_ACCEPT,
    A_CELL,
    A_DECLINE,
    A_DELIVER,
    A_DETOUR,
    A_DRIVE,
    ACCEPT,
    CELL_ENDS,
    CELL_F,
    DELIVER,
    DETOUR_PICK,
    HONK,
    MAX_PLAYERS,
    NCELLS,
    NTYPES,
    OB_CELLS,
    OB_PLAYERS,
    PL_COL,
    PL_ENERGY,
    PL_HOLDS,
    PL_ROW,
    PL_SPARE_CHARGING,
    PL_SPARE_ENDS,
    PLACE,
    PLAYER_F,
    SIDE,
)
from trafficenvs.jakarta_traffic.rules.observe import observe
from trafficenvs.jakarta_traffic.rules.tiles import exit_table
from trafficenvs.jakarta_traffic.rules.turns import current_player
from trafficenvs.jakarta_traffic.strategy.maze import (
    honk_action,
    honk_options,
    nearest_chargers,
    reach_one,
    set_links,
    trace_cells,
    turn_distances,
)
from trafficenvs.jakarta_traffic.strategy.reading import (
    bits4,
    cell_of,
    read_cells,
    read_me,
    read_opponents,
    read_orders,
    read_phase,
)
from trafficenvs.jakarta_traffic.strategy.route import ROUTE_STOPS, stop_value

# Every action number below comes from the game's action layout (``layout.py``); the
# observation is read in ``reading.py``.

#: one decision's work arrays, each ``(B, *shape)`` so a decision allocates nothing
#: (:func:`make_scratch`; plain arrays: a record's nested arrays index measurably slower)
SCRATCH_FIELDS = (
    ("bits", np.int64, (NCELLS,)), ("kind", np.int64, (NCELLS,)),
    ("building", np.uint8, (NCELLS,)), ("links", np.int64, (NCELLS, 4)),
    ("others", np.int64, (NCELLS,)), ("stack_type", np.int64, (NCELLS,)),
    ("opp_pos", np.int64, (MAX_PLAYERS,)), ("opp_energy", np.float64, (NCELLS,)),
    ("addr", np.int64, (NTYPES,)), ("pay", np.float64, (NTYPES,)),
    ("stack", np.int64, (NTYPES,)), ("reach", np.int64, (NCELLS,)),
    ("first", np.int64, (4, NCELLS)), ("dist", np.int64, (NCELLS, NCELLS)),
    ("sk", np.int64, (5, ROUTE_STOPS + 1)), ("value", np.float64, (ROUTE_STOPS + 1,)),
    ("charger_dist", np.int64, (NCELLS,)), ("charger_at", np.int64, (NCELLS,)),
    ("worth", np.float64, (NCELLS,)),
)


def make_scratch(b: int) -> tuple[np.ndarray, ...]:
    """The work arrays of :data:`SCRATCH_FIELDS` for ``b`` rows."""
    return tuple(np.zeros((b, *shape), dt) for _, dt, shape in SCRATCH_FIELDS)


@kernel
def _decide(ob, mask, cfg, exit_to, sc, i):
    """The greedy action for one decision (observation row ``ob``, mask row ``mask``;
    ``cfg`` gives the player count and the observation's offsets; row ``i`` of the work
    arrays ``sc``, :func:`make_scratch`)."""
    n = cfg.num_players
    P = cfg.ob_players
    phase = read_phase(ob, cfg.ob_phase)
    if phase == DELIVER:  # always deliver (stars, never worth keeping an order)
        return _deliver_action(mask)
    last_turn = ob[cfg.ob_end_triggered] > 0
    (s_bits, s_kind, s_building, s_links, s_others, s_stack_type, s_opp_pos, s_opp_energy,
     s_addr, s_pay, s_stack, s_reach, s_first, s_dist, s_sk, s_value, s_charger_dist,
     s_charger_at, s_worth) = sc
    bits, kind, building, links = s_bits[i], s_kind[i], s_building[i], s_links[i]
    others, stack_type = s_others[i], s_stack_type[i]
    blocked = read_cells(ob, cfg.ob_cells, bits, kind, building, links, others, stack_type)
    me, energy, bubbles, nstars, points, passengers, held, spare = read_me(ob, P)  # C4
    has_spare = spare != 0
    opp_pos, opp_energy = s_opp_pos[i], s_opp_energy[i]
    opp_best = read_opponents(ob, P, n, opp_pos, opp_energy)
    addr, pay, stack = s_addr[i], s_pay[i], s_stack[i]
    read_orders(ob, cfg.ob_types, stack_type, addr, pay, stack)
    dist, first = s_dist[i], s_first[i]
    turn_distances(links, bits, exit_to, blocked, building, spare, has_spare, s_reach[i],
                    first, dist)
    sk = s_sk[i]
    value = s_value[i]
    charger_at = s_charger_at[i]
    nearest_chargers(kind, dist, s_charger_dist[i], charger_at)
    mine = (energy, bubbles, held, nstars, points, passengers)
    plan = (dist, addr, pay, stack, charger_at, sk, value)

    if phase == PLACE:  # the rest of the stack: where competitors need longest
        return A_CELL + _stack_place(mask, n, opp_pos, dist)

    if phase == ACCEPT:
        _, acc = stop_value(me, kind[me], -1, n, mine, 0, 0.0, stack_type[me], opp_best,
                             last_turn, plan)
        return A_ACCEPT if acc else A_DECLINE

    # honk, drive or a double-6 pick: the worth of ending the turn on each cell
    ctx = (n, me, mine, others, opp_energy, stack_type, opp_best, last_turn, plan)
    worth = s_worth[i]
    _cell_worths(kind, ctx, worth)
    top = _first_best(worth)
    if phase == DETOUR_PICK:
        return A_CELL + top
    best_a, best_v = _best_drive(mask, links, exit_to, me, worth, top)
    if phase != HONK:
        return best_a
    spare_kind = 1 if ob[P + PL_SPARE_CHARGING] else 0
    best_a = _best_honk(mask, links, bits, exit_to, building, blocked, me, spare, has_spare,
                        spare_kind, worth, best_a, best_v, ctx)
    if best_a < A_DRIVE or best_a == A_DETOUR:
        return best_a
    # no honk needed for my drive: spend it to keep the next player from a delivery
    return _block_next(ob, mask, P + PLAYER_F, exit_to, links, bits, building, blocked, addr,
                       me, spare, best_a - A_DRIVE, first)


@kernel
def _deliver_action(mask):
    """The first delivery the mask allows (declining only when there is none)."""
    for t in range(NTYPES):
        if mask[A_DELIVER + t]:
            return A_DELIVER + t
    return A_DECLINE


@kernel
def _worth_at(x, kind_x, ctx):
    """:func:`~trafficenvs.jakarta_traffic.strategy.route.stop_value` of ending the turn
    on ``x`` as a tile of kind ``kind_x``; ``ctx`` = ``(n, start, mine, others,
    opp_energy, stack_type, opp_best, last_turn, plan)`` (per-cell arrays indexed here)."""
    n, start, mine, others, opp_energy, stack_type, opp_best, last_turn, plan = ctx
    w, _ = stop_value(x, kind_x, start, n, mine, others[x], opp_energy[x], stack_type[x],
                       opp_best, last_turn, plan)
    return w


@kernel
def _cell_worths(kind, ctx, worth):
    """The worth of ending the turn on each cell as it lies (:func:`_worth_at`), into
    ``worth``."""
    for x in range(NCELLS):
        worth[x] = _worth_at(x, kind[x], ctx)


@kernel
def _first_best(worth):
    """The first cell of the highest worth."""
    top = 0
    for x in range(1, NCELLS):
        if worth[x] > worth[top]:
            top = x
    return top


@kernel
def _detour_worth(worth, top):
    """A detour's expected worth: column die, row die; a 6 copies the other (a diagonal
    cell 3/36, any other 1/36); a double 6 picks the best cell ``top`` (1/36)."""
    detour = worth[top] / 36.0
    for x in range(NCELLS):
        r = x // SIDE
        c = x % SIDE
        detour += worth[x] * (3.0 if r == c else 1.0) / 36.0
    return detour


@kernel
def _best_drive(mask, links, exit_to, me, worth, top):
    """The best of a detour and the drives the mask allows, without a honk:
    ``(action, worth)``, the detour unless a drive is strictly better."""
    best_a = A_DETOUR
    best_v = _detour_worth(worth, top)
    for e in range(4):
        if mask[A_DRIVE + e]:
            d = follow(links, exit_to, me, e)
            if d >= 0 and worth[d] > best_v:
                best_v = worth[d]
                best_a = A_DRIVE + e
    return best_a, best_v


@kernel
def _best_honk(mask, links, bits, exit_to, building, blocked, me, spare, has_spare, spare_kind,
               worth, best_a, best_v, ctx):
    """``best_a`` (worth ``best_v``), or the first honk on a tile of my own paths whose
    best drive after it (:func:`_drive_after_honk`) is strictly better. ``links`` is left
    as it was."""
    path = np.int64(0)
    for e in range(4):
        path |= trace_cells(links, exit_to, me, e)
    cand = path & ~blocked & ~(np.int64(1) << me)
    for y in range(NCELLS):
        if (cand >> y) & 1 == 0:
            continue
        b0 = bits[y]
        opts, count = honk_options(b0, spare, has_spare and not building[y])
        for i in range(count):
            o = (opts >> (7 * i + 4)) & 7
            nb = (opts >> (7 * i)) & 15
            a = honk_action(y, o)
            if not mask[a]:
                continue
            set_links(links, y, nb)
            v = _drive_after_honk(links, exit_to, me, y, o, worth, spare_kind, ctx)
            if v > best_v:
                best_v = v
                best_a = a
            set_links(links, y, b0)
    return best_a


@kernel
def _drive_after_honk(links, exit_to, me, y, o, worth, spare_kind, ctx):
    """The best worth of a drive from ``me`` once tile ``y`` is honked by option ``o``
    (``links`` already changed; -inf if no drive leaves the turn's start): a cell's
    worth as it lies, but the swapped-in spare (of kind ``spare_kind``) revalued."""
    best = -np.inf
    for e in range(4):
        d = follow(links, exit_to, me, e)
        if d < 0 or d == me:
            continue
        v = worth[d]
        if d == y and o >= 3:  # the swapped-in tile is a different kind
            v = _worth_at(d, spare_kind, ctx)
        if v > best:
            best = v
    return best


@kernel
def _stack_place(mask, n, opp_pos, dist):
    """The cell for the rest of a stack: the legal one the nearest competitor needs the
    most turns to reach (then the most steps)."""
    best = -1
    best_v = -1e9
    for x in range(NCELLS):
        if not mask[A_CELL + x]:
            continue
        near = 1e9
        for j in range(1, n):
            dj = dist[opp_pos[j], x] * 100.0 + abs(opp_pos[j] // SIDE - x // SIDE) \
                + abs(opp_pos[j] % SIDE - x % SIDE)
            if dj < near:
                near = dj
        if near > best_v:
            best_v = near
            best = x
    return best


@kernel
def _block_next(ob, mask, o, exit_to, links, bits, building, blocked, addr, me, spare, e0,
                first):
    """The honk (or, if none helps, the plain drive out of edge ``e0``) that leaves the
    next player (observed at ``ob[o:]``, C4) unable to reach any address it could
    deliver to next turn; ``spare`` is my spare's spot bits.

    Only honks off my own drive's path count (my drive stays as chosen); the marker then
    lies on the honked tile, so the next player cannot turn it back (K5)."""
    q = cell_of(ob, o + PL_ROW, o + PL_COL)
    threat = np.int64(0)
    if ob[o + PL_ENERGY] > 0:
        for t in range(NTYPES):
            if ob[o + PL_HOLDS + t] and addr[t] != q:
                threat |= np.int64(1) << addr[t]
    if threat == 0:
        return A_DRIVE + e0
    qspare = bits4(ob, o + PL_SPARE_ENDS)
    if reach_one(links, bits, exit_to, blocked, building, qspare, qspare != 0, first,
                  q) & threat == 0:
        return A_DRIVE + e0
    mine = trace_cells(links, exit_to, me, e0)
    dest = follow(links, exit_to, me, e0)
    after = (blocked & ~(np.int64(1) << me)) | (np.int64(1) << dest)
    cand = ~mine & ~blocked & ~(np.int64(1) << me)
    for y in range(NCELLS):
        if (cand >> y) & 1 == 0:
            continue
        b0 = bits[y]
        opts, count = honk_options(b0, spare, spare != 0 and not building[y])
        for i in range(count):
            a = honk_action(y, (opts >> (7 * i + 4)) & 7)
            if not mask[a]:
                continue
            nb = (opts >> (7 * i)) & 15
            bits[y] = nb
            set_links(links, y, nb)
            r = reach_one(links, bits, exit_to, after | (np.int64(1) << y), building, qspare,
                           qspare != 0, first, q)
            bits[y] = b0
            set_links(links, y, b0)
            if r & threat == 0:
                return a
    return A_DRIVE + e0


@njit(cache=True)  # allocates (not a kernel: tests and the reader's helper)
def _drive_targets(obs, exit_to, out):
    for i in range(obs.shape[0]):
        links = np.zeros((NCELLS, 4), np.int64)
        for x in range(NCELLS):
            set_links(links, x, bits4(obs[i], OB_CELLS + x * CELL_F + CELL_ENDS))
        me = cell_of(obs[i], OB_PLAYERS + PL_ROW, OB_PLAYERS + PL_COL)
        for e in range(4):
            out[i, e] = follow(links, exit_to, me, e)


def drive_targets(observation: np.ndarray) -> np.ndarray:
    """``(B, 4)``: where each exit of the observer's tile parks, as this player traces
    the paths from the observation (-1: no path; the turn's start is not excluded).
    Exposed so tests can hold the player's reading of the maze against the game's."""
    obs = np.ascontiguousarray(np.atleast_2d(observation), np.uint8)
    out = np.zeros((obs.shape[0], 4), np.int64)
    _drive_targets(obs, exit_table().astype(np.int64), out)
    return out


@batched
@njit(cache=True, parallel=True)
def greedy_batch(obs, mask, cfg, exit_to, sc, out):
    """The greedy action of every row (one compiled loop over the batch); ``cfg`` is
    the game's config array (player count, observation offsets), ``sc`` the work
    arrays (:func:`make_scratch`, a row per batch row)."""
    for i in prange(obs.shape[0]):
        out[i] = _decide(obs[i], mask[i], cfg[0], exit_to, sc, i)


@kernel
def rollout_move(rec, cfg, mask, gs, i):
    """The ``greedy`` verb (``core/verbs.py``): this player's move for the seat to move in
    ``rec`` (a search's determinized copy), taken like every other decision of the player
    through that seat's observation (written into row ``i`` of the scratch), so it is
    exactly :meth:`JakartaTrafficGreedy.act`'s choice; ``gs``:
    :meth:`JakartaTrafficGreedy.rollout_scratch`."""
    ob = gs[0]
    observe(rec, cfg, current_player(rec, cfg), ob[i])
    return _decide(ob[i], mask, cfg, gs[1], gs[2:], i)


class JakartaTrafficGreedy(GreedyPlayer):
    """The rule-based Jakarta Traffic player (strategy in the module docstring)."""

    game_name = "jakarta_traffic"

    def __init__(self, game: Game, seed: int | None = None, name: str = "greedy"):
        super().__init__(game, seed, name)
        self.exit_to = exit_table().astype(np.int64)
        self._sc = make_scratch(0)

    def rollout_scratch(self, b: int) -> tuple[np.ndarray, ...]:
        """Scratch for :func:`rollout_move` in ``b`` rows (search agents' rollouts): an
        observation row per row, the frame's exit table, then the work arrays
        (:func:`make_scratch`) of ``b`` rows: one flat tuple (numba's parallel loops take
        no nested tuples)."""
        return (np.zeros((b, self.game.obs_dim), self.game.obs_dtype), self.exit_to,
                *make_scratch(b))

    def _act(self, obs: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
        if self._sc[0].shape[0] < obs.shape[0]:
            self._sc = make_scratch(obs.shape[0])
        greedy_batch(obs, mask, self.game.cfg, self.exit_to, self._sc, out)
