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

**The weights-only format** (what ``agents/trainer.py`` writes) needs none of that: a
zip of exactly two members, ``config.json`` (the game, its player count, the network's
architecture and layer widths, the observation bounds, the format and its version) and
``weights.pt`` (the network's state dict, written by ``torch.save`` and read back with
``torch.load(weights_only=True)``: tensors in plain containers, no objects). Any other
member, an unknown setting or an unknown weight is refused. :func:`checkpoint_format`
tells the two formats apart by the zip's members, :func:`read_weights` reads this one
and :func:`sb3_policy` makes the SB3 policy it plays as.
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


# -- the weights-only format -------------------------------------------------------------
#: the ``format`` of a weights-only checkpoint's ``config.json``
WEIGHTS_FORMAT = "trafficenvs-ppo-weights"
#: its version: a file of a later version is refused (written by a newer trafficenvs).
#: Version 2 added ``arch`` and ``prior_beta`` (the plan network and its greedy prior);
#: a plain ``mlp`` network is still written as version 1, which every reader reads
WEIGHTS_VERSION = 2
#: the network architectures of the format: SB3's ``MlpPolicy`` (``ppo.ScaledExtractor``)
#: and the plan network (``plan_policy.PlanPolicy``, with ``prior_beta`` its
#: ``prior_policy.PriorPlanPolicy``)
WEIGHTS_ARCHS = ("mlp", "plan")
#: its members, exactly
WEIGHTS_MEMBERS = ("config.json", "weights.pt")
#: the settings ``config.json`` holds (``training`` is a record of the run, unread)
CONFIG_KEYS = {"format", "version", "game", "players", "obs_dim", "num_actions", "net",
               "activation", "observation_low", "observation_high", "training", "arch",
               "prior_beta"}
#: the settings a file may leave out (``arch`` then means ``"mlp"``, no prior)
OPTIONAL_KEYS = {"training", "arch", "prior_beta"}
#: the largest ``config.json`` read
MAX_CONFIG_BYTES = 4 * 2**20


def checkpoint_format(path: str | Path) -> str:
    """``"sb3"`` for a Stable-Baselines3 zip (a ``data`` member), ``"weights"`` for the
    weights-only format (a ``config.json``); :class:`CheckpointError` otherwise."""
    names = _members(read_file(path), str(path))
    if "data" in names:
        return "sb3"
    if "config.json" in names:
        return "weights"
    raise CheckpointError(f"{path}: neither an SB3 checkpoint (no 'data' member) nor a "
                          f"weights-only one (no 'config.json')")


def _members(raw: bytes, name: str) -> list[str]:
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            return z.namelist()
    except (zipfile.BadZipFile, EOFError) as err:
        raise CheckpointError(f"{name}: not a readable checkpoint zip ({err})") from None


def weights_config(game: Any, net: Any, training: dict[str, Any] | None = None,
                   arch: str = "mlp", prior_beta: float | None = None) -> dict[str, Any]:
    """The ``config.json`` of a weights-only checkpoint for ``game`` of an
    ``MlpPolicy``-shaped network (``arch="mlp"``) or of the plan network
    (``arch="plan"``; ``prior_beta``: with the greedy prior, this its starting weight,
    the learned one being among the weights); ``net``: the hidden widths of its actor
    and of its critic. A plain network is written as version 1, so that older readers
    read it."""
    box = game.observation_box()
    config: dict[str, Any] = {
        "format": WEIGHTS_FORMAT, "version": 1, "game": game.name,
        "players": int(game.num_players), "obs_dim": int(game.obs_dim),
        "num_actions": int(game.num_actions), "net": [int(w) for w in net],
        "activation": "tanh",
        "observation_low": np.asarray(box.low).reshape(-1).tolist(),
        "observation_high": np.asarray(box.high).reshape(-1).tolist(),
        "training": dict(training or {})}
    if arch != "mlp" or prior_beta is not None:
        config.update(version=2, arch=arch, prior_beta=(None if prior_beta is None
                                                        else float(prior_beta)))
    _check_config(config, "config")
    return config


