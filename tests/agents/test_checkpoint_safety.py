"""A checkpoint file cannot run code: nothing pickled in it is ever unpickled.

Each test crafts a checkpoint from a shipped one whose settings carry a pickle that,
when unpickled, creates a marker file (what an attacker's payload would do). The test
first proves the payload is live (Stable-Baselines3's own ``MaskablePPO.load`` runs it),
then loads the file through every way the package opens checkpoints: the marker must
never appear. A payload under a setting the loader rebuilds itself is ignored (the
model loads); one under a setting it does not know, or naming a class it does not
allow, is refused with a one-line error.
"""

from __future__ import annotations

import base64
import json
import os
import pathlib
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import trafficenvs  # noqa: E402
from trafficenvs.agents.checkpoint import CheckpointError, load_model  # noqa: E402
from trafficenvs.agents.ppo import PPOPolicy  # noqa: E402
from trafficenvs.agents.zoo import make_agent  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "agents" / "checkpoints" / "traffic_jam_2p.zip"


class Payload:
    """Unpickling this creates ``marker`` (any code could run instead)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.marker),))


def craft(tmp_path: Path, key: str, marker: Path, **fields) -> Path:
    """A copy of the shipped checkpoint whose ``data`` entry ``key`` is the payload."""
    out = tmp_path / f"crafted_{key}.zip"
    with zipfile.ZipFile(SHIPPED) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename == "data":
                data = json.loads(body)
                blob = base64.b64encode(pickle.dumps(Payload(marker))).decode()
                data[key] = {":type:": "<class 'object'>", ":serialized:": blob, **fields}
                body = json.dumps(data).encode()
            dst.writestr(info, body)
    return out


def test_the_crafted_payload_runs_when_sb3_unpickles_it(tmp_path):
    from sb3_contrib import MaskablePPO

    marker = tmp_path / "ran"
    path = craft(tmp_path, "evil", marker)
    MaskablePPO.load(path, device="cpu")
    assert marker.exists()  # the test's payload is live: the checks below can fail


@pytest.mark.parametrize("key, fields, refused", [
    ("evil", {}, "pickled entry 'evil'"),                      # a new entry: refused
    ("clip_range", {"value_schedule": "ConstantSchedule(val=0.2)"}, None),  # rebuilt
    ("lr_schedule", {}, None),
    ("_last_obs", {}, None),
    ("policy_class", {"__module__": "os", "__init__": "<function system.__init__ at 0>"},
     "policy class"),
    ("rollout_buffer_class", {"__module__": "evil"}, "rollout buffer"),
])
def test_no_entry_point_unpickles_a_checkpoint(tmp_path, key, fields, refused):
    marker = tmp_path / "ran"
    path = craft(tmp_path, key, marker, **fields)
    game = trafficenvs.make_game("traffic_jam", num_players=2)
    loaders = [
        lambda: load_model(path),
        lambda: PPOPolicy.load(path),
        lambda: make_agent(f"ppo:{path}", game),
        lambda: trafficenvs.agents.checkpoint.load_parameters(path),
    ]
    for load in loaders[:3]:
        if refused:
            with pytest.raises(CheckpointError, match=refused):
                load()
        else:
            load()
        assert not marker.exists()
    loaders[3]()  # the weights alone: the settings are never read
    assert not marker.exists()


def test_a_crafted_checkpoint_is_refused_by_the_command_line_without_running(tmp_path):
    marker = tmp_path / "ran"
    path = craft(tmp_path, "evil", marker)
    proc = subprocess.run(
        [sys.executable, "-m", "trafficenvs.cli", "arena", "traffic_jam", "--players", "2",
         "--games", "4", "--agents", f"random,ppo:{path}"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env=dict(os.environ, PYTHONWARNINGS="ignore"))
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "pickled entry 'evil'" in proc.stderr and "Traceback" not in proc.stderr
    assert not marker.exists()


def test_the_safe_loader_gives_the_shipped_models_exactly():
    from sb3_contrib import MaskablePPO

    for name, players in (("traffic_jam_2p", 2), ("jakarta_traffic_2p", 2)):
        path = ROOT / "agents" / "checkpoints" / f"{name}.zip"
        game = trafficenvs.make_game(name.rsplit("_", 1)[0], num_players=players)
        safe = PPOPolicy.load(path, game=game)
        trusted = MaskablePPO.load(path, device="cpu").policy  # the shipped file is ours
        ref, got = trusted.state_dict(), safe.policy.state_dict()
        assert sorted(ref) == sorted(got)
        assert all(np.array_equal(ref[k].numpy(), got[k].numpy()) for k in ref)
        assert type(safe.policy) is type(trusted)


def test_files_that_are_not_checkpoints_give_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        load_model(tmp_path / "missing.zip")
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    with pytest.raises(CheckpointError, match="not a readable checkpoint zip"):
        load_model(tmp_path / "junk.zip")
    with pytest.raises(CheckpointError, match="not a regular file"):
        load_model(tmp_path)
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.zip")
        with pytest.raises(CheckpointError, match="not a regular file"):
            load_model(tmp_path / "fifo.zip")  # would block forever if it were opened
    game = trafficenvs.make_game("traffic_jam", num_players=4)
    with pytest.raises(CheckpointError, match="another game or player count"):
        PPOPolicy.load(SHIPPED, game=game)
