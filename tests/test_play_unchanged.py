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

from tests.play_digest import CONFIGS, DATA, digest

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


@pytest.mark.slow  # about 3 minutes: 13 configurations under the simulator
def test_play_digests_of_the_gpu_env_equal_the_cpu_envs(tmp_path):
    """The GPU mode (``--device cuda``), run under numba-cuda's simulator at the tiny
    size, gives every configuration the digest the compiled CPU env gives it."""
    pytest.importorskip("numba_cuda", reason="the [gpu] extra (numba-cuda) is not installed")
    import os
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    out = tmp_path / "gpu.json"
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", NUMBA_DISABLE_JIT="1",
               PYTHONWARNINGS="ignore", NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    proc = subprocess.run([sys.executable, str(here / "play_digest.py"), "--size", "tiny",
                           "--device", "cuda", "--out", str(out)], env=env,
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    gpu = json.loads(out.read_text())
    assert sorted(gpu) == sorted(CONFIGS)
    differ = [name for name in CONFIGS if digest(name, "tiny")[0] != gpu[name]]
    assert not differ, f"the GPU env played differently in {differ}"


_TEMPLATE_DIGEST = r"""
import sys, warnings
warnings.simplefilter("ignore")
import trafficenvs
import play_digest
from toy_game import SPEC

trafficenvs.register_game(SPEC)
play_digest.CONFIGS["toll-gate-3p"] = ("toll_gate", {"num_players": 3})
print("digest", play_digest.digest("toll-gate-3p", "tiny", device=sys.argv[1])[0])
"""


@pytest.mark.slow
def test_the_template_games_gpu_play_digest_equals_its_cpu_digest(tmp_path):
    """The template game (registered from its spec, no GPU entry of its own) plays the
    same on the GPU env, under the simulator, as on the compiled CPU env."""
    pytest.importorskip("numba_cuda", reason="the [gpu] extra (numba-cuda) is not installed")
    import os
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    base = dict(os.environ, PYTHONWARNINGS="ignore",
                PYTHONPATH=os.pathsep.join([str(here), os.environ.get("PYTHONPATH", "")]))
    got = {}
    for device, extra in (("cpu", {}), ("cuda", {"NUMBA_ENABLE_CUDASIM": "1",
                                                 "NUMBA_DISABLE_JIT": "1"})):
        env = dict(base, NUMBA_CACHE_DIR=str(tmp_path / device), **extra)
        proc = subprocess.run([sys.executable, "-c", _TEMPLATE_DIGEST, device], env=env,
                              capture_output=True, text=True, timeout=900, cwd=here)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
        got[device] = proc.stdout.split("digest ")[-1].strip()
    assert len(got["cpu"]) == 64 and got["cpu"] == got["cuda"]
