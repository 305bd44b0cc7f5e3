"""Jamming Traffic's state dicts: a record to a JSON-ready dict and back.

The dict names cars by seat (``"n"`` a neutral car), roads and towns by index,
die faces by number or ``"roundabout"`` / ``"one-way"`` and the roundabout's
direction by ``"ccw"`` / ``"cw"``; :func:`from_dict` checks that the position can
arise in play (two cars a road, one car a seat, held roads, a paused jam that loops
and can rest, visits that have not yet won, moves left within the dice, J2-J9) and
says which key breaks a rule. Kernels trust the record, so a position they cannot
reach is refused here: a crafted one (a road of 5 fed again, a "paused jam" that
does not loop) made the stop write cars past a road's queue. The Game's ``to_dict``
and ``from_dict`` call these.
The names of faces and directions are here too (the Game's options use them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from trafficenvs.core.statedict import (
    StateDictError,
    StateDictTypeError,
    StateReader,
    read_choice,
    read_int,
    read_int_list,
    read_list,
)
from trafficenvs.jamming_traffic.rules.geometry import pushed_exit
from trafficenvs.jamming_traffic.rules.jams import loop_towns_of
from trafficenvs.jamming_traffic.rules.layout import (
    MOVE,
    ONE_WAY,
    OVER,
    PHASES,
    PLACE,
    QLEN,
    ROUNDABOUT,
    SETUP,
    STOP,
)

if TYPE_CHECKING:
    from trafficenvs.jamming_traffic.game import JammingTrafficGame

FACE_ALIASES = {"roundabout": ROUNDABOUT, "r": ROUNDABOUT, "one-way": ONE_WAY,
                "one_way": ONE_WAY, "oneway": ONE_WAY, "o": ONE_WAY}
DIRECTIONS = ("ccw", "cw")

STATE_KEYS = {
    "game", "num_players", "map", "phase", "to_move", "turn", "moves", "rng", "homes",
    "roads", "held", "visited", "roundabout", "one_way", "dice", "moves_left", "pending",
    "forced_dice", "jam", "winner",
}
INT32_MAX = 2**31 - 1  # the record's turn and move counters are int32
OPTIONAL_KEYS = {"moves", "rng", "held", "forced_dice", "jam", "winner", "turn", "map",
                 "dice", "moves_left", "pending", "roundabout", "one_way", "visited"}


def _bad(key: str, message: str) -> StateDictError:
    """A state dict error naming ``key`` (the message says what is wrong)."""
    return StateDictError(f"state dict: {key}: {message}")


def face_value(face: int | str) -> int:
    """A die face as the kernels store it: a number 1..60 or ROUNDABOUT / ONE_WAY."""
    if isinstance(face, str):
        key = face.strip().lower()
        if key in FACE_ALIASES:
            return FACE_ALIASES[key]
        if key.isdigit():
            face = int(key)
        else:
            raise ValueError(f"unknown die face {face!r}: a number or 'roundabout'/'one-way'")
    if isinstance(face, bool) or not isinstance(face, (int, np.integer)) or not 1 <= face <= 60:
        raise ValueError(f"a number face must be an int in 1..60, got {face!r}")
    return int(face)


def face_label(v: int) -> int | str:
    return "roundabout" if v == ROUNDABOUT else ("one-way" if v == ONE_WAY else int(v))


def _car_label(c: int) -> int | str:
    return "n" if c == 0 else int(c) - 1


def to_dict(game: JammingTrafficGame, rec: np.void) -> dict[str, Any]:
    """The state dict of ``rec``, a record of ``game`` (``JammingTrafficGame.to_dict``)."""
    n = game.num_players
    T, R = game.map.num_towns, game.map.num_roads
    phase = PHASES[int(rec["phase"])]
    roads = [[_car_label(int(c)) for c in rec["q"][r][: rec["cnt"][r]]]
             for r in range(R)]
    rb = None
    if rec["rb_town"] >= 0:
        rb = {"town": int(rec["rb_town"]), "direction": DIRECTIONS[int(rec["rb_dir"])]}
    ow = None
    if rec["ow_road"] >= 0:
        r = int(rec["ow_road"])
        ow = {"road": r, "enter_at": int(game.map.roads[r][int(rec["ow_entry"])])}
    pending = []
    if rec["pend_rb"]:
        pending.append("roundabout")
    if rec["pend_ow"]:
        pending.append("one-way")
    forced = None
    if rec["forced"][0] >= 0:
        forced = [face_label(game.faces[int(f)]) for f in rec["forced"]]
    dice = None
    if rec["dice"][0] >= 0:
        dice = [face_label(game.faces[int(f)]) for f in rec["dice"]]
    jam = None
    if phase == "stop":
        jam = {"road": int(rec["js_road"]), "entry_end": int(rec["js_end"])}
    return {
        "game": game.name,
        "num_players": n,
        "map": game.map.name,
        "phase": phase,
        "to_move": int(rec["cur"]),
        "turn": int(rec["turn"]),
        "moves": int(rec["moves"]),
        "rng": game.rng_to_dict(rec),
        "homes": [int(h) for h in rec["home"][:n]],
        "roads": roads,
        "held": [r for r in range(R) if rec["held"][r]],
        "visited": [[t for t in range(T) if int(rec["visited"][p]) >> t & 1]
                    for p in range(n)],
        "roundabout": rb,
        "one_way": ow,
        "dice": dice,
        "moves_left": int(rec["moves_left"]),
        "pending": pending,
        "forced_dice": forced,
        "jam": jam,
        "winner": [p for p in range(n) if rec["winner"][p]],
    }


def face_index(game: JammingTrafficGame, f: Any, path: str = "dice") -> int:
    """The index among ``game.faces`` of the face ``f`` at key ``path`` (how the record
    stores a die): a number (an ``int``) or a special face's name, no other type."""
    if isinstance(f, bool) or not isinstance(f, (int, str)) or (
            isinstance(f, str) and f.strip().lower() not in FACE_ALIASES):
        raise StateDictTypeError(f"state dict: {path} must be a die face (an int or "
                                 f"'roundabout' / 'one-way'), got {f!r}")
    try:
        v = face_value(f)
    except ValueError as e:
        raise _bad(path, str(e)) from None
    if v not in game.faces:
        raise _bad(path, f"face {f!r} is not a face of this game's dice "
                   f"{[face_label(x) for x in game.faces]}")
    return game.faces.index(v)


