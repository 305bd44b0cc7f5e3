"""No input crashes the process: bad arguments to the public entries raise
a clean ``TypeError``/``ValueError`` that names the argument, before compiled code runs.

The attempts run in a subprocess per game (a segfault or an abort must fail a test,
not kill pytest); the child prints one JSON line per attempt, and a ``begin`` line
before it, so a crash names the attempt that caused it. Attempts that must *work*
(a strided ``out`` written correctly, nothing written outside the view given) are
checked in the child too and reported the same way.

The AEC fixes of the issue run in-process below: the wrapped env accepts a move legal
in a loaded position, and an unseeded ``reset()`` continues a seeded stream.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import trafficenvs

GAMES = ("traffic_jam", "jamming_traffic", "jakarta_traffic")

_CHILD = r'''
import json, sys, traceback, warnings
import numpy as np
warnings.simplefilter("ignore")
import trafficenvs
from trafficenvs.core import driver
from trafficenvs.core import sampler

game = sys.argv[1]
P, N = 3, 4
results = []


def attempt(name, expect, fn):
    """``fn()`` must raise TypeError/ValueError whose message contains ``expect``."""
    print(json.dumps({"begin": name}), flush=True)
    try:
        fn()
    except (TypeError, ValueError) as e:
        res = {"name": name, "ok": expect in str(e), "type": type(e).__name__, "msg": str(e)}
    except Exception as e:  # noqa: BLE001  (an unclear exception type is a failure)
        res = {"name": name, "ok": False, "type": type(e).__name__, "msg": str(e)}
    else:
        res = {"name": name, "ok": False, "type": None, "msg": "accepted"}
    print(json.dumps(res), flush=True)


def works(name, fn):
    """``fn()`` must run and return True (a correct result)."""
    print(json.dumps({"begin": name}), flush=True)
    try:
        ok = bool(fn())
        res = {"name": name, "ok": ok, "type": None, "msg": "" if ok else "wrong result"}
    except Exception as e:  # noqa: BLE001
        res = {"name": name, "ok": False, "type": type(e).__name__,
               "msg": traceback.format_exc()[-800:]}
    print(json.dumps(res), flush=True)


# -- construction -----------------------------------------------------------------
for bad in (0, -1, 1.5, "2", True):
    attempt(f"make_vec num_envs={bad!r}", "num_envs",
            lambda bad=bad: trafficenvs.make_vec(game, num_envs=bad, num_players=P))
for bad in (0, -1, "x", 2.5):
    attempt(f"make_vec max_cycles={bad!r}", "max_cycles",
            lambda bad=bad: trafficenvs.make_vec(game, num_envs=2, num_players=P, max_cycles=bad))
for bad in (-5, -1, P, 17, 1.5, True):
    attempt(f"make render_seat={bad!r}", "render_seat",
            lambda bad=bad: trafficenvs.make(game, num_players=P, render_seat=bad))
attempt("make max_cycles=-1", "max_cycles",
        lambda: trafficenvs.make(game, num_players=P, max_cycles=-1))

# games end after 2 moves per player (truncated), so final observations come often
v = trafficenvs.make_vec(game, num_envs=N, num_players=P, max_cycles=2)
game_obj = v.game
A, D = v.num_actions, game_obj.obs_dim
high = game_obj.obs_high
o = v.reset(seed=3)

# -- reset --------------------------------------------------------------------------
for bad in (-1, 2**64, 1.5, "7", True, [1]):
    attempt(f"vec reset seed={bad!r}", "seed", lambda bad=bad: v.reset(seed=bad))
o = v.reset(seed=3)

# -- rows: load_state_dict, state_dict, render --------------------------------------
sd = v.state_dict(0)
for bad in (N, 10**7, -1, -10**7, 1.5, True, "0", np.int64(N), None):
    row = "i (the game's row)"
    attempt(f"load_state_dict i={bad!r}", row, lambda bad=bad: v.load_state_dict(bad, sd))
    attempt(f"state_dict i={bad!r}", row, lambda bad=bad: v.state_dict(bad))
    attempt(f"render i={bad!r}", row, lambda bad=bad: v.render(bad))
attempt("load_state_dict state=[]", "state dict", lambda: v.load_state_dict(0, []))
attempt("load_state_dict state={}", "state dict", lambda: v.load_state_dict(0, {}))
for bad in (17, P, -1, -5, 1.5, "0"):
    attempt(f"render seat={bad!r}", "seat", lambda bad=bad: v.render(0, seat=bad))
attempt("render mode='bogus'", "mode", lambda: v.render(0, mode="bogus"))
works("render seat=P-1", lambda: isinstance(v.render(0, seat=P - 1), str))


# -- step ---------------------------------------------------------------------------
def legal(out):
    return np.array([np.flatnonzero(m)[0] for m in out.action_mask], np.int64)


acts = legal(o)
for name, bad in [("short", acts[:-1]), ("2-D", acts[None, :]), ("float", acts.astype(float)),
                  ("object", [None] * N), ("strings", ["a"] * N), ("bool", np.ones(N, bool)),
                  ("ragged", [[1], [1, 2], 3, 4]), ("scalar", 0)]:
    attempt(f"step actions {name}", "actions", lambda bad=bad: v.step(bad))
for value in (10**9, -1, A, 2**63 - 1, -(2**63)):
    bad = acts.copy()
    bad[2] = value
    attempt(f"step actions[2]={value}", "actions", lambda bad=bad: v.step(bad))
big = acts.astype(np.uint64)
big[1] = np.uint64(2**64 - 1)
attempt("step actions uint64 max", "actions", lambda: v.step(big))
for name, bad in [("int", np.ones(N, np.int64)), ("short", np.ones(N - 1, bool)),
                  ("float", np.ones(N))]:
    attempt(f"step active {name}", "active", lambda bad=bad: v.step(acts, active=bad))
for name, bad in [("10**6", np.full(N, 10**6)), ("100", np.full(N, 100)), ("P", np.full(N, P)),
                  ("-2", np.full(N, -2)), ("float", np.zeros(N)), ("short", np.zeros(N - 1, int)),
                  ("int64 min", np.full(N, -(2**63)))]:
    attempt(f"step final_seat {name}", "final_seat", lambda bad=bad: v.step(acts, final_seat=bad))
works("nothing changed by refused steps", lambda: v.state_dict(0) == sd)

# play to several game ends, trying bad final seats on every step first (the issue's
# crash was a bad final_seat on a step where a game ends)
ended = 0
in_bounds = True
for t in range(40):
    acts = legal(o)
    attempt(f"step {t} final_seat 10**6", "final_seat",
            lambda: v.step(acts, final_seat=np.full(N, 10**6)))
    o = v.step(acts, final_seat=np.full(N, P - 1))
    done = o.terminated | o.truncated
    ended += int(done.sum())
    in_bounds &= bool((o.final_observation[done] <= high).all())
    if ended >= N:
        break
works("games ended and final observations stayed in bounds", lambda: ended >= N and in_bounds)
works("step takes a list of ints", lambda: v.step(legal(o).tolist()) is not None)
o = v.last

# -- observe ------------------------------------------------------------------------
seats = np.zeros(N, np.int64)
for name, bad in [("P", np.full(N, P)), ("-1", np.full(N, -1)), ("short", seats[:-1]),
                  ("float", seats.astype(float)), ("bool", seats.astype(bool)), ("str", "abc")]:
    attempt(f"observe seats {name}", "seats", lambda bad=bad: v.observe(bad))
buf = np.zeros((N, D), np.uint8)
for name, bad in [("one row", np.zeros((1, D), np.uint8)), ("buf[:1]", buf[:1]),
                  ("short rows", np.zeros((N, D - 1), np.uint8)),
                  ("long rows", np.zeros((N, D + 1), np.uint8)),
                  ("float", np.zeros((N, D))), ("1-D", np.zeros(N * D, np.uint8)),
                  ("list", [[0] * D] * N), ("read-only", np.zeros((N, D), np.uint8))]:
    if name == "read-only":
        bad.flags.writeable = False
    attempt(f"observe out {name}", "out", lambda bad=bad: v.observe(seats, out=bad))
works("observe out=buf[:1] wrote nothing", lambda: not buf.any())
want = v.observe(seats)


def strided():
    wide = np.full((N, 2 * D), 77, np.uint8)
    got = v.observe(seats, out=wide[:, ::2])
    return ((wide[:, ::2] == want).all() and (wide[:, 1::2] == 77).all()
            and (got == want).all())


def fortran():
    f = np.zeros((N, D), np.uint8, order="F")
    return (v.observe(seats, out=f) == want).all() and (f == want).all()


def every_other_row():
    tall = np.full((2 * N, D), 77, np.uint8)
    v.observe(seats, out=tall[::2])
    return (tall[::2] == want).all() and (tall[1::2] == 77).all()


works("observe out strided columns written correctly, nothing else", strided)
works("observe out Fortran order written correctly", fortran)
works("observe out every other row written correctly", every_other_row)

# -- sample_legal -------------------------------------------------------------------
mask = o.action_mask
st = sampler.rng_states(N, 1)
out = np.zeros(N, np.int64)
for name, bad in [("int64", mask.astype(np.int64)), ("int8", mask.astype(np.int8)),
                  ("1-D", mask[0]), ("list", mask.tolist()), ("3-D", mask[None])]:
    attempt(f"sample_legal mask {name}", "mask", lambda bad=bad: sampler.sample_legal(bad, st, out))
for name, bad in [("fewer", sampler.rng_states(1, 1)), ("more", sampler.rng_states(N + 1, 1)),
                  ("int64", np.zeros(N, np.int64)), ("list", [0] * N), ("2-D", st[None])]:
    attempt(f"sample_legal states {name}", "states",
            lambda bad=bad: sampler.sample_legal(mask, bad, out))
obuf = np.full(N, -7, np.int64)
for name, bad in [("buf[:1]", obuf[:1]), ("short", np.zeros(N - 1, np.int64)),
                  ("float", np.zeros(N)), ("2-D", np.zeros((N, 1), np.int64)),
                  ("uint8", np.zeros(N, np.uint8)), ("list", [0] * N)]:
    attempt(f"sample_legal out {name}", "out", lambda bad=bad: sampler.sample_legal(mask, st, bad))
works("sample_legal out=buf[:1] wrote nothing", lambda: (obuf == -7).all())


def sample_strided_mask():
    wide = np.zeros((N, 2 * A), bool)
    wide[:, ::2] = mask
    got = sampler.sample_legal(wide[:, ::2], sampler.rng_states(N, 2), np.zeros(N, np.int64))
    return all(mask[i, got[i]] for i in range(N))


def sample_strided_out():
    wide = np.full(2 * N, -7, np.int64)
    sampler.sample_legal(mask, sampler.rng_states(N, 2), wide[::2])
    return all(mask[i, wide[2 * i]] for i in range(N)) and (wide[1::2] == -7).all()


works("sample_legal strided mask handled", sample_strided_mask)
works("sample_legal strided out handled", sample_strided_out)
works("sample_legal int32 out",
      lambda: (sampler.sample_legal(mask, st, np.zeros(N, np.int32)) >= 0).all())

# -- the other driver helpers ---------------------------------------------------------
for bad_n, bad_seed in ((-1, 0), (1.5, 0), (3, -1), (3, 2**64), (3, "1")):
    attempt(f"rng_states({bad_n!r}, {bad_seed!r})", "rng_states",
            lambda a=bad_n, b=bad_seed: sampler.rng_states(a, b))
recs, cfg = v.records, v.game.cfg
seeds = np.arange(N, dtype=np.uint64)
scratch = np.zeros((N, A), bool)
for name, args in [
    ("mask short rows", (recs, cfg, seeds, np.uint64(N), P, 5, np.zeros((N, A - 1), bool))),
    ("mask few rows", (recs, cfg, seeds, np.uint64(N), P, 5, np.zeros((1, A), bool))),
    ("mask int8", (recs, cfg, seeds, np.uint64(N), P, 5, np.zeros((N, A), np.int8))),
    ("seeds short", (recs, cfg, seeds[:1], np.uint64(N), P, 5, scratch)),
    ("seeds int64", (recs, cfg, seeds.astype(np.int64), np.uint64(N), P, 5, scratch)),
    ("nplayers 99", (recs, cfg, seeds, np.uint64(N), 99, 5, scratch)),
    ("steps -1", (recs, cfg, seeds, np.uint64(N), P, -1, scratch)),
    ("recs list", (list(recs), cfg, seeds, np.uint64(N), P, 5, scratch)),
    ("cfg of 2", (recs, np.concatenate([cfg, cfg]), seeds, np.uint64(N), P, 5, scratch)),
]:
    attempt(f"play_random {name}", "play_random", lambda args=args: sampler.play_random(*args))
for name, args in [
    ("seats P", (recs, cfg, np.full(N, P), np.zeros((N, D), np.uint8))),
    ("out short rows", (recs, cfg, seats, np.zeros((N, D - 1), np.uint8))),
    ("out few rows", (recs, cfg, seats, np.zeros((1, D), np.uint8))),
]:
    attempt(f"batch_observe {name}", "batch_observe", lambda args=args: driver.batch_observe(*args))

# -- the AEC env ----------------------------------------------------------------------
for wrapped in (False, True):
    e = trafficenvs.make(game, num_players=P, wrapped=wrapped)
    w = "wrapped" if wrapped else "raw"
    for bad in (-1, 2**64, 1.5, "7", True):
        attempt(f"{w} reset seed={bad!r}", "seed", lambda bad=bad: e.reset(seed=bad))
    e.reset(seed=1)
    attempt(f"{w} observe agent 'nobody'", "agent", lambda: e.observe("nobody"))
    attempt(f"{w} observe agent 0", "agent", lambda: e.observe(0))
    attempt(f"{w} action_name 10**6", "action", lambda: e.action_name(10**6))
    attempt(f"{w} action_name 1.5", "action", lambda: e.action_name(1.5))
    attempt(f"{w} load_state_dict []", "state dict", lambda: e.load_state_dict([]))
    if not wrapped:  # the wrapped env's own wrappers answer these (PettingZoo's rules)
        for bad in (10**6, A, -1, 1.5, "a", True, 2**70):
            attempt(f"raw step {bad!r}", "action", lambda bad=bad: e.step(bad))
        works("raw step np.int64 and 0-d arrays", lambda: (
            e.step(np.int64(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0])),
            e.step(np.array(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0])),
        ) is not None)
print(json.dumps({"done": True}), flush=True)
'''


def _run(game: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    res = subprocess.run([sys.executable, "-c", _CHILD, game], capture_output=True, text=True,
                         env=env, timeout=600, check=False)
    lines = [json.loads(x) for x in res.stdout.splitlines() if x.startswith("{")]
    return res, lines


@pytest.mark.parametrize("game", GAMES)
def test_bad_inputs_raise_clean_errors_naming_the_argument(game):
    res, lines = _run(game)
    begun = [x["begin"] for x in lines if "begin" in x]
    if res.returncode != 0 or not lines or "done" not in lines[-1]:
        last = begun[-1] if begun else "(before the first attempt)"
        pytest.fail(f"{game}: the process died (exit code {res.returncode}) during {last!r}\n"
                    f"{res.stderr[-3000:]}")
    results = [x for x in lines if "name" in x]
    assert len(results) == len(begun) > 150
    bad = [f"{r['name']}: {r['type']}: {r['msg'][:300]}" for r in results if not r["ok"]]
    assert not bad, f"{game}: {len(bad)} of {len(results)} attempts failed:\n" + "\n".join(bad)


# -- the AEC fixes -------------------------------------------------
def _legal(env) -> set[int]:
    return set(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]).tolist())


def _twin(game: str, env) -> tuple[dict, int]:
    """A position of ``game`` whose mover has a move illegal in ``env``'s position."""
    here = _legal(env)
    other = trafficenvs.make(game, num_players=3, wrapped=False)
    rng = np.random.default_rng(0)
    for seed in range(100):
        other.reset(seed=seed)
        for _ in range(8):
            new = sorted(_legal(other) - here)
            if new:
                return other.state_dict(), new[0]
            other.step(int(rng.choice(sorted(_legal(other)))))
    raise AssertionError("no twin position found")


