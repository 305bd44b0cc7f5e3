"""Loading MaskablePPO checkpoints without running code from the file.

A Stable-Baselines3 ``.zip`` holds its weights as ``.pth`` members (SB3 reads them with
``torch.load(weights_only=True)``: tensors only) and its settings in a JSON member,
``data``, where every value JSON cannot hold (the policy class, the spaces, the
schedules, the last observations) is a base64 **cloudpickle**. SB3's own ``load``
unpickles each of them, and unpickling runs whatever code the file asks for: a
checkpoint from someone else is a program.

This loader never unpickles. It reads the file once (a regular file, at most
:data:`MAX_BYTES`), and for every pickled entry of ``data`` it supplies the object
itself through SB3's ``custom_objects`` (which SB3 then uses instead of unpickling):

- the policy class and its feature extractor, chosen from an allow-list by the module
  and class names that SB3 writes beside each pickle as plain text;
- the spaces, built from the game (or, without one, from the shapes written beside
  them: the bounds the network uses are among its weights);
- the schedules, constants read from their text (they only matter to training);
- the rollout buffer class (MaskablePPO's) and the last rollout's leftovers (empty).

A pickled entry the loader does not know is refused with :class:`CheckpointError`
before anything is read from it. Plain JSON entries are read as JSON. RLlib
checkpoints are a different matter: they are pickles throughout, to be opened only
from a source you trust (docs/rllib.md).
"""

from __future__ import annotations

import io
import json
import re
import stat
import zipfile
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

#: the largest checkpoint file read (the shipped ones are 6-8 MB)
MAX_BYTES = 512 * 2**20
#: the largest ``data`` member (JSON) read
MAX_DATA_BYTES = 64 * 2**20


class CheckpointError(ValueError):
    """A checkpoint file that is not one, or holds what the safe loader refuses."""


#: (module, class) of the policies a checkpoint may name
POLICIES = {
    ("sb3_contrib.common.maskable.policies", "MaskableActorCriticPolicy"):
        ("sb3_contrib.common.maskable.policies", "MaskableActorCriticPolicy"),
    ("trafficenvs.agents.plan_policy", "PlanPolicy"):
        ("trafficenvs.agents.plan_policy", "PlanPolicy"),
    ("trafficenvs.agents.prior_policy", "PriorPlanPolicy"):
        ("trafficenvs.agents.prior_policy", "PriorPlanPolicy"),
}
#: the feature extractors, by the text SB3 writes for them
EXTRACTORS = {
    "<class 'trafficenvs.agents.ppo.ScaledExtractor'>": ("trafficenvs.agents.ppo",
                                                         "ScaledExtractor"),
    "<class 'trafficenvs.agents.plan_policy.PlanExtractor'>": ("trafficenvs.agents.plan_policy",
                                                              "PlanExtractor"),
}
#: pickled entries with no use once loaded (the last rollout's leftovers)
EMPTY = {"_last_obs": None, "_last_episode_starts": None, "_last_original_obs": None,
         "action_noise": None}


def _class(where: tuple[str, str]) -> type:
    import importlib

    return getattr(importlib.import_module(where[0]), where[1])


