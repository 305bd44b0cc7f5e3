"""Option files and option values users give: refused cleanly, never hung or coerced.

A deck, tile set or map given by path is read only from a regular file of bounded
size: a FIFO (which would block forever), a device such as ``/dev/zero`` (which would
read until memory runs out), a folder, text that is not UTF-8, JSON nested past
Python's recursion, are each a ``ValueError`` naming the file. A tile ``count`` of a
billion is refused before the list is built. Options have strict types: booleans are
not integers, numpy integers are integers, strings are not lists. A Jakarta Traffic
round counter cannot be loaded where one more round would wrap it, and a vectorised env
too large for the machine's memory is refused before it allocates.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import trafficenvs
from trafficenvs.core.statedict import StateDictError

OPTION = {"traffic_jam": "deck", "jakarta_traffic": "tiles", "jamming_traffic": "map"}

_FIFO = r"""
import os, sys, warnings
warnings.simplefilter("ignore")
import trafficenvs
game, option, path = sys.argv[1:]
os.mkfifo(path)
try:
    trafficenvs.make_game(game, **{option: path})
except ValueError as err:
    print("refused:", err)
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("game", sorted(OPTION))
def test_a_fifo_as_an_option_file_is_refused_not_read(tmp_path, game):
    path = tmp_path / ("x.json" if game != "traffic_jam" else "deck.json")
    proc = subprocess.run([sys.executable, "-c", _FIFO, game, OPTION[game], str(path)],
                          capture_output=True, text=True, timeout=120)  # a hang fails here
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "refused:" in proc.stdout
    if game != "jamming_traffic":  # (a map path that is not a file reads as an unknown name)
        assert "not a regular file" in proc.stdout


@pytest.mark.parametrize("game", ["traffic_jam", "jakarta_traffic"])
def test_option_files_that_are_not_small_utf8_json_are_refused(tmp_path, game):
    option = OPTION[game]
    make = lambda p: trafficenvs.make_game(game, **{option: str(p)})  # noqa: E731
    if os.path.exists("/dev/zero"):
        with pytest.raises(ValueError, match="not a regular file"):
            make("/dev/zero")
    with pytest.raises(ValueError, match="not a regular file"):
        make(tmp_path)
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (2 << 20) + b"[]")
    with pytest.raises(ValueError, match="bytes"):
        make(big)
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'["caf\xe9"]')
    with pytest.raises(ValueError, match="not UTF-8"):
        make(latin)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="nested too deeply|not valid JSON"):
        make(deep)
    with pytest.raises(FileNotFoundError, match="not found"):
        make(tmp_path / "missing.json")


def test_a_map_file_that_is_not_small_utf8_json_is_refused(tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (2 << 20) + b"{}")
    with pytest.raises(ValueError, match="bytes"):
        trafficenvs.make_game("jamming_traffic", map=str(big))
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"name": "caf\xe9"}')
    with pytest.raises(ValueError, match="not UTF-8"):
        trafficenvs.make_game("jamming_traffic", map=str(latin))


def test_a_billion_tiles_are_refused_before_the_list_is_built():
    from trafficenvs.jakarta_traffic.rules.tiles import DEFAULT_TILES, load_tiles

    spec = json.loads(open(DEFAULT_TILES).read())  # noqa: SIM115
    spec["tiles"][0]["count"] = 10**9
    with pytest.raises(ValueError, match="at most 64 tiles"):
        load_tiles(spec)


@pytest.mark.parametrize("game, options", [
    ("traffic_jam", {"shaping": 1}),
    ("traffic_jam", {"shaping": "no"}),
    ("jakarta_traffic", {"shaping": "yes"}),
    ("jamming_traffic", {"shaping": 0}),
    ("jamming_traffic", {"max_turns": True}),
    ("jamming_traffic", {"max_turns": 2.0}),
    ("jamming_traffic", {"faces": "1234"}),
    ("jamming_traffic", {"homes": [0, 1.0, 2, 3]}),
    ("jamming_traffic", {"homes": "0123"}),
    ("jakarta_traffic", {"max_rounds": True}),
    ("jakarta_traffic", {"max_rounds": 2**40}),
])
def test_options_of_the_wrong_type_are_refused(game, options):
    with pytest.raises(ValueError, match=next(iter(options))):
        trafficenvs.make_game(game, **options)


def test_numpy_integers_and_bools_are_accepted_as_options():
    g = trafficenvs.make_game("jamming_traffic", max_turns=np.int64(5), shaping=np.True_)
    assert g.max_turns == 5 and g.shaping is True
    assert trafficenvs.make_game("jakarta_traffic", max_rounds=np.int32(3)).max_rounds == 3


def test_a_deck_card_with_a_boolean_joy_is_refused():
    from trafficenvs.traffic_jam.rules.deck import load_deck

    good = {"time": "morning", "type": "van", "joy": 3, "condition": "free"}
    load_deck([good])  # the card itself is fine
    with pytest.raises(ValueError, match="joy"):
        load_deck([dict(good, joy=True)])


def test_a_jakarta_round_counter_that_would_wrap_is_refused():
    env = trafficenvs.make("jakarta_traffic", wrapped=False, num_players=2)
    env.reset(seed=0)
    state = env.state_dict()
    state["round"] = 2**31 - 1
    with pytest.raises(StateDictError, match="round"):
        env.load_state_dict(state)


def test_a_vectorised_env_too_large_for_memory_is_refused_before_allocating():
    with pytest.raises(ValueError, match="GiB"):
        trafficenvs.make_vec("jamming_traffic", num_envs=3 * 10**8)


def test_names_that_cannot_be_printed_are_refused(tmp_path):
    from trafficenvs.jamming_traffic.rules.maps import from_dict, load_map

    good = load_map("small").to_dict() if hasattr(load_map("small"), "to_dict") else None
    if good is None:
        pytest.skip("maps have no dict form here")
    for bad in ("caf\ud800", "a\nb", "x" * 500, 7):
        with pytest.raises(ValueError, match="name"):
            from_dict(dict(good, name=bad))
    path = tmp_path / "m.json"
    path.write_text(json.dumps(dict(good, name="caf\ud800")))  # JSON's \\ud800 escape
    with pytest.raises(ValueError, match="not printable"):
        trafficenvs.make_game("jamming_traffic", map=str(path))
