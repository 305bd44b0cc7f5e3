"""Traffic Jam's data: limits, card vocabulary, the record and config dtypes, and the
observation and action layouts.

Cards are handled as *kinds*: the distinct (time, type, joy, condition) rows of the
deck. Identical cards are interchangeable, so a hand, a road or a pile is a vector
of counts per kind (``K`` kinds, at most :data:`MAX_KINDS`), and the deck is an
ordered array of kinds. Everything here is plain numpy; the rules that read it are
in ``deal.py``, ``rules.py`` and ``kernels.py``.
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.layout import Field, Layout, Part, block

MAX_PLAYERS = 6  # T1
MAX_KINDS = 32  # T2: distinct cards of a deck
MAX_CARDS = 128  # T2: cards of a deck
HAND_SIZE = 6  # T3: cards dealt to each seat a round
ROUNDS = 3  # T3
TRIPS = 2  # T3: trips a round (to the country and back)
NUM_TIMES = 3  # roads: morning, day, night

TIMES = ("morning", "day", "night")
TYPES = (
    "van", "cabriolet", "buggy", "truck", "bus", "motorcycle", "hot-air balloon",
    "ice cream truck",
)
CONDITIONS = ("free", "jam", "either")
VAN, CABRIOLET, BUGGY, TRUCK, BUS, MOTORCYCLE, BALLOON, ICE_CREAM = range(8)
FREE, JAM, EITHER = range(3)


def obs_layout(num_players: int, num_kinds: int) -> Layout:
    """The observation row of a seat (T6, C4), for ``N`` players and ``K`` kinds."""
    K, N = num_kinds, num_players
    return Layout("Traffic Jam observation", [
        Field("hand", K, "my hand: cards per kind", "K"),
        Field("road", K, "the roads: cards per kind on the roads this trip (a kind's road "
              "is its time)", "K"),
        Field("discard", K, "the discard pile: cards per kind", "K"),
        Field("victory_total", K, "all victory piles together: cards per kind", "K"),
        block("scores", N, [Part("joy", 1, "joy points"),
                            Part("victory_cards", 1, "cards in the victory pile")],
              "per seat, me first, then the others in turn order after me", "2 N"),
        Field("stage", 2, "stage one-hot (first vehicles, car and surprise)"),
        Field("trip", 2, "trip one-hot (to the country, back)"),
        Field("round", ROUNDS, "round one-hot"),
        Field("deck_left", 1, "cards left in the deck"),
    ])


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
OBS_FIELDS = tuple(obs_layout(2, 1).names())

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
        # observation offsets; uint32 so that the compiler knows them non-negative (a signed
        # index costs a negative-index check per store: observe ran 2x slower)
        *[(f"ob_{name}", np.uint32) for name in OBS_FIELDS],
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
        ("last_jam", np.int8, NUM_TIMES),  # last trip: per road 1 jammed, 0 free, -1 none yet
        ("last_car", np.int8, MAX_PLAYERS),  # last trip: per seat its car's kind, -1 none
        ("last_scored", np.int8, MAX_PLAYERS),  # last trip: per seat 1 scored, 0 not, -1 none
        ("winner", np.uint8, MAX_PLAYERS),  # per seat: 1 if it won (shared wins allowed)
        ("scratch", np.uint8, HAND_SIZE),  # kernel work space, not game state
    ],
    align=True,
)


def obs_dim(num_players: int, num_kinds: int) -> int:
    """Length of one observation row (the layout's size: ``4K + 2N + 8``)."""
    return obs_layout(num_players, num_kinds).size


def num_actions(num_kinds: int) -> int:
    """``K + K*K``: a card to play in stage 1, an ordered pair in stage 2."""
    return action_layout(num_kinds).size
