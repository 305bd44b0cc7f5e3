"""Data: limits, the record and config dtypes, the observation and action layouts.

Every record field is explained where it is declared. The kernels write the
observation by the layout's offsets (``cfg.ob_<field>``).
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.layout import Field, Layout

#: compile with numba's disk cache only inside the package: this copy outside it compiles
#: per process (a cache file beside the tests would outlive edits of the drivers it is
#: compiled into)
CACHE = __name__.startswith("trafficenvs.")

MAX_PLAYERS = 4
MIN_CARS = 8  # the queue holds 8 to 15 cars at the start
MAX_CARS = 15
MAX_WAVE = 3  # cars one turn may wave through


def obs_layout(num_players: int) -> Layout:
    """A seat's view: everything is public in this game."""
    return Layout("Toll Gate observation", [
        Field("cars_left", 1, "cars still waiting at the gate", high=MAX_CARS),
        Field("last_wave", MAX_WAVE, "one-hot: how many cars the previous player waved "
              "through (all zero before the first move)"),
        Field("horizon_left", 1, "share of the move limit left (255 all, 0 none)", high=255),
    ], ranges=True)


def action_layout() -> Layout:
    return Layout("Toll Gate actions", [
        Field("wave", MAX_WAVE, "wave `a + 1` cars through; legal when that many wait"),
    ])


OBS_FIELDS = tuple(obs_layout(2).names())

CFG_DTYPE = np.dtype(
    [
        ("num_players", np.int64),  # N
        ("horizon", np.int64),  # the env's move limit (0 none), set by Game.with_horizon
        *[(f"ob_{name}", np.uint32) for name in OBS_FIELDS],  # observation offsets (uint32:
        # the compiler then knows them non-negative and drops negative-index checks)
    ],
    align=True,
)

RECORD_DTYPE = np.dtype(
    [
        ("rng_key", np.uint64),  # the game's generator (C1)
        ("rng_ctr", np.uint64),
        ("moves", np.int32),  # moves made (kept by the drivers)
        ("reward", np.float32, MAX_PLAYERS),  # this step's reward per seat
        ("cars", np.int8),  # cars still waiting
        ("cur", np.int8),  # the seat to move
        ("last", np.int8),  # cars the previous move waved through, 0 before the first
        ("over", np.bool_),  # the last car has passed
        ("winner", np.uint8, MAX_PLAYERS),  # 1 for the seat that waved the last car
    ],
    align=True,
)
