"""Search agents: flat Monte Carlo (``flatmc``) and information-set MCTS (``mcts``).

They play through the shared batched policy interface, with one addition: a search
needs the games themselves, so it declares ``needs_records = True`` and the arena (and
the training opponents' pool) passes ``records=`` (the rows' game records) to
``act``. It never reads a record directly: every rollout starts from a copy
determinized for the seat to move (``k_determinize``, see ``core/verbs.py``), so the
search sees what that seat sees and nothing else. The kernels are in
``search_kernels.py``.

Spelled on the command line as ``flatmc:n=64,depth=200`` or
``mcts:sims=400,c=1.4,depth=100,seed=3,rollout=greedy``. ``rollout=random`` (the
default) plays uniformly random legal moves after the tree; ``rollout=greedy`` plays
the game's rule-based player for every seat (on the determinized copy, so it too sees
nothing hidden), slower per move but far closer to real play; ``depth`` cuts a
rollout off, and the game's ``evaluate`` verb values the position where it stopped.
``top=K`` searches only a shortlist at the root: the ``K`` moves whose position one
move later ``evaluate`` likes best, plus the rollout player's own move (``top=0``, the
default: every legal move). ``turns=T`` also ends a rollout when the deciding seat's
``T``-th next turn begins, so every estimate is made at the same point of the round.
"""

from __future__ import annotations

import time
from types import ModuleType
from typing import Any

import numpy as np

from trafficenvs.core.game import Game
from trafficenvs.core.sampler import rng_states
from trafficenvs.core.verbs import EVAL_SCRATCH, has_verb


def rollout_player(game: Game, name: str) -> Any:
    """The game's rule-based player, whose ``greedy`` verb (gathered in the game's
    ``verbs.py``) plays the rollouts."""
    from trafficenvs.core.spec import get_spec

    cls = get_spec(game.name).greedy_class() if game.name else None
    if cls is None or not has_verb(game.record_dtype, "greedy"):
        raise ValueError(f"{name}: {game.name} has no rule-based player that can play "
                         "rollouts; use rollout=random")
    return cls(game)

#: per kind: option -> (type, default)
OPTIONS: dict[str, dict[str, tuple[type, Any]]] = {
    "flatmc": {"n": (int, 64), "depth": (int, 200), "rollout": (str, "random"),
               "top": (int, 0), "turns": (int, 0), "seed": (int, 0)},
    "mcts": {"sims": (int, 400), "c": (float, 1.4), "depth": (int, 100),
             "rollout": (str, "random"), "top": (int, 0), "turns": (int, 0),
             "seed": (int, 0)},
}
ROLLOUTS = ("random", "greedy")