def from_dict(game: JammingTrafficGame, state: dict[str, Any]) -> np.ndarray:
    """One record of ``game`` holding ``state`` (``JammingTrafficGame.from_dict``)."""
    rd = game.state_reader(state, STATE_KEYS, OPTIONAL_KEYS)
    n = game.num_players
    T = game.map.num_towns
    if rd.raw("map", game.map.name) != game.map.name:
        raise _bad("map", f"state is on map {state['map']!r}, this env on {game.map.name!r}")
    phase = rd.raw("phase")
    if phase not in PHASES:
        raise _bad("phase", f"phase must be one of {PHASES}, got {phase!r}")
    ph = PHASES.index(phase)
    cur = rd.int("to_move", 0, n - 1)
    recs = game.new_records(1)
    r = recs[0]
    game.load_rng(r, state)
    r["moves"] = rd.int("moves", 0, INT32_MAX, default=0)
    turn = rd.int("turn", 0, game.max_turns or INT32_MAX, default=0)
    if game.max_turns and turn == game.max_turns and ph != OVER:
        raise _bad("turn", f"the game is cut off after max_turns={game.max_turns} turns, "
                   "so at that turn it is over")
    r["turn"] = turn
    r["phase"] = ph
    r["cur"] = cur
    r["home"][:] = -1
    r["home"][:n] = rd.int_list("homes", 0, T - 1, length=n, distinct=True)
    _read_roads(game, rd, r, ph, cur)
    visited = rd.list("visited", n, default=[[] for _ in range(n)])
    for p, towns in enumerate(visited):
        r["visited"][p] = sum({1 << t for t in read_int_list(towns, f"visited[{p}]", 0, T - 1)})
    _read_pieces(game, rd, r)
    _read_turn(game, rd, r, ph, phase)
    _read_jam_and_winner(game, rd, r, ph)
    _check_visits(game, r, ph, turn)
    if ph == SETUP:
        _check_setup(game, r, turn)
    return recs


