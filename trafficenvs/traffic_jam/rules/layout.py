"""Traffic Jam's data: limits, card vocabulary, the record and config dtypes, and the
observation and action layouts.

Cards are handled as *kinds*: the distinct (time, type, joy, condition) rows of the
deck. Identical cards are interchangeable, so a hand, a road or a pile is a vector
of counts per kind (``K`` kinds, at most :data:`MAX_KINDS`), and the deck is an
ordered array of kinds. Everything here is plain numpy; the rules that read it are
in ``deal.py``, ``scoring.py`` and ``kernels.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from trafficenvs.core.layout import Field, Layout, Part, block, bounded

MAX_PLAYERS = 6  # T1
MAX_KINDS = 32  # T2: distinct cards of a deck
MAX_CARDS = 128  # T2: cards of a deck
HAND_SIZE = 6  # T3: cards dealt to each seat a round
ROUNDS = 3  # T3
TRIPS = 2  # T3: trips a round (to the country and back)
NUM_TIMES = 3  # roads: morning, day, night
NUM_TYPES = 8  # van .. ice cream truck

TIMES = ("morning", "day", "night")
TYPES = (
    "van", "cabriolet", "buggy", "truck", "bus", "motorcycle", "hot-air balloon",
    "ice cream truck",
)
CONDITIONS = ("free", "jam", "either")
VAN, CABRIOLET, BUGGY, TRUCK, BUS, MOTORCYCLE, BALLOON, ICE_CREAM = range(8)
FREE, JAM, EITHER = range(3)


def kind_field(name: str, bounds: Sequence[int], meaning: str, size: str = "K") -> Field:
    """A field of one entry per card kind (or road), each with its own bound."""
    return bounded(Field, name, bounds, meaning, size=size)


def size_of_types(c: Sequence[int]) -> int:
    """T2 in plain Python: the size of a road holding ``c[ty]`` cards of each type."""
    size = 2 * c[VAN] + c[CABRIOLET] + c[BUGGY] + c[ICE_CREAM]
    if c[TRUCK]:
        size += 2 * c[TRUCK] - 1
    if c[BUS]:
        size += 1
    if c[MOTORCYCLE] >= 2:
        size += c[MOTORCYCLE]
    return size


def size_added(ty: int, already: int) -> int:
    """T2: the space one more card of type ``ty`` takes on a road already holding
    ``already`` cards of that type."""
    c = [0] * len(TYPES)
    c[ty] = already
    before = size_of_types(c)
    c[ty] += 1
    return size_of_types(c) - before


def size_bounds(num_players: int, kinds: Sequence[Any], counts: Sequence[int]
                ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Exact bounds of the road-size features: per road the largest size its cards can
    reach when observed (the ``N`` stage-1 cards at most, from the deck's copies), and
    per kind the largest size of its road with one more card of that kind."""
    n_types = len(TYPES)
    avail = [[0] * n_types for _ in range(NUM_TIMES)]
    for card, n in zip(kinds, counts):
        avail[card.time][card.type] += int(n)
    best = [0] * NUM_TIMES
    best_with = [[0] * n_types for _ in range(NUM_TIMES)]
    for t in range(NUM_TIMES):
        c = [0] * n_types

        def visit(ty: int, left: int, t: int = t, c: list[int] = c) -> None:
            if ty == n_types:
                best[t] = max(best[t], size_of_types(c))
                for add in range(n_types):
                    c[add] += 1
                    best_with[t][add] = max(best_with[t][add], size_of_types(c))
                    c[add] -= 1
                return
            for m in range(min(left, avail[t][ty]) + 1):
                c[ty] = m
                visit(ty + 1, left - m)
            c[ty] = 0

        visit(0, num_players)
    return tuple(best), tuple(best_with[k.time][k.type] for k in kinds)


def max_score(kinds: Sequence[Any], counts: Sequence[int]) -> int:
    """The largest score a victory pile can hold: the joy of the deck's best
    ``ROUNDS * TRIPS`` cards (a seat takes at most one card a trip)."""
    joys = sorted((k.joy for k, n in zip(kinds, counts) for _ in range(int(n))), reverse=True)
    return sum(joys[: ROUNDS * TRIPS])


#: parts of a seat's repeat in the observation that come before the per-kind parts (their
#: offsets in the repeat; the per-kind parts follow at ``SEAT_HEAD + i * K``)
SEAT_JOY, SEAT_CARDS, SEAT_PICKED, SEAT_SCORED, SEAT_HEAD = range(5)
#: the per-kind parts of a seat's repeat, in order (``i`` above)
SEAT_VICTORY, SEAT_FIRST, SEAT_LAST_FIRST, SEAT_LAST_CAR, SEAT_LAST_SURPRISE = range(5)
#: the cap of the ``joy`` entry (uint8), reached only by decks whose best six cards pass it
JOY_CAP = 255


