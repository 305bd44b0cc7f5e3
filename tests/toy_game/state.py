"""State dicts (a record to a JSON-ready dict and back) and the invariants of a record.

``from_dict`` checks every value and the rules' consistency before it writes a record,
so a loaded state is one the rules could have reached; ``check_invariants`` is what the
conformance tests assert after every step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from toy_game.rules.layout import MAX_CARS, MAX_WAVE

from trafficenvs.core.statedict import StateDictError

if TYPE_CHECKING:
    from toy_game.game import TollGateGame

STATE_KEYS = {"game", "num_players", "cars", "to_move", "last_wave", "over", "moves", "rng",
              "winner"}
OPTIONAL_KEYS = {"moves", "rng", "winner"}


def to_dict(game: TollGateGame, rec: np.void) -> dict[str, Any]:
    """The record as a dict of plain values."""
    n = game.num_players
    return {
        "game": game.name, "num_players": n, "cars": int(rec["cars"]),
        "to_move": int(rec["cur"]), "last_wave": int(rec["last"]),
        "over": bool(rec["over"]), "moves": int(rec["moves"]), "rng": game.rng_to_dict(rec),
        "winner": [p for p in range(n) if rec["winner"][p]],
    }


def from_dict(game: TollGateGame, state: dict[str, Any]) -> np.ndarray:
    """A 1-record array from a state dict (StateDictError naming the bad key otherwise)."""
    st = game.state_reader(state, STATE_KEYS, OPTIONAL_KEYS)
    n = game.num_players
    over = st.bool("over")
    cars = st.int("cars", 0, MAX_CARS)
    if over != (cars == 0):
        raise StateDictError("state dict: over must be True exactly when no car waits")
    winner = st.int_list("winner", 0, n - 1, default=[])
    if len(winner) != (1 if over else 0):
        raise StateDictError("state dict: winner must name one seat once the game is over")
    recs = game.new_records(1)
    r = recs[0]
    game.load_rng(r, state)
    r["moves"] = st.int("moves", 0, 2**31 - 1, default=0)
    r["cars"], r["over"] = cars, over
    r["cur"] = st.int("to_move", 0, n - 1)
    r["last"] = st.int("last_wave", 0, MAX_WAVE)
    for p in winner:
        r["winner"][p] = 1
    return recs


def check_invariants(game: TollGateGame, rec: np.void) -> None:
    """Assert what holds in every reachable record."""
    assert 0 <= rec["cars"] <= MAX_CARS
    assert bool(rec["over"]) == (rec["cars"] == 0)
    assert 0 <= rec["cur"] < game.num_players