def parse_search_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"mcts:sims=400,c=2"`` -> ``("mcts", {"sims": 400, "c": 2.0, ...defaults})``."""
    kind, _, rest = spec.partition(":")
    if kind not in OPTIONS:
        raise ValueError(f"unknown search agent {kind!r}; known: {sorted(OPTIONS)}")
    opts = {k: d for k, (_, d) in OPTIONS[kind].items()}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, val = item.partition("=")
        if not eq or key not in OPTIONS[kind]:
            raise ValueError(f"{kind}: bad option {item!r}; options: "
                             f"{', '.join(f'{k}=' for k in OPTIONS[kind])}")
        typ = OPTIONS[kind][key][0]
        try:
            opts[key] = typ(val)
        except ValueError:
            raise ValueError(f"{kind}: {key} must be {typ.__name__}, got {val!r}") from None
    for key in ("n", "sims"):
        if key in opts and opts[key] < 1:
            raise ValueError(f"{kind}: {key} must be at least 1, got {opts[key]}")
    if opts["turns"] < 0:
        raise ValueError(f"{kind}: turns must be at least 0 (0: cut by depth only), got "
                         f"{opts['turns']}")
    if opts["top"] < 0:
        raise ValueError(f"{kind}: top must be at least 0 (0: every legal move), got "
                         f"{opts['top']}")
    if opts["depth"] < 0:
        raise ValueError(f"{kind}: depth must be at least 0, got {opts['depth']}")
    if opts["rollout"] not in ROLLOUTS:
        raise ValueError(f"{kind}: rollout must be one of {', '.join(ROLLOUTS)}, got "
                         f"{opts['rollout']!r}")
    if opts.get("c", 1.0) < 0:
        raise ValueError(f"{kind}: c must be non-negative, got {opts['c']}")
    return kind, opts


def compiled_kernels() -> ModuleType:
    """The compiled search, cached with the package's kernels: it is compiled against
    each game's verbs, so its cache must change whenever a game's code does."""
    from trafficenvs.numba_cache import package_cache

    with package_cache():
        from trafficenvs.agents import search_kernels
    return search_kernels


class SearchPolicy:
    """A flat Monte Carlo or IS-MCTS player for ``game`` (see the module)."""

    needs_records = True

    def __init__(self, game: Game, spec: str = "flatmc", name: str | None = None):
        self.kind, self.options = parse_search_spec(spec)
        self.game = game
        self.name = name or spec
        self.seed = int(self.options["seed"])
        self._states: np.ndarray | None = None
        self._scratch: dict[str, Any] = {}
        self.rollout_player = None
        if self.options["rollout"] == "greedy":
            self.rollout_player = rollout_player(game, self.name)
        #: decisions made, their total wall time and rollouts (for the arena's report)
        self.decisions = 0
        self.seconds = 0.0
        self.simulations = 0

    def _buffers(self, b: int) -> dict[str, Any]:
        s = self._scratch
        if s.get("b") is not None and s["b"].shape[0] >= b:
            return s
        g = self.game
        n = g.num_players
        s.clear()
        s["b"] = np.zeros(b)
        s["work"] = g.new_records(b)
        s["wmask"] = np.zeros((b, g.num_actions), np.bool_)
        s["ret"] = np.zeros((b, n), np.float64)
        s["values"] = np.zeros((b, g.num_actions), np.float64)
        s["evs"] = np.zeros((b, EVAL_SCRATCH), np.float64)
        s["keep"] = np.zeros((b, g.num_actions), np.bool_)
        s["gs"] = () if self.rollout_player is None else self.rollout_player.rollout_scratch(b)
        if self.kind == "mcts":
            m = self.options["sims"] + 1
            for key in ("parent", "first", "sib", "act", "path"):
                s[key] = np.zeros((b, m), np.int64)
            s["mover"] = np.zeros((b, m), np.int64)
            s["visits"] = np.zeros((b, m), np.float64)
            s["value"] = np.zeros((b, m), np.float64)
            s["avail"] = np.zeros((b, m), np.float64)
        return s

    def seed_rows(self, seed: int) -> None:
        """Restart the rows' generators (the same seed replays the same decisions)."""
        self.seed = int(seed)
        self._states = None

    def act(self, observation: np.ndarray, action_mask: np.ndarray,
            current_player: np.ndarray, records: np.ndarray | None = None) -> np.ndarray:
        """The search's move for each row; ``records`` are the rows' games."""
        K = compiled_kernels()

        if records is None:
            raise ValueError(f"{self.name} searches the games: pass records= (the rows' game "
                             "records; the arena does)")
        g = self.game
        recs = np.ascontiguousarray(records)
        mask = np.ascontiguousarray(action_mask, np.bool_)
        seats = np.ascontiguousarray(current_player, np.int64)
        b = recs.shape[0]
        if recs.dtype != g.record_dtype or mask.shape != (b, g.num_actions) or seats.shape != (b,):
            raise ValueError(f"{self.name}: records ({b},) of {g.name}, action_mask "
                             f"({b}, {g.num_actions}) and current_player ({b},) expected")
        if b and (seats.min() < 0 or seats.max() >= g.num_players):
            raise ValueError(f"{self.name}: current_player must be seats 0..{g.num_players - 1}")
        if b == 0:
            return np.zeros(0, np.int64)
        if self._states is None or self._states.shape[0] < b:
            self._states = rng_states(max(b, 1), self.seed)
        s = self._buffers(b)
        out = np.zeros(b, np.int64)
        cfg = g.cfg
        t0 = time.perf_counter()
        o = self.options
        if self.kind == "flatmc":
            K.flat_mc(recs, cfg, seats, mask, o["n"], o["depth"], g.num_players,
                      self._states[:b], s["work"][:b], s["wmask"][:b], s["ret"][:b], out,
                      s["values"][:b], s["gs"], s["evs"][:b], o["top"], s["keep"][:b],
                      o["turns"])
            self.simulations += int(s["keep"][:b].sum()) * o["n"]
        else:
            K.ismcts(recs, cfg, seats, mask, o["sims"], o["c"], o["depth"], g.num_players,
                     self._states[:b], s["work"][:b], s["wmask"][:b], s["ret"][:b],
                     s["parent"][:b], s["first"][:b], s["sib"][:b], s["act"][:b],
                     s["mover"][:b], s["visits"][:b], s["value"][:b], s["avail"][:b],
                     s["path"][:b], out, s["values"][:b], s["gs"], s["evs"][:b], o["top"],
                     s["keep"][:b], o["turns"])
            self.simulations += b * o["sims"]
        self.seconds += time.perf_counter() - t0
        self.decisions += b
        return out

    def last_values(self, rows: int) -> np.ndarray:
        """``(rows, num_actions)``: what the last :meth:`act` of ``rows`` rows found each
        move worth for the seat to move (the mean over its rollouts), NaN for a move
        not searched (illegal, or off the ``top`` shortlist); flatmc only. A copy: the
        next ``act`` reuses the buffer."""
        if self.kind != "flatmc":
            raise ValueError(f"{self.name}: only flatmc keeps a value per move")
        values = self._scratch.get("values")
        if values is None or rows > self._scratch["b"].shape[0]:
            raise ValueError(f"{self.name}: no act of {rows} rows to read values from")
        return values[:rows].copy()

    def report(self) -> dict[str, float]:
        """Decisions, milliseconds per decision (batched) and rollouts per second."""
        return {"decisions": self.decisions,
                "ms_per_decision": 1000 * self.seconds / max(self.decisions, 1),
                "simulations_per_s": self.simulations / max(self.seconds, 1e-9)}