@pytest.mark.parametrize("game", GAMES)
def test_wrapped_env_accepts_a_move_legal_in_the_loaded_position(game):
    """PettingZoo's illegal-move wrapper caches the mover's mask when ``last()`` reads it;
    a ``load_state_dict`` must drop that cache, or a move legal only in the loaded
    position (the twin's) would end the game with -1 for the mover."""
    env = trafficenvs.make(game, num_players=3)
    env.reset(seed=11)
    env.last()  # the wrapper caches this position's mask
    state, move = _twin(game, env.unwrapped)
    env.load_state_dict(state)
    mover = env.agent_selection
    env.step(move)
    assert not any(env.terminations.values()), "the legal move was taken for illegal"
    assert env._cumulative_rewards[mover] != -1  # noqa: SLF001
    assert env.unwrapped.record["moves"] == state["moves"] + 1


def test_loading_a_state_revives_a_wrapped_env_ended_by_an_illegal_move():
    env = trafficenvs.make("traffic_jam", num_players=3)
    env.reset(seed=2)
    start = env.state_dict()
    illegal = int(np.flatnonzero(env.last()[0]["action_mask"] == 0)[0])
    env.step(illegal)  # ends the game with -1 for the mover
    assert all(env.terminations.values())
    env.load_state_dict(start)
    assert env.agents and not any(env.terminations.values())
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    assert env.unwrapped.record["moves"] == 1


