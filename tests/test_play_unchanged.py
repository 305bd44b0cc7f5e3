"""Play is unchanged: every configuration's play digest matches the committed one.

``tests/play_digest.py`` hashes everything a game shows while played (observations,
masks, rewards, records, state dicts, the greedy player's choices) over random and
greedy play on 13 configurations of the three games. A refactor of the kernels, the
state dicts or the greedy players must leave every digest as it is; a change of the
rules or the observations must regenerate them on purpose
(``python tests/play_digest.py --write``) and say so in its commit.
"""

from __future__ import annotations

import json

import pytest
from play_digest import CONFIGS, DATA, digest

WANT = json.loads(DATA.read_text())


def test_every_configuration_has_a_committed_digest():
    assert sorted(WANT) == sorted(CONFIGS)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_play_digest_is_unchanged(name):
    got, rows = digest(name, "small")
    assert rows > 10_000
    assert got == WANT[name], (
        f"{name}: play changed (digest {got[:16]}, committed {WANT[name][:16]}); "
        f"replay with `python tests/play_digest.py {name}` on the old and new code"
    )
