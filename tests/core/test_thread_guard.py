"""An env used from two threads at once refuses the second call instead of corrupting.

Numba's parallel loops run without the GIL, so two threads stepping one vectorised env
would interleave their writes to the same games. The env holds a lock around each
call; here one thread is held inside ``step`` (its compiled loop replaced by one that
waits) while another calls ``step``, ``reset`` or ``observe``: each is refused with a
``RuntimeError`` that says to use one env per thread, and the games are untouched.
"""

from __future__ import annotations

import copy
import pickle
import threading

import numpy as np
import pytest

import trafficenvs
from trafficenvs.core import driver, sampler


def _held_inside_step(env, monkeypatch, call):
    """Run ``call`` while another thread is inside ``env.step``; what it raised."""
    inside, release = threading.Event(), threading.Event()
    real = driver.batch_step

    def waiting(*args, **kwargs):
        inside.set()
        release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(driver, "batch_step", waiting)
    out = env.last
    acts = np.zeros(env.num_envs, np.int64)
    sampler.sample_legal(out.action_mask, sampler.rng_states(env.num_envs, 0), acts)
    worker = threading.Thread(target=env.step, args=(acts,))
    worker.start()
    assert inside.wait(10)
    try:
        call(acts)
    except RuntimeError as err:
        return err
    finally:
        release.set()
        worker.join(10)
    return None


@pytest.mark.parametrize("what", ["step", "reset", "observe", "load_state_dict"])
def test_a_second_thread_is_refused_while_one_steps(monkeypatch, what):
    env = trafficenvs.make_vec("jamming_traffic", num_envs=8)
    env.reset(seed=0)
    state = env.state_dict(3)
    calls = {
        "step": lambda a: env.step(a),
        "reset": lambda a: env.reset(seed=1),
        "observe": lambda a: env.observe(np.zeros(8, np.int64)),
        "load_state_dict": lambda a: env.load_state_dict(3, state),
    }
    err = _held_inside_step(env, monkeypatch, calls[what])
    assert err is not None and "one env per thread" in str(err)
    monkeypatch.undo()
    env.step(np.asarray(sampler.sample_legal(env.last.action_mask, sampler.rng_states(8, 5),
                                            np.zeros(8, np.int64))))  # free again


def test_the_aec_env_refuses_a_second_thread_too():
    env = trafficenvs.make("traffic_jam", wrapped=False, num_players=2)
    env.reset(seed=0)
    env._guard._lock.acquire()  # another thread inside a call  # noqa: SLF001
    try:
        with pytest.raises(RuntimeError, match="one env per thread"):
            env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    finally:
        env._guard._lock.release()  # noqa: SLF001


def test_copies_and_pickles_of_an_env_get_their_own_free_lock():
    env = trafficenvs.make_vec("traffic_jam", num_envs=4)
    env.reset(seed=0)
    env._guard._lock.acquire()  # noqa: SLF001
    try:
        for other in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
            assert other._guard is not env._guard  # noqa: SLF001
            other.reset(seed=0)
    finally:
        env._guard._lock.release()  # noqa: SLF001
