"""Shared machinery: the record RNG (C1), zero-sum rewards (C2), verb registration."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from trafficenvs.core import sampler
from trafficenvs.core.rewards import write_zero_sum
from trafficenvs.core.rng import rng_below, rng_seed
from trafficenvs.core.verbs import register_kernels


@njit  # not cached: a test file is outside the package's cache (see numba_cache.py)
def _draws(states, n, k):
    out = np.empty((states.shape[0], k), np.int64)
    for i in range(states.shape[0]):
        for j in range(k):
            out[i, j] = rng_below(states[i], n)
    return out


def test_same_seed_same_numbers_and_a_copied_record_continues_identically():
    a = sampler.rng_states(4, 123)
    b = sampler.rng_states(4, 123)
    np.testing.assert_array_equal(_draws(a, 6, 50), _draws(b, 6, 50))
    c = a.copy()
    np.testing.assert_array_equal(_draws(a, 6, 10), _draws(c, 6, 10))


def test_rng_below_is_uniform_and_in_range():
    st = sampler.rng_states(1, 7)
    d = _draws(st, 6, 60000)[0]
    assert d.min() == 0 and d.max() == 5
    counts = np.bincount(d, minlength=6)
    # chi-square with 5 dof: 99.9th percentile is 20.5
    chi2 = ((counts - 10000) ** 2 / 10000).sum()
    assert chi2 < 20.5


def test_different_seeds_give_different_streams():
    st = np.zeros(2, sampler.RNG_DTYPE)
    rng_seed(st[0], np.uint64(1))
    rng_seed(st[1], np.uint64(2))
    d = _draws(st, 1000, 20)
    assert not np.array_equal(d[0], d[1])


@pytest.mark.parametrize(
    ("winners", "expected"),
    [
        ([1, 0, 0, 0], [1, -1 / 3, -1 / 3, -1 / 3]),
        ([1, 1, 0, 0], [1 / 3, 1 / 3, -1 / 3, -1 / 3]),
        ([1, 1, 1], [0, 0, 0]),
        ([0, 1], [-1, 1]),
    ],
)
def test_zero_sum_rewards_follow_C2(winners, expected):
    r = np.zeros(len(winners), np.float32)
    write_zero_sum(r, np.array(winners, np.uint8), len(winners))
    np.testing.assert_allclose(r, expected, atol=1e-6)
    assert abs(r.sum()) < 1e-6


def test_register_kernels_needs_every_verb_and_the_common_fields():
    dt = np.dtype([("rng_key", np.uint64), ("rng_ctr", np.uint64), ("moves", np.int32),
                   ("reward", np.float32, 2)])
    with pytest.raises(ValueError, match="missing verbs"):
        register_kernels(dt, init=None)
    with pytest.raises(ValueError, match="common fields"):
        register_kernels(np.dtype([("x", np.int8)]), **dict.fromkeys(
            ("init", "step", "is_legal", "legal_mask", "observe", "current_player", "is_over")))


def test_sample_legal_picks_only_legal_actions_uniformly():
    mask = np.zeros((3, 10), bool)
    mask[0, [2, 5]] = True
    mask[1, 9] = True
    st = sampler.rng_states(3, 0)
    out = np.zeros(3, np.int64)
    seen = set()
    for _ in range(200):
        sampler.sample_legal(mask, st, out)
        assert out[0] in (2, 5) and out[1] == 9 and out[2] == -1
        seen.add(int(out[0]))
    assert seen == {2, 5}



def test_sample_legal_takes_the_legal_action_its_bits_rank():
    """The pick is the k-th legal action, k = (top 32 bits x legal count) >> 32, for
    any mask length: less than a word, whole words, groups of 4 words (whose byte
    lanes are summed before one multiply), groups plus single words, and a tail of
    bytes that does not fill a word. A bool row and its uint8 view pick alike."""
    rng = np.random.default_rng(0)
    for length in (1, 7, 8, 9, 33, 329, 2040, 2048, 2049, 4100):
        for p in (0.0, 0.02, 0.5, 1.0):
            mask = rng.random((16, length)) < p
            bits = rng.integers(0, 2**63, 16).astype(np.uint64) * np.uint64(2)
            for i in range(16):
                legal = np.flatnonzero(mask[i])
                k = (int(bits[i]) >> 32) * len(legal) >> 32
                want = legal[k] if len(legal) else -1
                assert sampler.pick_legal(mask[i], bits[i]) == want, (length, p, i)
                assert sampler.pick_legal(mask[i].view(np.uint8), bits[i]) == want


@pytest.mark.parametrize("threads", [1, 2])
def test_sample_legal_batch_picks_the_ranked_action_of_every_row(threads):
    """The batched sampler (serial and parallel builds) draws each row's bits from its
    own RNG record and takes the k-th legal action of that row, for a batch large
    enough to run the parallel build."""
    from trafficenvs.core.rng import rng_next

    rng = np.random.default_rng(1)
    for length in (212, 329, 600):
        mask = rng.random((512, length)) < 0.05
        mask[7] = False
        st = sampler.rng_states(512, 3)
        ref = st.copy()
        out = np.zeros(512, np.int64)
        sampler.sample_legal(mask, st, out, threads=threads)
        for i in range(512):
            bits = rng_next(ref[i : i + 1][0])
            legal = np.flatnonzero(mask[i])
            k = (int(bits) >> 32) * len(legal) >> 32
            assert out[i] == (legal[k] if len(legal) else -1), (length, i)

_PLAY = """
import json, sys, warnings, numpy as np
warnings.simplefilter("ignore")
import trafficenvs
game, players, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
v = trafficenvs.make_vec(game, num_envs=2, num_players=players)
o = v.reset(seed=5)
final = []
for _ in range(steps):
    o = v.step(np.array([np.flatnonzero(m)[-1] for m in o.action_mask]))
    final += [v.game.to_dict(o.final_records[i]) for i in np.flatnonzero(o.terminated)]
print(json.dumps({"final": final, "rewards": o.rewards.tolist(), "obs": o.observation.tolist(),
                  "next": [v.state_dict(i) for i in range(2)]}))
"""


@pytest.mark.parametrize("game,players,steps", [("traffic_jam", 3, 36),
                                                 ("jamming_traffic", 2, 60),
                                                 ("jakarta_traffic", 2, 60)])
def test_kernels_run_as_plain_python_and_agree_with_the_compiled_ones(game, players, steps):
    """NUMBA_DISABLE_JIT=1 runs the very same kernels in Python (for debugging, and the
    benchmark's pure-Python figure): every game, every helper (the intrinsics too)."""
    import json
    import os
    import subprocess
    import sys

    runs = []
    for flag in ("0", "1"):
        res = subprocess.run([sys.executable, "-c", _PLAY, game, str(players), str(steps)],
                             capture_output=True, text=True,
                             env=dict(os.environ, NUMBA_DISABLE_JIT=flag))
        assert res.returncode == 0, res.stderr[-3000:]
        runs.append(json.loads(res.stdout))
    assert runs[0] == runs[1]
    if game == "traffic_jam":
        assert runs[0]["final"] and runs[0]["final"][0]["over"] is True