def read_file(path: str | Path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of ``path``: a regular file of at most ``limit`` bytes (a FIFO, a
    device or a folder is refused before it is opened for reading)."""
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"no checkpoint at {path}") from None
    except OSError as err:
        raise CheckpointError(f"{path}: cannot read it ({err.strerror or err})") from None
    if not stat.S_ISREG(st.st_mode):
        raise CheckpointError(f"{path}: not a regular file")
    if st.st_size > limit:
        raise CheckpointError(f"{path}: {st.st_size} bytes, more than a checkpoint's "
                              f"{limit} bytes")
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise CheckpointError(f"{path}: more than a checkpoint's {limit} bytes")
    return data


def read_data(raw: bytes, name: str) -> dict[str, Any]:
    """The ``data`` member of a checkpoint's bytes, as JSON (nothing unpickled)."""
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            info = z.getinfo("data")
            if info.file_size > MAX_DATA_BYTES:
                raise CheckpointError(f"{name}: its settings ('data') are too large")
            text = z.read("data").decode("utf-8")
    except KeyError:
        raise CheckpointError(f"{name}: not an SB3 checkpoint (no 'data' member)") from None
    except (zipfile.BadZipFile, UnicodeDecodeError, EOFError) as err:
        raise CheckpointError(f"{name}: not a readable checkpoint zip ({err})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise CheckpointError(f"{name}: its settings are not JSON ({err})") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{name}: its settings are not a JSON object")
    return data


def _pickled(item: Any) -> bool:
    return isinstance(item, dict) and ":serialized:" in item


def _policy_class(item: dict[str, Any], name: str) -> type:
    module = item.get("__module__")
    # SB3 writes the class's own functions beside the pickle: "<function Name.f at 0x..>"
    names = {m.group(1) for v in item.values() if isinstance(v, str)
             for m in [re.match(r"<function (\w+)\.\w+ at ", v)] if m}
    key = (module, names.pop() if len(names) == 1 else None)
    if key not in POLICIES:
        raise CheckpointError(f"{name}: policy class {key[1]!r} of module {module!r} is "
                              f"not one this package loads")
    return _class(POLICIES[key])


def _policy_kwargs(item: dict[str, Any], name: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in item.items():
        if k in (":type:", ":serialized:"):
            continue
        if k == "features_extractor_class":
            if v not in EXTRACTORS:
                raise CheckpointError(f"{name}: feature extractor {v!r} is not one this "
                                      f"package loads")
            out[k] = _class(EXTRACTORS[v])
        elif k in ("net_arch", "features_extractor_kwargs", "prior_beta") and (
                isinstance(v, (dict, list, int, float))):
            out[k] = v
        else:
            raise CheckpointError(f"{name}: policy setting {k!r} ({str(v)[:60]}) is not "
                                  f"one this package loads")
    return out


def _schedule(item: dict[str, Any]) -> Any:
    """A constant schedule of the value written beside the pickle (training only)."""
    from stable_baselines3.common.utils import ConstantSchedule, FloatSchedule

    m = re.search(r"val=([-+0-9.eE]+)", str(item.get("value_schedule", "")))
    return FloatSchedule(ConstantSchedule(float(m.group(1)) if m else 0.0))


def _spaces(data: dict[str, Any], game: Any, name: str) -> tuple[Any, Any]:
    """The observation and action spaces: the game's, checked against the shapes the
    file states; without a game, boxes of those shapes."""
    from gymnasium import spaces

    def text(key: str, field: str) -> str:
        item = data.get(key)
        return str(item.get(field, "")) if isinstance(item, dict) else ""

    try:
        shape = tuple(int(x) for x in re.findall(r"\d+", text("observation_space", "_shape")))
        n = int(text("action_space", "n"))
    except ValueError:
        raise CheckpointError(f"{name}: its spaces are not stated") from None
    if game is not None:
        if shape != (game.obs_dim,) or n != game.num_actions:
            raise CheckpointError(
                f"{name}: model expects observations {shape} and {n} actions; this game "
                f"has ({game.obs_dim},) and {game.num_actions} (another game or player count?)")
        return game.observation_box(), spaces.Discrete(game.num_actions)
    if len(shape) != 1 or n < 1:
        raise CheckpointError(f"{name}: unexpected spaces {shape}, {n}")
    return (spaces.Box(0, 255, shape, np.uint8), spaces.Discrete(n))


def custom_objects(data: dict[str, Any], game: Any = None, name: str = "checkpoint"
                   ) -> dict[str, Any]:
    """An object for every pickled entry of ``data`` (see the module), or
    :class:`CheckpointError` for an entry this loader does not know."""
    from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer

    out: dict[str, Any] = {}
    obs_space = act_space = None
    for key, item in data.items():
        if not _pickled(item):
            continue
        if key == "policy_class":
            out[key] = _policy_class(item, name)
        elif key == "policy_kwargs":
            out[key] = _policy_kwargs(item, name)
        elif key in ("observation_space", "action_space"):
            if obs_space is None:
                obs_space, act_space = _spaces(data, game, name)
            out[key] = obs_space if key == "observation_space" else act_space
        elif key in ("lr_schedule", "clip_range", "clip_range_vf"):
            out[key] = _schedule(item)
        elif key == "rollout_buffer_class":
            if item.get("__module__") != "sb3_contrib.common.maskable.buffers":
                raise CheckpointError(f"{name}: rollout buffer of module "
                                      f"{item.get('__module__')!r} is not MaskablePPO's")
            out[key] = MaskableRolloutBuffer
        elif key in ("ep_info_buffer", "ep_success_buffer"):
            out[key] = deque(maxlen=100)
        elif key in EMPTY:
            out[key] = EMPTY[key]
        else:
            raise CheckpointError(
                f"{name}: holds a pickled entry {key!r} that this loader does not know; "
                "pickles can run code, so the file is refused")
    return out


def load_model(path: str | Path, game: Any = None, device: str = "cpu") -> Any:
    """A ``MaskablePPO`` from the checkpoint at ``path``, nothing in it unpickled.

    ``game`` (a :class:`~trafficenvs.core.game.Game`): its spaces are used, and a
    checkpoint made for other spaces is refused. Raises ``FileNotFoundError`` or
    :class:`CheckpointError` (a ``ValueError``) with the file's name.
    """
    from sb3_contrib import MaskablePPO

    name = str(path)
    raw = read_file(path)
    objects = custom_objects(read_data(raw, name), game, name)
    try:
        return MaskablePPO.load(io.BytesIO(raw), device=device, custom_objects=objects)
    except (zipfile.BadZipFile, KeyError, RuntimeError, ValueError, TypeError) as err:
        raise CheckpointError(f"{name}: cannot load it ({type(err).__name__}: "
                              f"{str(err)[:200]})") from None


def load_parameters(path: str | Path) -> dict[str, Any]:
    """The tensors of a checkpoint (``{"policy": state_dict, ...}``), its settings not
    read at all (for continuing training from it)."""
    from stable_baselines3.common.save_util import load_from_zip_file

    raw = read_file(path)
    read_data(raw, str(path))  # a zip with settings: what SB3 would write
    try:
        _, params, _ = load_from_zip_file(io.BytesIO(raw), load_data=False, device="cpu")
    except (zipfile.BadZipFile, KeyError, RuntimeError, ValueError) as err:
        raise CheckpointError(f"{path}: cannot read its weights ({type(err).__name__}: "
                              f"{str(err)[:200]})") from None
    return params


__all__ = ["CheckpointError", "MAX_BYTES", "custom_objects", "load_model", "load_parameters",
           "read_data", "read_file"]
