"""Traffic Jam's state dicts (a record to a JSON-ready dict of card names and back) and
the invariants of a record.

``from_dict`` checks every value and the rules' consistency (hand sizes at this point of
the trip, cards conserved across deck, discard, roads, hands, victory piles and hidden
picks) before it writes a record, so a loaded state is one the rules could have reached;
``check_invariants`` is what the conformance tests assert after every step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from trafficenvs.core.statedict import StateDictError, fail, read_bool, read_dict, read_list
from trafficenvs.traffic_jam.rules.layout import HAND_SIZE, MAX_KINDS, ROUNDS, TIMES, TRIPS

if TYPE_CHECKING:
    from trafficenvs.traffic_jam.game import TrafficJamGame

STATE_KEYS = {
    "game", "num_players", "round", "trip", "stage", "to_move", "over", "moves", "rng",
    "deck", "discard", "hands", "roads", "firsts", "victory", "pending", "last_trip",
}
#: ``firsts`` (v1) may be left out in stage 0 only (nothing revealed yet); ``last_trip``'s
#: ``firsts`` and ``surprises`` (v1) may be left out: unknown, shown as no card
OPTIONAL_KEYS = {"moves", "rng", "last_trip", "over", "firsts"}
LAST_TRIP_KEYS = ("jam", "cars", "scored", "firsts", "surprises")
LAST_TRIP_OPTIONAL = ("firsts", "surprises")


def expected_hand_size(rnd: int, trip: int, stage: int, to_move: int, seat: int, over: bool) -> int:
    """Cards a seat holds at a decision point (6 dealt a round, 3 played a trip)."""
    if over:
        return 0
    n = HAND_SIZE - 3 * trip
    if stage == 1:
        n -= 1
    if seat < to_move:
        n -= 1 if stage == 0 else 2
    return n


def _names(game: TrafficJamGame, counts: np.ndarray) -> list[str]:
    out: list[str] = []
    for k in range(game.num_kinds):
        out += [game.deck.kinds[k].name] * int(counts[k])
    return out

def _opt(game: TrafficJamGame, k: int) -> str | None:
    return None if k < 0 else game.deck.kinds[k].name

def to_dict(game: TrafficJamGame, rec: np.void) -> dict[str, Any]:
    n = game.num_players
    times = TIMES
    return {
        "game": game.name,
        "num_players": n,
        "round": int(rec["round"]),
        "trip": int(rec["trip"]),
        "stage": int(rec["stage"]),
        "to_move": int(rec["cur"]),
        "over": bool(rec["over"]),
        "moves": int(rec["moves"]),
        "rng": game.rng_to_dict(rec),
        "deck": [game.deck.kinds[k].name for k in rec["deck"][: rec["deck_n"]]],
        "discard": _names(game, rec["discard"]),
        "hands": [_names(game, rec["hand"][p]) for p in range(n)],
        "roads": _names(game, rec["road"]),
        "firsts": [_opt(game, rec["shown1"][p]) for p in range(n)],
        "victory": [_names(game, rec["victory"][p]) for p in range(n)],
        "pending": [
            {
                "first": _opt(game, rec["pick1"][p]),
                "car": _opt(game, rec["pick_car"][p]),
                "surprise": _opt(game, rec["pick_sur"][p]),
            }
            for p in range(n)
        ],
        "last_trip": {
            "jam": {
                times[t]: (None if rec["last_jam"][t] < 0 else bool(rec["last_jam"][t]))
                for t in range(3)
            },
            "cars": [_opt(game, rec["last_car"][p]) for p in range(n)],
            "firsts": [_opt(game, rec["last_first"][p]) for p in range(n)],
            "surprises": [_opt(game, rec["last_sur"][p]) for p in range(n)],
            "scored": [
                None if rec["last_scored"][p] < 0 else bool(rec["last_scored"][p])
                for p in range(n)
            ],
        },
    }

def _counts(game: TrafficJamGame, names: Any, what: str) -> np.ndarray:
    """Cards per kind from a list of card names (``what`` names the key)."""
    out = np.zeros(MAX_KINDS, np.int64)
    for i, name in enumerate(read_list(names, what)):
        out[_kind(game, name, f"{what}[{i}]")] += 1
    return out

def _kind(game: TrafficJamGame, name: Any, what: str) -> int:
    """The kind of the card called ``name`` (the deck's own error if unknown)."""
    if not isinstance(name, str):
        raise fail(what, "a card name", name)
    return game.deck.index(name)

def _opt_kind(game: TrafficJamGame, name: Any, what: str) -> int:
    return -1 if name is None else _kind(game, name, what)

def from_dict(game: TrafficJamGame, state: dict[str, Any]) -> np.ndarray:
    st = game.state_reader(state, STATE_KEYS, OPTIONAL_KEYS)
    n = game.num_players
    rnd = st.int("round", 0, ROUNDS - 1)
    trip = st.int("trip", 0, TRIPS - 1)
    stage = st.int("stage", 0, 1)
    cur = st.int("to_move", 0, n - 1)
    over = st.bool("over", default=False)
    if over and (rnd, trip, stage, cur) != (2, 1, 0, 0):
        raise fail("over", "True only with round 2, trip 1, stage 0, to_move 0", over)
    hands, victory, pending = (st.list(key, n) for key in ("hands", "victory", "pending"))

    recs = game.new_records(1)
    r = recs[0]
    game.load_rng(r, state)
    r["moves"] = st.int("moves", 0, 2**31 - 1, default=0)
    r["round"], r["trip"], r["stage"], r["cur"], r["over"] = rnd, trip, stage, cur, over

    deck = st.list("deck", max_length=game.deck.size)
    total = np.zeros(MAX_KINDS, np.int64)
    for i, name in enumerate(deck):
        r["deck"][i] = _kind(game, name, f"deck[{i}]")
        total[r["deck"][i]] += 1
    r["deck_n"] = len(deck)
    disc = _counts(game, state["discard"], "discard")
    r["discard"][:] = disc
    r["discard_n"] = disc.sum()
    road = _counts(game, state["roads"], "roads")
    r["road"][:] = road
    total += disc + road
    trips_done = 6 if over else 2 * rnd + trip
    for p in range(n):
        h = _counts(game, hands[p], f"hands[{p}]")
        want = expected_hand_size(rnd, trip, stage, cur, p, over)
        if h.sum() != want:
            raise StateDictError(f"state dict: hands[{p}] holds {h.sum()} cards; at this "
                                 f"point it holds {want}")
        r["hand"][p] = h
        r["hand_n"][p] = h.sum()
        v = _counts(game, victory[p], f"victory[{p}]")
        if v.sum() > trips_done:
            raise StateDictError(f"state dict: victory[{p}] has {v.sum()} cards after "
                                 f"{trips_done} trips")
        r["victory"][p] = v
        r["vcount"][p] = v.sum()
        r["joy"][p] = sum(int(v[k]) * c.joy for k, c in enumerate(game.deck.kinds))
        total += h + v
    r["vtotal"][:] = r["victory"][:n].sum(axis=0)

    on_road = 0 if stage == 0 else n
    if road.sum() != on_road:
        raise StateDictError(f"state dict: roads hold {road.sum()} cards; at stage {stage} "
                             f"they hold {on_road}")
    _load_firsts(game, r, st.raw("firsts", None), road, stage, over)
    _load_pending(game, r, pending, stage, cur, over, total)
    _check_conserved(game, total)
    _load_last_trip(game, r, st.dict("last_trip", LAST_TRIP_KEYS, LAST_TRIP_OPTIONAL,
                                    default=None))
    if over:
        joy, cnt = r["joy"][:n], r["vcount"][:n]
        best = max(zip(joy, cnt))
        r["winner"][:n] = [(a, b) == best for a, b in zip(joy, cnt)]
    return recs

def _load_firsts(game: TrafficJamGame, r: np.void, firsts: Any, road: np.ndarray, stage: int,
                 over: bool) -> None:
    """Who revealed which stage-1 card this trip: in stage 1 one card per seat, the
    cards on the roads; in stage 0 none (the key may then be left out)."""
    n = game.num_players
    r["shown1"][:] = -1
    if firsts is None:
        if stage == 1 and not over:
            raise StateDictError(
                "state dict: firsts: in stage 1 give the stage-1 card each seat revealed "
                "(a list of one card name per seat, the cards on the roads); state dicts "
                "of traffic_jam-v0 did not store it")
        return
    names = read_list(firsts, "firsts", n)
    shown = [_opt_kind(game, name, f"firsts[{p}]") for p, name in enumerate(names)]
    if stage == 0 or over:
        if any(k >= 0 for k in shown):
            raise fail("firsts", "all null in stage 0 (nothing revealed yet)", firsts)
        return
    if any(k < 0 for k in shown):
        raise fail("firsts", "one card per seat in stage 1", firsts)
    counts = np.bincount(shown, minlength=MAX_KINDS)
    if not np.array_equal(counts, road):
        raise fail("firsts", "the cards on the roads (roads), one per seat", firsts)
    r["shown1"][:n] = shown

def _load_pending(game: TrafficJamGame, r: np.void, pending: list, stage: int, cur: int, over: bool,
                  total: np.ndarray) -> None:
    """The hidden picks of the seats that chose before ``cur`` this stage."""
    for p, pend in enumerate(pending):
        pend = read_dict(pend, f"pending[{p}]", ("first", "car", "surprise"))
        chose = p < cur and not over
        want_first = chose and stage == 0
        want_pair = chose and stage == 1
        has = {key: pend[key] is not None for key in pend}
        if (has["first"], has["car"], has["surprise"]) != (want_first, want_pair, want_pair):
            raise fail(f"pending[{p}]", f"the picks of a seat at stage {stage} with "
                       f"to_move {cur}", pend)
        for field, key in (("pick1", "first"), ("pick_car", "car"), ("pick_sur", "surprise")):
            k = _opt_kind(game, pend[key], f"pending[{p}].{key}")
            r[field][p] = k
            if k >= 0:
                total[k] += 1

def _check_conserved(game: TrafficJamGame, total: np.ndarray) -> None:
    comp = np.zeros(MAX_KINDS, np.int64)
    comp[: game.num_kinds] = game.deck.counts
    if not np.array_equal(total, comp):
        diff = {game.deck.kinds[k].name: int(total[k] - comp[k])
                for k in range(game.num_kinds) if total[k] != comp[k]}
        raise StateDictError(f"state dict: cards are not conserved (extra(+)/missing(-) "
                             f"per card: {diff})")

def _load_last_trip(game: TrafficJamGame, r: np.void, last: dict[str, Any] | None) -> None:
    """What the last trip's assessment showed (roads jammed, cars, who scored)."""
    n = game.num_players
    for field in ("last_jam", "last_car", "last_first", "last_sur", "last_scored"):
        r[field][:] = -1
    if last is None:
        return
    jam = read_dict(last["jam"], "last_trip.jam", TIMES, optional=TIMES)
    cars = read_list(last["cars"], "last_trip.cars", n)
    scored = read_list(last["scored"], "last_trip.scored", n)
    for t, tname in enumerate(TIMES):
        j = jam.get(tname)
        r["last_jam"][t] = -1 if j is None else int(read_bool(j, f"last_trip.jam.{tname}"))
    for key, field in (("firsts", "last_first"), ("surprises", "last_sur")):
        if key in last:  # v1; older state dicts: unknown, shown as no card
            names = read_list(last[key], f"last_trip.{key}", n)
            for p in range(n):
                r[field][p] = _opt_kind(game, names[p], f"last_trip.{key}[{p}]")
    for p in range(n):
        r["last_car"][p] = _opt_kind(game, cars[p], f"last_trip.cars[{p}]")
        s = scored[p]
        r["last_scored"][p] = -1 if s is None else int(read_bool(s, f"last_trip.scored[{p}]"))

def check_invariants(game: TrafficJamGame, rec: np.void) -> None:
    n = game.num_players
    kk = game.num_kinds
    total = np.zeros(kk, np.int64)
    for k in rec["deck"][: rec["deck_n"]]:
        assert k < kk, "deck holds an unknown card"
        total[k] += 1
    i64 = np.int64
    total += rec["discard"][:kk].astype(i64) + rec["road"][:kk].astype(i64)
    total += rec["hand"][:n, :kk].sum(0, dtype=i64) + rec["victory"][:n, :kk].sum(0, dtype=i64)
    for f in ("pick1", "pick_car", "pick_sur"):
        for k in rec[f][:n]:
            if k >= 0:
                total[k] += 1
    assert np.array_equal(total, game.deck.counts), f"cards not conserved: {total}"
    assert rec["discard_n"] == rec["discard"].sum(), "discard count"
    assert np.array_equal(rec["hand_n"][:n], rec["hand"][:n].sum(1)), "hand counts"
    assert np.array_equal(rec["vcount"][:n], rec["victory"][:n].sum(1)), "victory counts"
    assert np.array_equal(rec["vtotal"], rec["victory"].sum(0)), "victory totals"
    joys = np.array([c.joy for c in game.deck.kinds])
    assert np.array_equal(rec["joy"][:n], rec["victory"][:n, :kk].astype(i64) @ joys), "joy"
    cur, over = int(rec["cur"]), bool(rec["over"])
    assert 0 <= cur < n
    for p in range(n):
        want = expected_hand_size(rec["round"], rec["trip"], rec["stage"], cur, p, over)
        assert rec["hand_n"][p] == want, f"seat {p} holds {rec['hand_n'][p]} cards, not {want}"
    assert rec["road"].sum() == (n if rec["stage"] == 1 else 0), "road cards"
    shown = rec["shown1"][:n]
    if rec["stage"] == 1:
        assert (shown >= 0).all(), "a seat's stage-1 card not shown"
        assert np.array_equal(np.bincount(shown, minlength=MAX_KINDS), rec["road"]), \
            "stage-1 cards shown are not the roads"
    else:
        assert (shown < 0).all(), "stage-1 cards shown before the reveal"
    assert rec["vcount"][:n].max() <= 6
