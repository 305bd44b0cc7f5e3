"""Play digests: one SHA-256 per configuration over everything a game shows while played.

The equivalence harness for refactors that must not change play. For each
configuration it plays random legal games in the vectorised env (every row, every
step) and hashes, in order: observations, masks, players to move, rewards, end
flags, final observations and final records of the rows that ended, the whole batch
of records every few steps, every seat's observation (``observe(seats)``) every few
steps, state dicts of some rows (as JSON) with their ``from_dict`` records, and the
actions of the game's greedy player on the current decisions (which are then played
in a quarter of the steps, so greedy play is exercised too).

Any change in a kernel, an observation, a mask, a state dict or a greedy player's
choice changes the digest of at least one configuration. The committed digests are in
``tests/data/play_digests.json``; ``test_play_unchanged.py`` checks the small size on
every test run. Regenerate (only when play is *meant* to change) with::

    python tests/play_digest.py --write            # the size the tests check
    python tests/play_digest.py --size full        # a larger run, printed only
    python tests/play_digest.py --device cuda      # the same games on the GPU env

Only the public API is used (``make_vec``, ``records``, ``observe``, state dicts,
``make_greedy``), so the same script runs on the code before and after a refactor.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import trafficenvs
from trafficenvs.agents import make_greedy
from trafficenvs.core import sampler

DATA = Path(__file__).resolve().parent / "data" / "play_digests.json"
#: the ``--play-only`` digests (small size) of the last v0 code: the v1 observations
#: changed what a game shows, not how it plays
PLAY_ONLY = DATA.parent / "play_only_digests.json"

#: (env id, options) per configuration; maps given by name or random_map(...) spec
CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "tj-2p": ("traffic_jam", {"num_players": 2}),
    "tj-4p": ("traffic_jam", {"num_players": 4}),
    "tj-6p-shaping": ("traffic_jam", {"num_players": 6, "shaping": True}),
    "jt-2p-small": ("jamming_traffic", {"num_players": 2, "map": "small"}),
    "jt-4p-default": ("jamming_traffic", {"num_players": 4, "map": "default"}),
    "jt-10p-default-turns": ("jamming_traffic",
                             {"num_players": 10, "map": "default", "max_turns": 30}),
    "jt-3p-wheel-shaping": ("jamming_traffic",
                            {"num_players": 3, "map": "wheel", "shaping": True}),
    "jt-5p-grid": ("jamming_traffic", {"num_players": 5, "map": "grid"}),
    "jt-3p-random16": ("jamming_traffic", {"num_players": 3, "map": ("random", 16, 3)}),
    "jt-4p-random20-faces": ("jamming_traffic",
                             {"num_players": 4, "map": ("random", 20, 9),
                              "faces": [1, 2, 3, 3, "roundabout", "one-way"]}),
    "jk-2p": ("jakarta_traffic", {"num_players": 2}),
    "jk-3p-shaping": ("jakarta_traffic", {"num_players": 3, "shaping": True}),
    "jk-4p-rounds": ("jakarta_traffic", {"num_players": 4, "max_rounds": 12}),
}

#: size -> (games per batch, steps); "tiny" is the GPU mode's size under the simulator
SIZES = {"tiny": (4, 120), "small": (24, 600), "full": (256, 6000)}


def _options(options: dict[str, Any]) -> dict[str, Any]:
    out = dict(options)
    m = out.get("map")
    if isinstance(m, tuple):
        from trafficenvs.jamming_traffic import random_map

        out["map"] = random_map(towns=m[1], seed=m[2])
    return out


#: the records' work space (Traffic Jam's ``scratch``; Jamming Traffic's fields after
#: ``js_end``, its layout's "scratch from here on"): every kernel writes it before it
#: reads it, so what it holds between calls is not game state, and a kernel may start
#: or stop using it without changing play
SCRATCH = frozenset({"scratch", "sc_cnt", "sc_held", "sc_laste", "snap", "ch_code",
                     "ch_roads", "ch_path"})


def _fields(recs: np.ndarray) -> bytes:
    """Records as the bytes of their fields but the work space (:data:`SCRATCH`);
    padding between aligned fields is not game state either (numba's whole-record
    copies leave whatever was in memory there)."""
    recs = np.asarray(recs)
    return b"".join(np.ascontiguousarray(recs[f]).tobytes() for f in recs.dtype.names
                    if f not in SCRATCH)


def digest(name: str, size: str = "small", play_only: bool = False,
           device: str = "cpu") -> tuple[str, int]:
    """The digest of configuration ``name`` and the row-steps it covered.

    ``play_only`` hashes only what does not depend on the observation encoding or the
    record's layout: masks, players to move, rewards, end flags and the greedy
    player's choices (for a change of observations that must not change play).
    ``device="cuda"`` plays on the GPU env (random actions sampled on the GPU, every
    buffer copied to the host to be hashed): the digest must equal the CPU's.
    """
    env_id, options = CONFIGS[name]
    n, steps = SIZES[size]
    gpu = device != "cpu"
    on = {"device": device} if gpu else {}  # (the CPU call is the same on older code)
    venv = trafficenvs.make_vec(env_id, num_envs=n, max_cycles=300, **on, **_options(options))
    if gpu:
        from trafficenvs.core.vector import to_numpy
    host = to_numpy if gpu else (lambda x: x)
    game = venv.game
    greedy = make_greedy(game, seed=0)
    h = hashlib.sha256()
    out = venv.reset(seed=1234)
    states = sampler.rng_states(n, 99, **on)
    acts = np.zeros(n, np.int64)
    sampled = venv.as_device_array(acts) if gpu else acts
    rng = np.random.default_rng(5)
    seats = np.zeros(n, np.int64)
    for t in range(steps):
        view = out.numpy() if gpu else out
        for arr in ((view.action_mask, view.current_player) if play_only else
                    (view.observation, view.action_mask, view.current_player)):
            h.update(np.ascontiguousarray(arr).tobytes())
        g = greedy.act(view.observation, view.action_mask, view.current_player)
        h.update(g.tobytes())
        sampler.sample_legal(out.action_mask, states, sampled)
        if gpu:
            acts = to_numpy(sampled)
        if t % 4 == 3:
            acts[:] = g
        if t % 25 == 0 and not play_only:
            h.update(_fields(host(venv.records)))
            for s in range(game.num_players):
                seats[:] = (np.arange(n) + s) % game.num_players
                h.update(host(venv.observe(seats)).tobytes())
            for i in rng.choice(n, size=2, replace=False):
                d = venv.state_dict(int(i))
                h.update(json.dumps(d, sort_keys=True).encode())
                back = game.from_dict(json.loads(json.dumps(d)))
                h.update(_fields(back))
        out = venv.step(acts)
        view = out.numpy() if gpu else out
        ended = view.terminated | view.truncated
        for arr in (view.rewards, view.terminated, view.truncated):
            h.update(np.ascontiguousarray(arr).tobytes())
        if ended.any() and not play_only:
            h.update(view.final_observation[ended].tobytes())
            h.update(_fields(np.asarray(view.final_records)[ended]))
    return h.hexdigest(), n * steps


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size", choices=sorted(SIZES), default="small")
    p.add_argument("--write", action="store_true", help="write the small digests to the file")
    p.add_argument("--check", action="store_true", help="compare with the file (small only)")
    p.add_argument("--out", type=Path, help="write the digests of this size to this JSON file")
    p.add_argument("--play-only", action="store_true",
                   help="hash masks, movers, rewards, end flags and greedy choices only")
    p.add_argument("--device", default="cpu",
                   help="cpu, or cuda / cuda:K: play on the GPU env (same digests)")
    p.add_argument("names", nargs="*", default=list(CONFIGS))
    a = p.parse_args(argv)
    result: dict[str, str] = {}
    total = 0
    t0 = time.perf_counter()
    for name in a.names:
        d, rows = digest(name, a.size, a.play_only, a.device)
        result[name] = d
        total += rows
        print(f"{name:24s} {d[:16]}  {rows:>10,d} row-steps  {time.perf_counter() - t0:6.1f} s",
              flush=True)
    print(f"{total:,d} row-steps in {time.perf_counter() - t0:.1f} s")
    if a.out:
        a.out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    if a.write:
        if a.play_only:
            p.error("--write stores the full digests; use --out for --play-only")
        if a.size != "small":
            p.error("--write stores the small size only")
        DATA.parent.mkdir(exist_ok=True)
        DATA.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    if a.check:
        want = json.loads((PLAY_ONLY if a.play_only else DATA).read_text())
        bad = [k for k in result if want.get(k) != result[k]]
        print("differ:", bad or "none")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