def obs_layout(num_players: int, kinds: Sequence[Any] = (), counts: Sequence[int] = ()
               ) -> Layout:
    """The observation row of a seat (T6, C4), for ``N`` players and a deck of ``K``
    kinds (``kinds[k]`` has ``time``, ``type``, ``joy``; ``counts[k]`` copies): every
    entry a small integer with its exact bound (v1)."""
    K, N = len(kinds), num_players
    counts = tuple(int(n) for n in counts)
    in_hand = tuple(min(n, HAND_SIZE) for n in counts)
    in_pile = tuple(min(n, ROUNDS * TRIPS) for n in counts)
    road_high, with_high = size_bounds(N, kinds, counts)
    joy_high = min(max_score(kinds, counts), JOY_CAP)
    one_hot = "one-hot over kinds, all 0 for none"
    return Layout("Traffic Jam observation", [
        kind_field("hand", in_hand, "my hand: cards per kind (bound: the kind's copies, at "
                   "most 6)"),
        Field("my_pick", K, "my face-down card of this stage, not yet revealed: in stage 1 "
              f"my first card, in stage 2 my surprise; {one_hot} (before I pick)", "K"),
        Field("my_car", K, f"stage 2: my face-down card carrying my car; {one_hot}", "K"),
        kind_field("discard", counts, "the discard pile: cards per kind (bound: the kind's "
                   "copies)"),
        block("seats", N, [
            Part("joy", 1, "joy points in the victory pile (capped at 255, only for decks "
                 "whose best six cards pass it)", high=joy_high),
            Part("cards", 1, "cards in the victory pile", high=ROUNDS * TRIPS),
            Part("picked", 1, "has put its face-down card(s) of this stage down"),
            Part("scored", 1, "last trip: its car's card scored (went to its victory pile)"),
            bounded(Part, "victory", in_pile, "its victory pile: cards per kind (bound: "
                    "the kind's copies, at most 6)"),
            Part("first", K, "this trip's stage-1 card it revealed (stage 2); " + one_hot),
            Part("last_first", K, "last trip: its stage-1 card; " + one_hot),
            Part("last_car", K, "last trip: the card carrying its car; " + one_hot),
            Part("last_surprise", K, "last trip: its surprise card; " + one_hot),
        ], "per seat, me first, then the others in turn order after me", "N (5 K + 4)"),
        Field("last_jam", NUM_TIMES, "last trip: per road (morning, day, night) 1 if it "
              "jammed (all 0 before the first trip ends)"),
        Field("stage", 2, "stage one-hot (first vehicles, car and surprise)"),
        Field("trip", TRIPS, "trip one-hot (to the country, back)"),
        Field("round", ROUNDS, "round one-hot"),
        Field("deck_left", 1, "cards left in the deck (bound: the deck's cards less the first "
              "deal)", high=max(sum(counts) - HAND_SIZE * N, 0)),
        Field("horizon_left", 1, "share of the envs' move limit left, 0-255 (255: no limit "
              "or all of it; `core/clock.py`)", high=255),
        kind_field("road_size", road_high, "derived: per road (morning, day, night) its size "
                   "now by the jam test's measure (T2; it jams above N); bound: the largest "
                   "its N stage-1 cards can make", ""),
        kind_field("size_with", with_high, "derived: per kind, the size its road would have "
                   "with one more card of that kind (jams if above N)"),
        kind_field("unseen", counts, "derived: per kind, copies I have not seen (the deck's "
                   "copies less my hand, my face-down cards, the roads, the discard pile and "
                   "every victory pile): in the deck, the others' hands or face down"),
    ], ranges=True)


def action_layout(num_kinds: int) -> Layout:
    """The action space (C3): one range per stage of a trip."""
    K = num_kinds
    return Layout("Traffic Jam actions", [
        Field("play", K, "stage 1 (first vehicles): play one card of kind `a`; legal when the "
              "hand holds kind `a`", "K"),
        Field("car_surprise", K * K, "stage 2 (car and surprise): `a - K = car * K + "
              "surprise`, the car on a card of kind `car`, the surprise of kind `surprise`; "
              "legal when the hand holds both (two of the kind if `car == surprise`)", "K K"),
    ])


#: the observation fields, in order: the config record holds each one's offset as
#: ``ob_<name>`` (filled from :func:`obs_layout` by the Game), and ``observe`` writes by it
OBS_FIELDS = tuple(obs_layout(2).names())