def _read_roads(game: JammingTrafficGame, rd: StateReader, r: np.void, ph: int, cur: int) -> None:
    """``roads`` and ``held``: the queues, the car count (2 a road) and each seat's
    one car (J2, J3, J8)."""
    n, R = game.num_players, game.map.num_roads
    roads = rd.list("roads", R)
    held = set(rd.int_list("held", 0, R - 1, default=[]))
    r["q"][:] = -1
    r["car_road"][:] = -1
    owned = [0] * n
    total = 0
    for i, cars in enumerate(roads):
        read_list(cars, f"roads[{i}]")
        # mid-jam (a paused endless jam, or a win that cut a jam short) a road may hold
        # 4 unheld, and the one road the last pushed car joined 5 (checked below)
        limit = 5 if ph in (STOP, OVER) else (4 if i in held else 3)
        if len(cars) > limit or (i in held and len(cars) != 4):
            raise _bad(f"roads[{i}]", f"road {i} holds {len(cars)} cars: a road holds at "
                       "most 3, exactly 4 if it is held by an endless jam (listed in 'held')"
                       + ("; mid-jam at most 5" if ph in (STOP, OVER) else ""))
        for j, car in enumerate(cars):
            if car == "n":
                r["q"][i, j] = 0
            else:
                owner = read_int(car, f"roads[{i}][{j}]", 0, n - 1, what="'n' or a seat")
                r["q"][i, j] = owner + 1
                r["car_road"][owner + 1] = i
                owned[owner] += 1
        r["cnt"][i] = len(cars)
        r["held"][i] = i in held
        total += len(cars)
    if total != 2 * R:
        raise _bad("roads", f"the roads hold {total} cars; the game has {2 * R} (2 a road)")
    five = [i for i, cars in enumerate(roads) if len(cars) == 5]
    if len(five) > 1:
        raise _bad("roads", f"roads {five} hold 5 cars: only the road a jam's last pushed "
                   "car joined can (it pushes its far car on before anything else moves)")
    for p in range(n):
        want = 0 if (ph == SETUP and p >= cur) else 1
        if owned[p] != want:
            raise _bad("roads", f"seat {p} has {owned[p]} cars on the roads; at this point "
                       f"it has {want}")

def _read_pieces(game: JammingTrafficGame, rd: StateReader, r: np.void) -> None:
    """``roundabout`` and ``one_way`` (J4)."""
    T, R = game.map.num_towns, game.map.num_roads
    rb = rd.dict("roundabout", ("town", "direction"), default=None)
    r["rb_town"], r["rb_dir"] = -1, 0
    if rb is not None:
        if ROUNDABOUT not in game.faces:
            raise _bad("roundabout", "this game's dice have no roundabout face, so the "
                       "roundabout is never placed")
        r["rb_town"] = read_int(rb["town"], "roundabout.town", 0, T - 1)
        r["rb_dir"] = DIRECTIONS.index(read_choice(rb["direction"], "roundabout.direction",
                                                   DIRECTIONS))
    ow = rd.dict("one_way", ("road", "enter_at"), default=None)
    r["ow_road"], r["ow_entry"] = -1, 0
    if ow is not None:
        if ONE_WAY not in game.faces:
            raise _bad("one_way", "this game's dice have no one-way face, so the one-way "
                       "sign is never placed")
        road = read_int(ow["road"], "one_way.road", 0, R - 1)
        ends = game.map.roads[road]
        r["ow_road"] = road
        r["ow_entry"] = ends.index(read_choice(ow["enter_at"], "one_way.enter_at", ends))

