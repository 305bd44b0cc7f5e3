"""The conformance suite (``trafficenvs.testing``) on every game, as one table.

Each row is a game and a configuration with how hard each check plays it (the
settings each game used before the table was merged). Failure messages name the
game, the configuration, the seed, and the row and step where that applies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from trafficenvs import testing
from trafficenvs.jamming_traffic import random_map


@dataclass
class Case:
    game: str
    options: dict[str, Any]
    #: PettingZoo api_test / seed_test cycles
    api_cycles: int
    #: check_batch_matches_single settings, or None to skip this configuration
    batch: dict[str, Any] | None
    #: check_random_play settings, and the fewest games it must finish
    random: dict[str, Any]
    min_finished: int
    #: check_state_roundtrip settings, or None to skip
    roundtrip: dict[str, Any] | None = field(default=None)

    @property
    def id(self) -> str:
        opts = "-".join(f"{k}={getattr(v, 'name', v)}" for k, v in self.options.items())
        return f"{self.game}-{opts}"


def _tj(options: dict[str, Any]) -> Case:
    return Case("traffic_jam-v1", options, 300, {"seeds": (0, 5, 11)},
                {"seeds": range(12)}, 12 * 16, {"seeds": range(2), "steps": 150})


def _jt(options: dict[str, Any], deep: int) -> Case:
    """``deep``: 2 batch, state round trip and the rest; 1 round trip and the rest; 0 the rest."""
    return Case("jamming_traffic-v1", options, 200,
                {"seeds": (0, 5), "batch_sizes": (1, 7, 32)} if deep >= 2 else None,
                {"seeds": range(4), "num_envs": 16}, 4 * 16,
                {"seeds": range(2), "steps": 150} if deep >= 1 else None)


def _jk(options: dict[str, Any], deep: bool) -> Case:
    return Case("jakarta_traffic-v1", options, 300,
                {"seeds": (0, 5), "batch_sizes": (1, 9)} if deep else None,
                {"seeds": range(3)}, 3 * 16,
                {"seeds": range(2), "steps": 300} if deep else None)


# Jamming Traffic: the turn limit (a draw) keeps random games short, since random play
# rarely completes a tour of a big map.
CASES = [
    _tj({"num_players": 2}),
    _tj({"num_players": 4}),
    _tj({"num_players": 6}),
    _tj({"num_players": 3, "shaping": True}),
    _jt({"num_players": 2, "map": "small", "max_turns": 60}, 2),
    _jt({"num_players": 4, "map": "default", "max_turns": 40}, 2),
    _jt({"num_players": 10, "map": "default", "max_turns": 40}, 2),
    _jt({"num_players": 3, "map": "wheel", "max_turns": 40}, 1),
    _jt({"num_players": 5, "map": "grid", "max_turns": 40}, 0),
    _jt({"num_players": 3, "map": random_map(towns=16, seed=3), "max_turns": 40}, 0),
    _jt({"num_players": 3, "map": "default", "max_turns": 40, "shaping": True}, 0),
    _jk({"num_players": 2}, True),
    _jk({"num_players": 3}, True),
    _jk({"num_players": 4}, True),
    _jk({"num_players": 3, "shaping": True}, False),
]
IDS = [c.id for c in CASES]


def _only(attr: str) -> tuple[list[Case], list[str]]:
    kept = [c for c in CASES if getattr(c, attr) is not None]
    return kept, [c.id for c in kept]


BATCH, BATCH_IDS = _only("batch")
ROUNDTRIP, ROUNDTRIP_IDS = _only("roundtrip")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_pettingzoo_api_seed_and_render(case):
    testing.check_pettingzoo_api(case.game, num_cycles=case.api_cycles, **case.options)


@pytest.mark.parametrize("case", BATCH, ids=BATCH_IDS)
def test_batch_equals_single_for_every_batch_size_and_thread_count(case):
    testing.check_batch_matches_single(case.game, **case.batch, **case.options)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_random_play_keeps_invariants_and_rewards_are_zero_sum(case):
    """Invariants after every step (each game's ``check_invariants``: cards, cars or
    orders conserved, capacities, whose turn), zero-sum results (C2)."""
    finished = testing.check_random_play(case.game, **case.random, **case.options)
    assert finished >= case.min_finished


@pytest.mark.parametrize("case", ROUNDTRIP, ids=ROUNDTRIP_IDS)
def test_state_dict_round_trip_all_game_long(case):
    testing.check_state_roundtrip(case.game, **case.roundtrip, **case.options)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_observation_lies_in_its_space_with_exact_bounds(case):
    """v1 observations are uint8 rows with an exact bound per entry (the layout's
    ``high``): no view of any seat ever exceeds it, and no one-hot entry exceeds 1."""
    seen = testing.check_observation_bounds(case.game, **case.options)
    assert seen.max() > 1, "random play never showed a count above 1"


@pytest.mark.parametrize("old", ["traffic_jam-v0", "jamming_traffic_v0",
                                 "trafficenvs/jakarta_traffic-v0"])
def test_retired_v0_ids_name_the_current_version(old):
    import trafficenvs

    name = old.split("/")[-1].replace("_v0", "").replace("-v0", "")
    with pytest.raises(ValueError, match=f"use '{name}-v1'"):
        trafficenvs.make(old)
