"""Ray RLlib (new API stack) support: a ``MultiAgentEnv``, an action-masking RLModule,
self-play with a policy mapping, and ``trafficenvs train --backend rllib``.

Install with ``pip install "trafficenvs[rllib]"`` (``ray[rllib]``; torch CPU first, see
``docs/rllib.md``). Importing this package does not import ray: the names below load
their module on first use, so ``import trafficenvs`` (and this package) works without
ray, and only using them needs it.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the submodule that defines it (loaded, with ray, on first access)
_EXPORTS = {
    "TrafficMultiAgentEnv": "env",
    "env_config": "env",
    "register_envs": "env",
    "MaskedPPOTorchRLModule": "modules",
    "PolicyRLModule": "modules",
    "masked_logits": "modules",
    "SelfPlayMapping": "selfplay",
    "build_config": "selfplay",
    "RLlibTrainConfig": "training",
    "train": "training",
}

__all__ = sorted(_EXPORTS)


def require_ray() -> None:
    """Raise an ImportError that says how to install ray when it is missing."""
    try:
        import ray  # noqa: F401
        import ray.rllib  # noqa: F401
    except ImportError as err:
        raise ImportError(
            "trafficenvs.rllib needs Ray RLlib: pip install \"trafficenvs[rllib]\" "
            "(or pip install \"ray[rllib]==2.60.0\"; install the CPU build of torch first)"
        ) from err


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    require_ray()
    module = importlib.import_module(f"{__name__}.{_EXPORTS[name]}")
    return getattr(module, name)