def _read_turn(game: JammingTrafficGame, rd: StateReader, r: np.void, ph: int, phase: str) -> None:
    """``dice``, ``forced_dice``, ``pending`` and ``moves_left`` (J4, J5): the moves
    left are the dice's number faces less the moves made, the placements pending
    those of the dice's special faces not yet made."""
    r["dice"][:] = -1
    r["forced"][:] = -1
    dice = rd.raw("dice", None)
    faces: list[int] = []
    if dice is not None:
        idx = [face_index(game, f, f"dice[{i}]") for i, f in enumerate(read_list(dice, "dice", 2))]
        r["dice"][:] = idx
        faces = [game.faces[i] for i in idx]
    forced = rd.raw("forced_dice", None)
    if forced is not None:  # the next roll (chance control)
        r["forced"][:] = [face_index(game, f, f"forced_dice[{i}]")
                          for i, f in enumerate(read_list(forced, "forced_dice", 2))]
    pending = rd.list("pending", default=[])
    for i, piece in enumerate(pending):
        read_choice(piece, f"pending[{i}]", ("roundabout", "one-way"))
    r["pend_rb"] = "roundabout" in pending
    r["pend_ow"] = "one-way" in pending
    if (ph == PLACE) != bool(pending):
        raise _bad("pending", "placements are pending exactly in the 'place' phase")
    rolled = {"roundabout": ROUNDABOUT in faces, "one-way": ONE_WAY in faces}
    for piece in pending:
        if not rolled[piece]:
            raise _bad("pending", f"a {piece} placement is pending, but the dice {dice} "
                       f"show no {piece} face")
    if ph in (PLACE, MOVE, STOP) and dice is None:
        raise _bad("dice", f"the '{phase}' phase needs the dice of this turn")
    if ph == SETUP and dice is not None:
        raise _bad("dice", "the dice are first rolled when set-up is over")
    numbers = sum(v for v in faces if v > 0)
    # what each phase allows (J4, J5): place before any move, a move used by a stop
    lo, hi, why = {
        SETUP: (0, 0, "no dice are rolled during set-up"),
        PLACE: (numbers, numbers, "no car moves before the placements"),
        MOVE: (1, numbers, "a player in the 'move' phase has a move left, at most the "
                 "dice's numbers"),
        STOP: (0, numbers - 1, "the move that started the paused jam was one of the "
                 "dice's numbers"),
        OVER: (0, numbers, "at most the dice's numbers"),
    }[ph]
    ml = rd.raw("moves_left", 0)
    read_int(ml, "moves_left")
    if not lo <= ml <= hi:
        raise _bad("moves_left", f"moves_left must be in {lo}..{hi} with the dice {dice} in "
                   f"the '{phase}' phase ({why}), got {ml!r}")
    r["moves_left"] = ml


def _read_jam_and_winner(game: JammingTrafficGame, rd: StateReader, r: np.void, ph: int) -> None:
    """``jam`` (the paused endless jam, J8) and ``winner`` (J9); roads over 3."""
    n, R = game.num_players, game.map.num_roads
    r["js_road"], r["js_end"] = -1, -1
    r["loop_towns"] = 0
    if ph == STOP:
        jam = rd.dict("jam", ("road", "entry_end"), default=None)
        if jam is None:
            raise _bad("jam", "the 'stop' phase needs jam = {'road': r, 'entry_end': 0|1}")
        jr = read_int(jam["road"], "jam.road", 0, R - 1)
        je = read_int(jam["entry_end"], "jam.entry_end", 0, 1)
        r["js_road"], r["js_end"] = jr, je
        _check_paused_jam(game, r, jr, je)
        r["loop_towns"] = loop_towns_of(r, game.cfg[0], jr, je)
    elif rd.raw("jam", None) is not None:
        raise _bad("jam", "jam is only set in the 'stop' phase")
    winner = rd.int_list("winner", 0, n - 1, default=[])
    if ph == OVER and not winner:  # cut off at max_turns, between moves
        stray = [i for i in range(R) if r["cnt"][i] > 3 and not r["held"][i]]
        if stray:
            raise _bad("held", f"roads {stray} hold more than 3 cars without being held: "
                       "only a win ends the game mid-jam")
    if ph not in (STOP, OVER):  # a win ends the game at once, even mid-jam
        stray = [i for i in range(R) if r["cnt"][i] > 3 and not r["held"][i]]
        if stray:
            raise _bad("held", f"roads {stray} hold more than 3 cars without being held")
    r["winner"][:] = 0
    if ph == OVER:
        if len(winner) > 1:
            raise _bad("winner", f"winner must list at most one seat in 0..{n - 1}")
        if not winner and (not game.max_turns or r["turn"] != game.max_turns):
            raise _bad("winner", "a game over without a winner was cut off at max_turns "
                       f"(turn == max_turns, here {game.max_turns}); got turn "
                       f"{int(r['turn'])}")
        for p in winner:
            r["winner"][p] = 1
    elif winner:
        raise _bad("winner", "winner is only set when the game is over")