CFG_DTYPE = np.dtype(
    [
        ("num_players", np.int64),  # N (T1)
        ("num_kinds", np.int64),  # K: distinct cards of the deck
        ("deck_size", np.int64),  # cards in the deck
        ("shaping", np.bool_),  # pay joy points as they are scored (C2 option)
        ("kind_time", np.int8, MAX_KINDS),  # per kind: its road (0 morning, 1 day, 2 night)
        ("kind_type", np.int8, MAX_KINDS),  # per kind: VAN .. ICE_CREAM
        ("kind_cond", np.int8, MAX_KINDS),  # per kind: FREE, JAM or EITHER
        ("kind_joy", np.int16, MAX_KINDS),  # per kind: joy points
        ("kind_count", np.uint8, MAX_KINDS),  # per kind: copies in the deck
        ("kind_slot", np.uint8, MAX_KINDS),  # per kind: 8 * its road + its type
        # per kind k, 3 k + c: the space one more card of kind k takes on a road already
        # holding c (0, 1, 2 or more) cards of its type (T2; observe's ``size_with``)
        ("kind_add", np.uint8, 3 * MAX_KINDS),
        ("horizon", np.int64),  # the envs' move limit (0: none), for ``horizon_left``
        # observation offsets; uint32 so that the compiler knows them non-negative (a signed
        # index costs a negative-index check per store: observe ran 2x slower)
        *[(f"ob_{name}", np.uint32) for name in OBS_FIELDS],
        ("ob_seat_stride", np.uint32),  # entries per seat of the ``seats`` block (5 K + 4)
        ("a_pair", np.int64),  # first action of the stage-2 range (= K)
    ],
    align=True,
)

RECORD_DTYPE = np.dtype(
    [
        ("rng_key", np.uint64),  # the game's generator (C1)
        ("rng_ctr", np.uint64),
        ("moves", np.int32),  # moves made (kept by the drivers, for truncation)
        ("reward", np.float32, MAX_PLAYERS),  # this step's reward per seat
        ("round", np.int8),  # 0..2
        ("trip", np.int8),  # 0 to the country, 1 back
        ("stage", np.int8),  # 0 first vehicles, 1 car and surprise
        ("cur", np.int8),  # the seat to choose (C3: seats choose in turn, seat 0 first)
        ("over", np.bool_),  # the game has ended (T5)
        ("deck_n", np.int16),  # cards left in the deck: deck[:deck_n], top last
        ("discard_n", np.int16),  # cards in the discard pile
        ("deck", np.uint8, MAX_CARDS),  # the deck as kinds, deck[deck_n - 1] drawn next
        ("hand", np.uint8, (MAX_PLAYERS, MAX_KINDS)),  # per seat: cards per kind in hand
        ("hand_n", np.uint8, MAX_PLAYERS),  # per seat: cards in hand
        ("road", np.uint8, MAX_KINDS),  # cards per kind revealed on the roads this trip
        ("discard", np.uint8, MAX_KINDS),  # the discard pile per kind
        ("victory", np.uint8, (MAX_PLAYERS, MAX_KINDS)),  # per seat: victory pile per kind
        ("vtotal", np.uint8, MAX_KINDS),  # all victory piles together, per kind
        ("joy", np.int16, MAX_PLAYERS),  # per seat: joy points in the victory pile
        ("vcount", np.int16, MAX_PLAYERS),  # per seat: cards in the victory pile
        ("pick1", np.int8, MAX_PLAYERS),  # per seat: hidden stage-1 pick (kind), -1 none
        ("pick_car", np.int8, MAX_PLAYERS),  # per seat: hidden stage-2 car card, -1 none
        ("pick_sur", np.int8, MAX_PLAYERS),  # per seat: hidden stage-2 surprise, -1 none
        ("shown1", np.int8, MAX_PLAYERS),  # this trip: per seat its revealed stage-1 card, -1
        ("last_jam", np.int8, NUM_TIMES),  # last trip: per road 1 jammed, 0 free, -1 none yet
        ("last_car", np.int8, MAX_PLAYERS),  # last trip: per seat its car's kind, -1 none
        ("last_first", np.int8, MAX_PLAYERS),  # last trip: per seat its stage-1 card, -1 none
        ("last_sur", np.int8, MAX_PLAYERS),  # last trip: per seat its surprise, -1 none
        ("last_scored", np.int8, MAX_PLAYERS),  # last trip: per seat 1 scored, 0 not, -1 none
        ("winner", np.uint8, MAX_PLAYERS),  # per seat: 1 if it won (shared wins allowed)
        # kernel work space, not game state: legal_mask's kinds in hand, observe's cards per
        # (road, type)
        ("scratch", np.uint8, NUM_TIMES * NUM_TYPES),
    ],
    align=True,
)


def obs_dim(num_players: int, num_kinds: int) -> int:
    """Length of one observation row (the layout's size: ``6 K + N (5 K + 4) + 15``)."""
    return 6 * num_kinds + num_players * (5 * num_kinds + 4) + 15


def num_actions(num_kinds: int) -> int:
    """``K + K*K``: a card to play in stage 1, an ordered pair in stage 2."""
    return action_layout(num_kinds).size
