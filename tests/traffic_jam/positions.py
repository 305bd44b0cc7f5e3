"""Drawing Traffic Jam positions in tests: name cards, fill the deck with the rest."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from trafficenvs.registry import make_vec
from trafficenvs.traffic_jam.game import TrafficJamGame
from trafficenvs.traffic_jam.state import expected_hand_size


def card(game: TrafficJamGame, spec: str) -> str:
    """``"night balloon"`` -> the deck's card name (time and type must be unique)."""
    time, typ = spec.split(" ", 1)
    typ = {"balloon": "hot-air balloon", "ice": "ice cream truck", "moto": "motorcycle",
           "cab": "cabriolet"}.get(typ, typ)
    found = [k.name for k in game.deck.kinds if k.name.startswith(f"{time}:{typ}:")]
    assert len(found) == 1, (spec, found)
    return found[0]


def cards(game: TrafficJamGame, specs: str) -> list[str]:
    """``"morning van, day bus"`` -> card names."""
    return [card(game, s.strip()) for s in specs.split(",") if s.strip()]


def position(game: TrafficJamGame, **fields: Any) -> dict[str, Any]:
    """A state dict from the given fields; every other card goes in the deck (top last).

    A hand given as None, or as a list ending in ``...``, is filled up with spare
    cards to the size the phase asks for. In stage 2 the road cards are the stage-1
    cards the seats revealed: unless ``firsts`` says who revealed which, seat ``p``
    revealed ``roads[p]``.
    """
    n = game.num_players
    state: dict[str, Any] = {
        "game": "traffic_jam", "num_players": n, "round": 0, "trip": 0, "stage": 0,
        "to_move": 0, "discard": [], "roads": [], "hands": [[] for _ in range(n)],
        "victory": [[] for _ in range(n)],
        "pending": [{"first": None, "car": None, "surprise": None} for _ in range(n)],
    }
    state.update(fields)
    if state["stage"] == 1 and "firsts" not in fields:
        state["firsts"] = list(state["roads"])
    hands = [None if h is None else list(h) for h in state["hands"]]
    partial = [h is None or (h and h[-1] is Ellipsis) for h in hands]
    hands = [[] if h is None else [c for c in h if c is not Ellipsis] for h in hands]
    used: Counter = Counter(state["discard"]) + Counter(state["roads"])
    for p in range(n):
        used += Counter(hands[p]) + Counter(state["victory"][p])
        used += Counter(v for v in state["pending"][p].values() if v is not None)
    rest: list[str] = []
    for kind, count in zip(game.deck.kinds, game.deck.counts):
        rest += [kind.name] * (count - used[kind.name])
    for p in range(n):
        if partial[p]:
            size = expected_hand_size(state["round"], state["trip"], state["stage"],
                                      state["to_move"], p, state.get("over", False))
            more = size - len(hands[p])
            hands[p], rest = hands[p] + rest[:more], rest[more:]
    state["hands"] = hands
    if "deck" not in fields:
        state["deck"] = rest
    return state


def vec_at(game_options: dict, state: dict):
    """A one-game vectorised env set to ``state``; returns (env, last result)."""
    venv = make_vec("traffic_jam", num_envs=1, **game_options)
    venv.reset(seed=0)
    venv.load_state_dict(0, state)
    return venv, venv._buf  # noqa: SLF001


def pair(game: TrafficJamGame, car: str, surprise: str) -> int:
    k = game.num_kinds
    return k + game.deck.index(car) * k + game.deck.index(surprise)


def play(venv, action: int):
    return venv.step(np.array([action]))


def hidden_twins(records: np.ndarray, current_player: np.ndarray) -> np.ndarray:
    """Copies of 2-player ``records`` that differ only in what the seat to move cannot
    see: one card swapped between the opponent's hand and the deck, and the deck's
    order reversed (a search that never peeks decides the same on both)."""
    twin = records.copy()
    for i in range(len(twin)):
        r = twin[i]
        opp = 1 - int(current_player[i])
        held = np.flatnonzero(r["hand"][opp])
        d = int(np.flatnonzero(r["deck"][: r["deck_n"]] != held[0])[0])
        k_new = int(r["deck"][d])
        r["hand"][opp][held[0]] -= 1
        r["hand"][opp][k_new] += 1
        r["deck"][d] = held[0]
        r["deck"][: r["deck_n"]] = r["deck"][: r["deck_n"]][::-1].copy()
    assert not np.array_equal(twin["hand"], records["hand"])
    return twin