def _check_paused_jam(game: JammingTrafficGame, r: np.void, jr: int, je: int) -> None:
    """A paused endless jam (J8) as play leaves it: its road ``jr`` just took the last
    pushed car (so it holds 4, or 5 if it was held at 4, and is not held), and the
    pushes from there form a loop that returns to this state, every road on it full
    when the pushed car joins it (else the jam would have ended there), with a road
    left at exactly 4 somewhere on it (else the stop could never rest: such a *full
    loop* is an illegal move). One lap is played on the counts: that is what the stop
    plays, so the stop then never puts a sixth car on a road nor takes a car off an
    empty one."""
    R = game.map.num_roads
    cfg = game.cfg[0]
    cnt = [int(c) for c in r["cnt"][:R]]
    if r["held"][jr]:
        raise _bad("jam", f"the paused jam's road {jr} just took a pushed car, so it is not "
                   "held (remove it from 'held')")
    if cnt[jr] not in (4, 5):
        raise _bad("jam", f"the paused jam's road {jr} holds {cnt[jr]} cars; it is over-full "
                   "(4, or 5 when it was held)")
    over = [i for i in range(R) if i != jr and cnt[i] > 4]
    if over:
        raise _bad("roads", f"roads {over} hold 5 cars: only the paused jam's road can")
    h0 = 2 * jr + je
    rr, ee, rests = jr, je, False
    for _ in range(2 * R + 1):  # a lap passes each (road, entry end) state once
        ex = int(pushed_exit(r, cfg, rr, 1 - ee))
        if ex < 0:
            raise _bad("jam", f"the car pushed off road {rr} has no exit: a jam that "
                       "dead-ends is never endless, so it is not paused")
        nr = ex >> 1
        cnt[rr] -= 1
        cnt[nr] += 1
        if cnt[nr] <= 3:
            raise _bad("jam", f"the jam from road {jr} (entered at end {je}) ends on road "
                       f"{nr}, which has room: it does not loop, so it is not paused")
        rests = rests or cnt[nr] == 4
        rr, ee = nr, ex & 1
        if 2 * rr + ee == h0:
            break
    else:
        raise _bad("jam", f"the pushes from road {jr} (entered at end {je}) do not come back "
                   "to it: a paused jam is on its loop")
    if not rests:
        raise _bad("jam", "every road of the paused jam's loop was held, so no stop can "
                   "leave one at 4 (a full loop: the move that would start it is illegal)")


def _check_visits(game: JammingTrafficGame, r: np.void, ph: int, turn: int) -> None:
    """``visited`` against ``homes`` and the phase (J9): a seat that has passed every town
    but its home has won, at once, and the game is over with it the winner; nobody
    else has (a push visits one town for one car)."""
    n = game.num_players
    every = (1 << game.map.num_towns) - 1
    done = []
    for p in range(n):
        need = every & ~(1 << int(r["home"][p]))
        if int(r["visited"][p]) & need == need:
            done.append(p)
    winners = [p for p in range(n) if r["winner"][p]]
    if ph != OVER and done:
        raise _bad(f"visited[{done[0]}]", f"seat {done[0]} has visited every town but its "
                   f"home {int(r['home'][done[0]])}: it has won, so the game is over "
                   f"(phase 'over', winner [{done[0]}])")
    if ph == OVER and done != winners:
        raise _bad("winner", f"the winner is the seat that has visited every town but its "
                   f"home: {done}, got {winners}")
    if ph == SETUP and any(r["visited"][:n]):
        raise _bad("visited", "no car has moved during set-up, so nothing is visited")


