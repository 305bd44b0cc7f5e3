"""Traffic Jam as a :class:`~trafficenvs.core.game.Game`: config, names, state dicts."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from trafficenvs.core.files import option_bool
from trafficenvs.core.game import Game
from trafficenvs.core.statedict import StateDictError, fail, read_bool, read_dict, read_list
from trafficenvs.traffic_jam import kernels as K
from trafficenvs.traffic_jam import parallel_kernels  # noqa: F401  (parallel_env_class)
from trafficenvs.traffic_jam.deck import Deck, DeckSpec, check_deck_fits, load_deck
from trafficenvs.traffic_jam.layout import action_layout, obs_layout, size_added
from trafficenvs.traffic_jam.spec import SPEC

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
    n = K.HAND_SIZE - 3 * trip
    if stage == 1:
        n -= 1
    if seat < to_move:
        n -= 1 if stage == 0 else 2
    return n


class TrafficJamGame(Game):
    """Traffic Jam for 2-6 players (T1) with a given deck (T2).

    Options: ``deck`` (None for the shipped default, a CSV/JSON path or a list of
    rows) and ``shaping`` (give each player its joy points as reward when scored,
    on top of the zero-sum result; off by default, C2).
    """

    spec = SPEC
    record_dtype = K.RECORD_DTYPE
    min_players = 2
    max_players = K.MAX_PLAYERS
    #: both stages are simultaneous (T3): the AEC env takes them seat by seat and reveals
    #: only after the last seat, so it is ``is_parallelizable`` (``core/aec.py``) and this
    #: env plays each stage as one step (``trafficenvs.make_parallel``). Its compiled verbs
    #: (``parallel_kernels``) are imported by this module, which is always imported inside
    #: the package's compile cache (``spec.load``): imported first by a user's ``import
    #: trafficenvs.traffic_jam.parallel``, they would be cached beside the source, where an
    #: edit of ``kernels.py`` would not invalidate them
    parallel_env_class: ClassVar[str] = "trafficenvs.traffic_jam.parallel:TrafficJamParallelEnv"

    def __init__(self, num_players: int = 4, deck: DeckSpec = None, shaping: bool = False):
        self.num_players = self.check_num_players(num_players)
        self.deck: Deck = load_deck(deck)
        check_deck_fits(self.deck, self.num_players)
        self.shaping = option_bool(shaping, "shaping")
        self.num_kinds = len(self.deck.kinds)
        self.obs_layout = obs_layout(self.num_players, self.deck.kinds, self.deck.counts)
        self.action_layout = action_layout(self.num_kinds)
        self.num_actions = self.action_layout.size
        self.obs_dim = self.obs_layout.size
        cfg = np.zeros(1, K.CFG_DTYPE)
        c = cfg[0]
        for key, offset in self.obs_layout.offsets().items():
            c[key] = offset
        c["a_pair"] = self.action_layout.field("car_surprise").offset
        c["ob_seat_stride"] = self.obs_layout.field("seats").stride
        for i, card in enumerate(self.deck.kinds):
            c["kind_slot"][i] = card.time * K.NUM_TYPES + card.type
            c["kind_add"][3 * i: 3 * i + 3] = [size_added(card.type, n) for n in range(3)]
        c["num_players"] = self.num_players
        c["num_kinds"] = self.num_kinds
        c["deck_size"] = self.deck.size
        c["shaping"] = self.shaping
        for i, (card, n) in enumerate(zip(self.deck.kinds, self.deck.counts)):
            c["kind_time"][i] = card.time
            c["kind_type"][i] = card.type
            c["kind_cond"][i] = card.condition
            c["kind_joy"][i] = card.joy
            c["kind_count"][i] = n
        self.cfg = cfg

    # -- names -----------------------------------------------------------------
    def decode(self, action: int) -> tuple[int, int | None]:
        """``(card, None)`` for a stage-1 action, ``(car, surprise)`` for stage 2."""
        k = self.num_kinds
        if not 0 <= action < self.num_actions:
            raise ValueError(f"action {action} out of range 0..{self.num_actions - 1}")
        pairs = self.action_layout.field("car_surprise")
        if action < pairs.offset:
            return action, None
        car, sur = divmod(action - pairs.offset, k)
        return car, sur

    def action_name(self, rec: np.void, action: int) -> str:
        a, b = self.decode(int(action))
        kinds = self.deck.kinds
        if b is None:
            return f"play {kinds[a].label}"
        return f"car on {kinds[a].label}, surprise {kinds[b].label}"

    def scores(self, rec: np.void) -> np.ndarray:
        return rec["joy"][: self.num_players].astype(np.float64)

    # -- state dicts -----------------------------------------------------------
    def _names(self, counts: np.ndarray) -> list[str]:
        out: list[str] = []
        for k in range(self.num_kinds):
            out += [self.deck.kinds[k].name] * int(counts[k])
        return out

    def _opt(self, k: int) -> str | None:
        return None if k < 0 else self.deck.kinds[k].name

    def to_dict(self, rec: np.void) -> dict[str, Any]:
        n = self.num_players
        times = K.TIMES
        return {
            "game": self.name,
            "num_players": n,
            "round": int(rec["round"]),
            "trip": int(rec["trip"]),
            "stage": int(rec["stage"]),
            "to_move": int(rec["cur"]),
            "over": bool(rec["over"]),
            "moves": int(rec["moves"]),
            "rng": self.rng_to_dict(rec),
            "deck": [self.deck.kinds[k].name for k in rec["deck"][: rec["deck_n"]]],
            "discard": self._names(rec["discard"]),
            "hands": [self._names(rec["hand"][p]) for p in range(n)],
            "roads": self._names(rec["road"]),
            "firsts": [self._opt(rec["shown1"][p]) for p in range(n)],
            "victory": [self._names(rec["victory"][p]) for p in range(n)],
            "pending": [
                {
                    "first": self._opt(rec["pick1"][p]),
                    "car": self._opt(rec["pick_car"][p]),
                    "surprise": self._opt(rec["pick_sur"][p]),
                }
                for p in range(n)
            ],
            "last_trip": {
                "jam": {
                    times[t]: (None if rec["last_jam"][t] < 0 else bool(rec["last_jam"][t]))
                    for t in range(3)
                },
                "cars": [self._opt(rec["last_car"][p]) for p in range(n)],
                "firsts": [self._opt(rec["last_first"][p]) for p in range(n)],
                "surprises": [self._opt(rec["last_sur"][p]) for p in range(n)],
                "scored": [
                    None if rec["last_scored"][p] < 0 else bool(rec["last_scored"][p])
                    for p in range(n)
                ],
            },
        }

    def _counts(self, names: Any, what: str) -> np.ndarray:
        """Cards per kind from a list of card names (``what`` names the key)."""
        out = np.zeros(K.MAX_KINDS, np.int64)
        for i, name in enumerate(read_list(names, what)):
            out[self._kind(name, f"{what}[{i}]")] += 1
        return out

    def _kind(self, name: Any, what: str) -> int:
        """The kind of the card called ``name`` (the deck's own error if unknown)."""
        if not isinstance(name, str):
            raise fail(what, "a card name", name)
        return self.deck.index(name)

    def _opt_kind(self, name: Any, what: str) -> int:
        return -1 if name is None else self._kind(name, what)

    def from_dict(self, state: dict[str, Any]) -> np.ndarray:
        st = self.state_reader(state, STATE_KEYS, OPTIONAL_KEYS)
        n = self.num_players
        rnd = st.int("round", 0, K.ROUNDS - 1)
        trip = st.int("trip", 0, K.TRIPS - 1)
        stage = st.int("stage", 0, 1)
        cur = st.int("to_move", 0, n - 1)
        over = st.bool("over", default=False)
        if over and (rnd, trip, stage, cur) != (2, 1, 0, 0):
            raise fail("over", "True only with round 2, trip 1, stage 0, to_move 0", over)
        hands, victory, pending = (st.list(key, n) for key in ("hands", "victory", "pending"))

        recs = self.new_records(1)
        r = recs[0]
        self.load_rng(r, state)
        r["moves"] = st.int("moves", 0, 2**31 - 1, default=0)
        r["round"], r["trip"], r["stage"], r["cur"], r["over"] = rnd, trip, stage, cur, over

        deck = st.list("deck", max_length=self.deck.size)
        total = np.zeros(K.MAX_KINDS, np.int64)
        for i, name in enumerate(deck):
            r["deck"][i] = self._kind(name, f"deck[{i}]")
            total[r["deck"][i]] += 1
        r["deck_n"] = len(deck)
        disc = self._counts(state["discard"], "discard")
        r["discard"][:] = disc
        r["discard_n"] = disc.sum()
        road = self._counts(state["roads"], "roads")
        r["road"][:] = road
        total += disc + road
        trips_done = 6 if over else 2 * rnd + trip
        for p in range(n):
            h = self._counts(hands[p], f"hands[{p}]")
            want = expected_hand_size(rnd, trip, stage, cur, p, over)
            if h.sum() != want:
                raise StateDictError(f"state dict: hands[{p}] holds {h.sum()} cards; at this "
                                     f"point it holds {want}")
            r["hand"][p] = h
            r["hand_n"][p] = h.sum()
            v = self._counts(victory[p], f"victory[{p}]")
            if v.sum() > trips_done:
                raise StateDictError(f"state dict: victory[{p}] has {v.sum()} cards after "
                                     f"{trips_done} trips")
            r["victory"][p] = v
            r["vcount"][p] = v.sum()
            r["joy"][p] = sum(int(v[k]) * c.joy for k, c in enumerate(self.deck.kinds))
            total += h + v
        r["vtotal"][:] = r["victory"][:n].sum(axis=0)

        on_road = 0 if stage == 0 else n
        if road.sum() != on_road:
            raise StateDictError(f"state dict: roads hold {road.sum()} cards; at stage {stage} "
                                 f"they hold {on_road}")
        self._load_firsts(r, st.raw("firsts", None), road, stage, over)
        self._load_pending(r, pending, stage, cur, over, total)
        self._check_conserved(total)
        self._load_last_trip(r, st.dict("last_trip", LAST_TRIP_KEYS, LAST_TRIP_OPTIONAL,
                                        default=None))
        if over:
            joy, cnt = r["joy"][:n], r["vcount"][:n]
            best = max(zip(joy, cnt))
            r["winner"][:n] = [(a, b) == best for a, b in zip(joy, cnt)]
        return recs

    def _load_firsts(self, r: np.void, firsts: Any, road: np.ndarray, stage: int,
                     over: bool) -> None:
        """Who revealed which stage-1 card this trip: in stage 1 one card per seat, the
        cards on the roads; in stage 0 none (the key may then be left out)."""
        n = self.num_players
        r["shown1"][:] = -1
        if firsts is None:
            if stage == 1 and not over:
                raise StateDictError(
                    "state dict: firsts: in stage 1 give the stage-1 card each seat revealed "
                    "(a list of one card name per seat, the cards on the roads); state dicts "
                    "of traffic_jam-v0 did not store it")
            return
        names = read_list(firsts, "firsts", n)
        shown = [self._opt_kind(name, f"firsts[{p}]") for p, name in enumerate(names)]
        if stage == 0 or over:
            if any(k >= 0 for k in shown):
                raise fail("firsts", "all null in stage 0 (nothing revealed yet)", firsts)
            return
        if any(k < 0 for k in shown):
            raise fail("firsts", "one card per seat in stage 1", firsts)
        counts = np.bincount(shown, minlength=K.MAX_KINDS)
        if not np.array_equal(counts, road):
            raise fail("firsts", "the cards on the roads (roads), one per seat", firsts)
        r["shown1"][:n] = shown

    def _load_pending(self, r: np.void, pending: list, stage: int, cur: int, over: bool,
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
                k = self._opt_kind(pend[key], f"pending[{p}].{key}")
                r[field][p] = k
                if k >= 0:
                    total[k] += 1

    def _check_conserved(self, total: np.ndarray) -> None:
        comp = np.zeros(K.MAX_KINDS, np.int64)
        comp[: self.num_kinds] = self.deck.counts
        if not np.array_equal(total, comp):
            diff = {self.deck.kinds[k].name: int(total[k] - comp[k])
                    for k in range(self.num_kinds) if total[k] != comp[k]}
            raise StateDictError(f"state dict: cards are not conserved (extra(+)/missing(-) "
                                 f"per card: {diff})")

    def _load_last_trip(self, r: np.void, last: dict[str, Any] | None) -> None:
        """What the last trip's assessment showed (roads jammed, cars, who scored)."""
        n = self.num_players
        for field in ("last_jam", "last_car", "last_first", "last_sur", "last_scored"):
            r[field][:] = -1
        if last is None:
            return
        jam = read_dict(last["jam"], "last_trip.jam", K.TIMES, optional=K.TIMES)
        cars = read_list(last["cars"], "last_trip.cars", n)
        scored = read_list(last["scored"], "last_trip.scored", n)
        for t, tname in enumerate(K.TIMES):
            j = jam.get(tname)
            r["last_jam"][t] = -1 if j is None else int(read_bool(j, f"last_trip.jam.{tname}"))
        for key, field in (("firsts", "last_first"), ("surprises", "last_sur")):
            if key in last:  # v1; older state dicts: unknown, shown as no card
                names = read_list(last[key], f"last_trip.{key}", n)
                for p in range(n):
                    r[field][p] = self._opt_kind(names[p], f"last_trip.{key}[{p}]")
        for p in range(n):
            r["last_car"][p] = self._opt_kind(cars[p], f"last_trip.cars[{p}]")
            s = scored[p]
            r["last_scored"][p] = -1 if s is None else int(read_bool(s, f"last_trip.scored[{p}]"))

    # -- checks ----------------------------------------------------------------
    def check_invariants(self, rec: np.void) -> None:
        n = self.num_players
        kk = self.num_kinds
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
        assert np.array_equal(total, self.deck.counts), f"cards not conserved: {total}"
        assert rec["discard_n"] == rec["discard"].sum(), "discard count"
        assert np.array_equal(rec["hand_n"][:n], rec["hand"][:n].sum(1)), "hand counts"
        assert np.array_equal(rec["vcount"][:n], rec["victory"][:n].sum(1)), "victory counts"
        assert np.array_equal(rec["vtotal"], rec["victory"].sum(0)), "victory totals"
        joys = np.array([c.joy for c in self.deck.kinds])
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
            assert np.array_equal(np.bincount(shown, minlength=K.MAX_KINDS), rec["road"]), \
                "stage-1 cards shown are not the roads"
        else:
            assert (shown < 0).all(), "stage-1 cards shown before the reveal"
        assert rec["vcount"][:n].max() <= 6

    # -- renders ---------------------------------------------------------------
    def render_ansi(self, rec: np.void, seat: int | None) -> str:
        from trafficenvs.traffic_jam.render import render_text

        return render_text(self, rec, seat)

    def render_rgb(self, rec: np.void, seat: int | None) -> np.ndarray:
        from trafficenvs.traffic_jam.render import render_image

        return render_image(self, rec, seat)