def write_weights(path: str | Path, config: dict[str, Any], state_dict: dict[str, Any]
                  ) -> Path:
    """Write a weights-only checkpoint (checked by reading it back's rules first)."""
    import torch as th

    _check_config(config, "config")
    tensors = {k: v.detach().cpu().clone() for k, v in state_dict.items()}
    _check_weights(tensors, config, "state dict")
    buf = io.BytesIO()
    th.save(tensors, buf)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("config.json", json.dumps(config, indent=1) + "\n")
        z.writestr("weights.pt", buf.getvalue())
    return path


def read_weights(path: str | Path, game: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(config, state_dict)`` of a weights-only checkpoint, nothing in it able to run
    code: its members must be exactly ``config.json`` and ``weights.pt``, the config
    only known settings, the weights only the tensors its network has (names and
    shapes). ``game``: the game it must fit (name, players, spaces and bounds).
    Raises ``FileNotFoundError`` or :class:`CheckpointError`."""
    import pickle

    import torch as th

    name = str(path)
    raw = read_file(path)
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            infos = z.infolist()
            names = sorted(i.filename for i in infos)
            if names != sorted(WEIGHTS_MEMBERS):
                extra = sorted(set(names) - set(WEIGHTS_MEMBERS))
                raise CheckpointError(
                    f"{name}: a weights-only checkpoint holds exactly config.json and "
                    f"weights.pt; this one has {names}"
                    + (f" (refused: {extra})" if extra else ""))
            sizes = {i.filename: i.file_size for i in infos}
            if sizes["config.json"] > MAX_CONFIG_BYTES or sizes["weights.pt"] > MAX_BYTES:
                raise CheckpointError(f"{name}: a member is too large")
            text = z.read("config.json").decode("utf-8")
            blob = z.read("weights.pt")
    except (zipfile.BadZipFile, UnicodeDecodeError, EOFError) as err:
        raise CheckpointError(f"{name}: not a readable checkpoint zip ({err})") from None
    try:
        config = json.loads(text)
    except json.JSONDecodeError as err:
        raise CheckpointError(f"{name}: config.json is not JSON ({err})") from None
    _check_config(config, name)
    if game is not None:
        _check_game(config, game, name)
    try:
        tensors = th.load(io.BytesIO(blob), map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, ValueError, EOFError, AttributeError,
            TypeError, KeyError) as err:
        first = str(err).strip().splitlines()[0][:200] if str(err).strip() else ""
        raise CheckpointError(f"{name}: weights.pt is not a plain dict of tensors "
                              f"({type(err).__name__}: {first}); refused unread") from None
    _check_weights(tensors, config, name)
    return config, tensors


def _check_config(config: Any, name: str) -> None:
    if not isinstance(config, dict):
        raise CheckpointError(f"{name}: config.json is not a JSON object")
    unknown = sorted(set(config) - CONFIG_KEYS)
    if unknown:
        raise CheckpointError(f"{name}: config.json has settings this loader does not "
                              f"know: {unknown}")
    missing = sorted(CONFIG_KEYS - OPTIONAL_KEYS - set(config))
    if missing:
        raise CheckpointError(f"{name}: config.json lacks {missing}")
    if config["format"] != WEIGHTS_FORMAT:
        raise CheckpointError(f"{name}: format {config['format']!r} is not "
                              f"{WEIGHTS_FORMAT!r}")
    version = config["version"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise CheckpointError(f"{name}: format version {version!r} is not a version")
    if version > WEIGHTS_VERSION:
        raise CheckpointError(f"{name}: format version {version}, newer than this "
                              f"trafficenvs reads ({WEIGHTS_VERSION}); update trafficenvs")

    def count(key: str, lo: int = 1) -> int:
        v = config[key]
        if not isinstance(v, int) or isinstance(v, bool) or v < lo:
            raise CheckpointError(f"{name}: {key} must be an int >= {lo}, got {v!r}")
        return v

    count("players")
    obs_dim = count("obs_dim")
    count("num_actions")
    if not isinstance(config["game"], str) or not config["game"]:
        raise CheckpointError(f"{name}: game must be a name, got {config['game']!r}")
    net = config["net"]
    if (not isinstance(net, list) or not net or len(net) > 16
            or any(not isinstance(w, int) or isinstance(w, bool) or not 1 <= w <= 1 << 16
                   for w in net)):
        raise CheckpointError(f"{name}: net must be a list of layer widths, got {net!r}")
    if config["activation"] != "tanh":
        raise CheckpointError(f"{name}: activation {config['activation']!r} is not tanh")
    for key in ("observation_low", "observation_high"):
        v = config[key]
        if (not isinstance(v, list) or len(v) != obs_dim
                or any(not isinstance(x, (int, float)) or isinstance(x, bool) for x in v)):
            raise CheckpointError(f"{name}: {key} must be {obs_dim} numbers")
    if not isinstance(config.get("training", {}), dict):
        raise CheckpointError(f"{name}: training must be a JSON object")
    arch = config.get("arch", "mlp")
    if arch not in WEIGHTS_ARCHS:
        raise CheckpointError(f"{name}: arch must be one of {', '.join(WEIGHTS_ARCHS)}, "
                              f"got {arch!r}")
    beta = config.get("prior_beta")
    if beta is not None and (arch != "plan" or not isinstance(beta, (int, float))
                             or isinstance(beta, bool) or not np.isfinite(beta)):
        raise CheckpointError(f"{name}: prior_beta must be a finite number, and only with "
                              f"arch 'plan'; got {beta!r} with {arch!r}")
    if version < 2 and ("arch" in config or "prior_beta" in config):
        raise CheckpointError(f"{name}: arch and prior_beta are settings of version 2, "
                              f"this file says version {version}")


def _check_game(config: dict[str, Any], game: Any, name: str) -> None:
    """Refuse a checkpoint made for another game, player count or observation."""
    mine = (config["game"], config["players"], config["obs_dim"], config["num_actions"])
    theirs = (game.name, game.num_players, game.obs_dim, game.num_actions)
    if mine != theirs:
        raise CheckpointError(
            f"{name}: model is for {mine[0]} with {mine[1]} players (observations "
            f"({mine[2]},), {mine[3]} actions); this game is {theirs[0]} with {theirs[1]} "
            f"players (({theirs[2]},), {theirs[3]})")
    box = game.observation_box()
    if (not np.array_equal(np.asarray(box.high).reshape(-1), config["observation_high"])
            or not np.array_equal(np.asarray(box.low).reshape(-1),
                                  config["observation_low"])):
        raise CheckpointError(f"{name}: model was trained with other observation bounds "
                              f"than this game's (another version or options?)")


def weight_shapes(config: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """Every tensor of the network ``config`` describes, by its SB3 name, and its shape
    (the plan network's: those of the policy :func:`build_policy` makes for it)."""
    if config.get("arch", "mlp") != "mlp":
        try:
            policy = build_policy(config)
        except (KeyError, ValueError) as err:  # a game without plan features, or unknown
            raise CheckpointError(f"no plan network for {config['game']!r} with "
                                  f"{config['players']} players: {err}") from None
        return {k: tuple(v.shape) for k, v in policy.state_dict().items()}
    d, a, net = config["obs_dim"], config["num_actions"], config["net"]
    shapes: dict[str, tuple[int, ...]] = {
        f"{k}.inv_high": (d,) for k in ("features_extractor", "pi_features_extractor",
                                        "vf_features_extractor")}
    for head in ("policy_net", "value_net"):
        width = d
        for j, w in enumerate(net):
            shapes[f"mlp_extractor.{head}.{2 * j}.weight"] = (w, width)
            shapes[f"mlp_extractor.{head}.{2 * j}.bias"] = (w,)
            width = w
    shapes.update({"action_net.weight": (a, net[-1]), "action_net.bias": (a,),
                   "value_net.weight": (1, net[-1]), "value_net.bias": (1,)})
    return shapes


def _check_weights(tensors: Any, config: dict[str, Any], name: str) -> None:
    import torch as th

    if not isinstance(tensors, dict):
        raise CheckpointError(f"{name}: weights.pt is not a dict of tensors")
    shapes = weight_shapes(config)
    unknown = sorted(set(map(str, tensors)) - set(shapes))
    missing = sorted(set(shapes) - set(tensors))
    if unknown or missing:
        raise CheckpointError(f"{name}: weights do not fit the network config.json states"
                              + (f"; unknown {unknown[:5]}" if unknown else "")
                              + (f"; missing {missing[:5]}" if missing else ""))
    for k, v in tensors.items():
        if not isinstance(v, th.Tensor) or tuple(v.shape) != shapes[k] or (
                v.dtype != th.float32):
            got = (tuple(v.shape), str(v.dtype)) if isinstance(v, th.Tensor) else type(v)
            raise CheckpointError(f"{name}: weight {k!r} should be float32 of shape "
                                  f"{shapes[k]}, got {got}")


def sb3_policy(config: dict[str, Any], state_dict: dict[str, Any], game: Any = None) -> Any:
    """The SB3 policy that ``config`` describes (:func:`build_policy`), holding
    ``state_dict``, in evaluation mode: the player of a weights-only checkpoint
    (``PPOPolicy`` plays it)."""
    policy = build_policy(config, game)
    policy.load_state_dict(state_dict, strict=True)
    policy.set_training_mode(False)
    return policy


def build_policy(config: dict[str, Any], game: Any = None) -> Any:
    """A new SB3 policy of the network ``config`` describes, with SB3's initial
    weights: ``MaskableActorCriticPolicy`` with ``ScaledExtractor`` (``arch="mlp"``),
    ``PlanPolicy`` (``"plan"``) or ``PriorPlanPolicy`` (``"plan"`` with a
    ``prior_beta``). The classes are the package's own, chosen by the checked config,
    never named by the file. Its spaces are ``game``'s or, without one, built from the
    bounds in ``config``."""
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from trafficenvs.agents.ppo import ScaledExtractor

    if game is not None:
        obs_space = game.observation_box()
    else:
        low = np.asarray(config["observation_low"])
        high = np.asarray(config["observation_high"])
        dtype = np.uint8 if low.min() >= 0 and high.max() <= 255 else np.float32
        obs_space = spaces.Box(low.astype(dtype), high.astype(dtype), dtype=dtype)
    net = list(config["net"])
    action_space = spaces.Discrete(config["num_actions"])
    if config.get("arch", "mlp") == "plan":
        from trafficenvs.agents.plan_policy import PlanPolicy, plan_policy_kwargs
        from trafficenvs.agents.prior_policy import PriorPlanPolicy

        kwargs = plan_policy_kwargs(config["players"], tuple(net), config["game"])
        beta = config.get("prior_beta")
        if beta is None:
            return PlanPolicy(obs_space, action_space, lambda _: 0.0, **kwargs)
        return PriorPlanPolicy(obs_space, action_space, lambda _: 0.0,
                               prior_beta=float(beta), **kwargs)
    return MaskableActorCriticPolicy(
        obs_space, action_space, lambda _: 0.0, net_arch={"pi": net, "vf": list(net)},
        features_extractor_class=ScaledExtractor)


__all__ = ["CONFIG_KEYS", "OPTIONAL_KEYS", "CheckpointError", "MAX_BYTES", "WEIGHTS_FORMAT",
           "WEIGHTS_ARCHS", "WEIGHTS_MEMBERS", "WEIGHTS_VERSION", "build_policy",
           "checkpoint_format", "custom_objects",
           "load_model", "load_parameters", "read_data", "read_file", "read_weights",
           "sb3_policy", "weight_shapes", "weights_config", "write_weights"]