def test_a_wrapped_env_can_start_from_a_loaded_state_without_reset():
    src = trafficenvs.make("traffic_jam", num_players=3)
    src.reset(seed=4)
    env = trafficenvs.make("traffic_jam", num_players=3)
    env.load_state_dict(src.state_dict())
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    assert env.unwrapped.record["moves"] == 1


def _games_after_seed(env, seed: int, resets: int) -> list[dict]:
    env.reset(seed=seed)
    out = [env.state_dict()]
    for _ in range(resets):
        env.reset()
        out.append(env.state_dict())
    return out


@pytest.mark.parametrize("game", GAMES)
def test_unseeded_resets_after_a_seeded_one_continue_its_stream(game):
    """Gymnasium's rule: ``reset()`` after ``reset(seed=5)`` is reproducible."""
    a = _games_after_seed(trafficenvs.make(game, num_players=3), 5, 2)
    b = _games_after_seed(trafficenvs.make(game, num_players=3), 5, 2)
    assert a == b
    assert a[1] != a[0] and a[2] != a[1]  # the stream moves on
    fresh = trafficenvs.make(game, num_players=3)
    fresh.reset(seed=5)
    assert fresh.state_dict() == a[0]  # and a seeded reset still gives the seed's game


def test_unseeded_resets_before_any_seed_differ():
    a, b = (trafficenvs.make("traffic_jam", num_players=3) for _ in range(2))
    a.reset()
    b.reset()
    assert a.state_dict() != b.state_dict()


def test_vector_env_unseeded_resets_continue_the_seeded_stream():
    def games(v):
        v.reset(seed=5)
        first = [v.state_dict(i) for i in range(2)]
        v.reset()
        return first, [v.state_dict(i) for i in range(2)]

    a = games(trafficenvs.make_vec("traffic_jam", num_envs=2, num_players=3))
    b = games(trafficenvs.make_vec("traffic_jam", num_envs=2, num_players=3))
    assert a == b and a[0] != a[1]