def _check_setup(game: JammingTrafficGame, r: np.void, turn: int) -> None:
    """Set-up (J3) as play leaves it: no piece, no held road, turn 0, and each seat that
    has chosen has its car at its home end of a road at its home."""
    R = game.map.num_roads
    for key, bad in (("turn", turn != 0), ("roundabout", r["rb_town"] >= 0),
                     ("one_way", r["ow_road"] >= 0), ("held", any(r["held"][:R]))):
        if bad:
            raise _bad(key, "during set-up no turn has been played: turn 0, no roundabout, "
                       "no one-way sign, no held road")
    # (the cars per road are left free: tests draw set-up positions with uneven roads
    # to ask the greedy player's choice, and the kernels need only the totals)
    for p in range(int(r["cur"])):
        road = int(r["car_road"][p + 1])
        home = int(r["home"][p])
        ends = game.map.roads[road]
        if home not in ends:
            raise _bad("roads", f"seat {p}'s car is on road {road} {ends}, not at its home "
                       f"town {home}: a seat starts on a road at its home")
        x = 0 if ends[0] == home else int(r["cnt"][road]) - 1
        if int(r["q"][road][x]) != p + 1:
            raise _bad("roads", f"seat {p}'s car must be at the home end of road {road} "
                       f"(the neutral car there became its car)")


def check_invariants(game: JammingTrafficGame, rec: np.void) -> None:
    """Assert what holds in every reachable record (cars conserved, queues within their
    roads, one car per seat, the phase's own conditions); the conformance tests run it
    after every step."""
    n = game.num_players
    R = game.map.num_roads
    cnt = rec["cnt"][:R].astype(int)
    assert cnt.sum() == 2 * R, f"cars not conserved: {cnt.sum()} on the roads, not {2 * R}"
    q = rec["q"][:R]
    ph = int(rec["phase"])
    for r in range(R):
        # a road never holds more than its queue: a longer one would overwrite the
        # next road's queue in the record
        assert 0 <= cnt[r] <= QLEN, f"road {r} holds {cnt[r]} cars, its queue {QLEN}"
        assert (q[r][: cnt[r]] >= 0).all() and (q[r][cnt[r]:] == -1).all(), f"queue {r}"
        if rec["held"][r]:
            assert cnt[r] == 4, f"held road {r} holds {cnt[r]} cars"
        elif ph in (STOP, OVER):  # a paused jam, or one cut short by the win
            assert cnt[r] <= 5, f"road {r} holds {cnt[r]} cars"
        else:
            assert cnt[r] <= 3, f"road {r} holds {cnt[r]} cars and is not held"
    cars = q[q > 0]
    assert rec["car_road"][0] == -1, f"car_road[0] is {rec['car_road'][0]}, not -1"
    for p in range(n):
        want = 0 if (ph == SETUP and p >= rec["cur"]) else 1
        assert (cars == p + 1).sum() == want, f"seat {p} has {(cars == p + 1).sum()} cars"
        on = np.flatnonzero((q == p + 1).any(axis=1))
        road = int(on[0]) if len(on) else -1
        assert rec["car_road"][p + 1] == road, \
            f"car_road[{p + 1}] is {rec['car_road'][p + 1]}, the car is on road {road}"
    assert 0 <= rec["cur"] < n
    if ph == OVER:
        assert rec["winner"][:n].sum() <= 1
    if ph == MOVE:
        assert rec["moves_left"] > 0
    assert len(set(rec["home"][:n].tolist())) == n
