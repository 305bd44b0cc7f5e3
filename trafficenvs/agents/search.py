"""Search agents: flat Monte Carlo (``flatmc``), information-set MCTS (``mcts``) and
the Gumbel search with priors and values (``gumbel``, ``gumbel_kernels.py``).

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

``gumbel:n=64,m=16,...`` is the search of Danihelka et al. (ICLR 2022): Gumbel-top-m
root candidates and sequential halving, Gumbel MuZero's selection below the root, each
node's prior logits and each leaf's value from an evaluator: the compiled one (the
rule-based move's ``bonus``, the one-move-ahead score's ``beta`` at the root, values
by rollouts as above) or a network passed as ``evaluator=`` (``(obs, mask) ->
(logits, values)``), called once per simulation on every row's pending leaf together.
``mix=W`` (with a network) values each leaf by ``(1 - W)`` times the network's value
plus ``W`` times a rollout from it (``rollout``, ``depth``, ``turns`` as above):
AlphaGo's mixed evaluation, for games whose positions a network values poorly.
Its improved policy (:meth:`SearchPolicy.last_policy`) is expert iteration's target.

A bare name (``flatmc``, ``mcts``, ``gumbel``) is the game's preset: the setting its
spec names (``GameSpec.search_presets``; ``trafficenvs arena GAME --list-agents``).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
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
    "gumbel": {"n": (int, 64), "nper": (int, 0), "m": (int, 16), "c_visit": (float, 50.0),
               "c_scale": (float, 0.1), "gscale": (float, 1.0), "prior": (str, "greedy"),
               "bonus": (float, 2.0), "beta": (float, 0.0), "width": (int, 0),
               "depth": (int, 200), "rollout": (str, "random"), "turns": (int, 0),
               "net": (str, ""), "mix": (float, 0.0), "seed": (int, 0)},
}
ROLLOUTS = ("random", "greedy")
#: a leaf evaluator: observations (k, obs_dim) and legal masks (k, A) of the seats to
#: move -> prior logits (k, A) and values (k,) for those seats, in the results' scale
Evaluator = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
PRIORS = ("greedy", "uniform")


def resolve_preset(game: Game, spec: str) -> str:
    """A bare search name (``"gumbel"``) -> the setting ``game``'s spec names for it
    (``GameSpec.search_presets``); any other spec unchanged (options given keep the
    defaults of the others)."""
    spec = spec.strip()
    if spec in OPTIONS:
        gspec = getattr(game, "spec", None)
        preset = gspec.search_presets.get(spec) if gspec is not None else None
        if preset is not None:
            return preset.spec
    return spec


def strongest_preset(game: Game) -> str | None:
    """The setting of ``game``'s strongest search preset (the highest measured win
    share against greedy), or None if it has none: "today's best search", what
    expert iteration is evaluated against."""
    gspec = getattr(game, "spec", None)
    presets = [p for p in (gspec.search_presets.values() if gspec is not None else ())
               if p.vs_greedy is not None]
    return max(presets, key=lambda p: p.vs_greedy).spec if presets else None


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
    for key in ("n", "sims", "m"):
        if key in opts and opts[key] < 1:
            raise ValueError(f"{kind}: {key} must be at least 1, got {opts[key]}")
    if opts.get("nper", 0) < 0:
        raise ValueError(f"{kind}: nper must be at least 0 (0: n simulations whatever the "
                         f"number of legal moves), got {opts['nper']}")
    for key in ("width", "top"):
        if opts.get(key, 0) < 0:
            raise ValueError(f"{kind}: {key} must be at least 0 (0: every legal move), "
                             f"got {opts[key]}")
    for key in ("c_visit", "c_scale", "gscale", "beta"):
        if opts.get(key, 0.0) < 0:
            raise ValueError(f"{kind}: {key} must be non-negative, got {opts[key]}")
    if opts.get("prior", "greedy") not in PRIORS:
        raise ValueError(f"{kind}: prior must be one of {', '.join(PRIORS)}, got "
                         f"{opts['prior']!r}")
    if opts["turns"] < 0:
        raise ValueError(f"{kind}: turns must be at least 0 (0: cut by depth only), got "
                         f"{opts['turns']}")
    if opts["depth"] < 0:
        raise ValueError(f"{kind}: depth must be at least 0, got {opts['depth']}")
    if opts["rollout"] not in ROLLOUTS:
        raise ValueError(f"{kind}: rollout must be one of {', '.join(ROLLOUTS)}, got "
                         f"{opts['rollout']!r}")
    if not 0.0 <= opts.get("mix", 0.0) <= 1.0:
        raise ValueError(f"{kind}: mix must be in [0, 1] (the rollouts' weight in a leaf's "
                         f"value against the network's), got {opts['mix']}")
    if opts.get("c", 1.0) < 0:
        raise ValueError(f"{kind}: c must be non-negative, got {opts['c']}")
    return kind, opts


#: edges a tree keeps per expanded node when ``width`` is 0 (every legal move): more
#: than any game's legal moves in random play (Jamming Traffic's most: 154)
EDGES_PER_NODE = 160


def compiled_gumbel() -> ModuleType:
    """The compiled Gumbel search (``gumbel_kernels.py``), cached like :func:`compiled_kernels`."""
    from trafficenvs.numba_cache import package_cache

    with package_cache():
        from trafficenvs.agents import gumbel_kernels
    return gumbel_kernels


def compiled_kernels() -> ModuleType:
    """The compiled search, cached with the package's kernels: it is compiled against
    each game's verbs, so its cache must change whenever a game's code does."""
    from trafficenvs.numba_cache import package_cache

    with package_cache():
        from trafficenvs.agents import search_kernels
    return search_kernels


class SearchPolicy:
    """A flat Monte Carlo, IS-MCTS or Gumbel search player for ``game`` (see the
    module); ``spec`` is a setting (``"gumbel:n=32,m=8"``) or a bare name (the game's
    preset), ``evaluator`` a network for the Gumbel search's leaves."""

    needs_records = True

    def __init__(self, game: Game, spec: str = "flatmc", name: str | None = None,
                 evaluator: Evaluator | None = None):
        #: the setting played: a bare name is the game's preset (:func:`resolve_preset`)
        self.spec = resolve_preset(game, spec)
        self.kind, self.options = parse_search_spec(self.spec)
        #: a network at the leaves (gumbel only): ``(obs, mask) -> (logits, values)``
        #: for the seat to move, in batches; None: the compiled evaluator
        self.evaluator = evaluator
        if evaluator is not None and self.kind != "gumbel":
            raise ValueError(f"{name or spec}: only gumbel searches with an evaluator")
        if self.options.get("net"):  # a checkpoint's actor and critic at the leaves
            from trafficenvs.agents.ppo import PPOPolicy

            if evaluator is not None:
                raise ValueError(f"{name or spec}: net= and evaluator= both given")
            net = PPOPolicy.load(self.options["net"], game=game)
            net.check_fits(game.obs_dim, game.num_actions)
            self.evaluator = net.evaluate
        if self.options.get("mix", 0.0) > 0 and self.evaluator is None:
            raise ValueError(f"{name or spec}: mix= weighs a network's leaf values against "
                             "rollouts: give net= (or an evaluator)")
        self.game = game
        self.name = name or spec
        self.seed = int(self.options["seed"])
        self._states: np.ndarray | None = None
        self._scratch: dict[str, Any] = {}
        self.rollout_player = None
        if self.options["rollout"] == "greedy":
            self.rollout_player = rollout_player(game, self.name)
        self.prior_player = None
        if self.options.get("prior") == "greedy":
            self.prior_player = self.rollout_player or rollout_player(game, self.name)
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
        if self.kind == "gumbel":
            o = self.options
            n = o["n"]
            a = g.num_actions
            per_node = o["width"] if 0 < o["width"] < a else min(a, EDGES_PER_NODE)
            K = compiled_gumbel()
            s["nodes"] = np.zeros((b, n + 1), K.NODE)
            s["edges"] = np.zeros((b, a + n * per_node), K.EDGE)
            s["path"] = np.zeros((b, n + 1), np.int64)
            s["cand"] = np.zeros((b, o["m"]), np.int64)
            s["gum"] = np.zeros((b, o["m"]), np.float64)
            s["logits"] = np.zeros((b, a), np.float64)
            s["policy"] = np.zeros((b, a), np.float64)
            s["halving"] = np.zeros((b, n), np.int64)
            s["st"] = np.zeros(b, K.STATE)
            s["obs"] = np.zeros((b, g.obs_dim), g.obs_dtype)
            s["leaf_logits"] = np.zeros((b, a), np.float64)
            s["leaf_values"] = np.zeros(b, np.float64)
            s["rmask"] = np.zeros((b, a), np.bool_)
            s["rret"] = np.zeros((b, g.num_players), np.float64)
            s["pgs"] = (() if self.prior_player is None else s["gs"] if
                        self.prior_player is self.rollout_player else
                        self.prior_player.rollout_scratch(b))
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
        with warnings.catch_warnings():
            # the generator helpers take any record that starts with ``rng_key`` and
            # ``rng_ctr`` (the games' records and the searches' RNG records share those
            # offsets); numba compiles them once for both and says so, once per kernel
            warnings.filterwarnings("ignore", message=".*considered a subtype of Record")
            return self._act(observation, action_mask, current_player, records)

    def _act(self, observation: np.ndarray, action_mask: np.ndarray,
             current_player: np.ndarray, records: np.ndarray | None) -> np.ndarray:
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
        elif self.kind == "gumbel" and self.evaluator is not None:
            self._network_search(observation, recs, seats, mask, out, s, b)
            self.simulations += int(s["st"][:b]["n"].sum())
        elif self.kind == "gumbel":
            G = compiled_gumbel()
            G.gumbel_search(recs, cfg, seats, mask, o["n"], o["nper"], o["m"], o["c_visit"],
                            o["c_scale"], o["gscale"], o["bonus"], o["beta"], o["width"],
                            o["depth"], o["turns"], self._states[:b], s["st"][:b],
                            s["work"][:b], s["wmask"][:b], s["ret"][:b], s["logits"][:b],
                            s["values"][:b], s["nodes"][:b], s["edges"][:b],
                            s["path"][:b], s["cand"][:b], s["gum"][:b], s["halving"][:b],
                            s["pgs"], s["gs"],
                            self.prior_player is not None
                            and self.prior_player is self.rollout_player,
                            s["evs"][:b], out, s["policy"][:b])
            self.simulations += int(s["st"][:b]["n"].sum())
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

    def _network_search(self, observation: np.ndarray, recs: np.ndarray, seats: np.ndarray,
                        mask: np.ndarray, out: np.ndarray, s: dict[str, Any], b: int) -> None:
        """The Gumbel search with :attr:`evaluator` at the leaves: each simulation
        descends every row's tree to a leaf (compiled), the leaves still to evaluate
        go to the evaluator in one batch, and their priors and values go back into the
        trees (compiled), until every row has spent its simulations."""
        G = compiled_gumbel()
        o = self.options
        cfg = self.game.cfg
        logits = s["logits"][:b]
        logits[:], _ = self._evaluate(np.ascontiguousarray(observation), mask)
        st = s["st"][:b]
        G.net_start(recs, cfg, seats, mask, o["n"], o["nper"], o["m"], o["gscale"],
                    self._states[:b], st, s["work"][:b], s["wmask"][:b], s["ret"][:b], logits,
                    s["values"][:b], s["nodes"][:b], s["edges"][:b], s["cand"][:b],
                    s["gum"][:b], s["halving"][:b], s["evs"][:b])
        leaf_logits, leaf_values = s["leaf_logits"][:b], s["leaf_values"][:b]
        for _ in range(int(st["n"].max(initial=0))):
            G.net_descend(recs, cfg, mask, o["c_visit"], o["c_scale"], st, s["work"][:b],
                          s["wmask"][:b], s["ret"][:b], s["values"][:b], s["nodes"][:b],
                          s["edges"][:b], s["path"][:b], s["cand"][:b], s["gum"][:b],
                          s["halving"][:b], s["obs"][:b], o["mix"], o["depth"], o["turns"],
                          self._states[:b], s["gs"], s["evs"][:b], s["rmask"][:b],
                          s["rret"][:b])
            rows = np.flatnonzero(st["status"] > 0)
            if rows.size:
                lg, v = self._evaluate(s["obs"][rows], s["wmask"][rows])
                leaf_logits[rows] = lg
                leaf_values[rows] = v
            G.net_backup(st, s["wmask"][:b], leaf_logits, leaf_values, o["width"],
                         s["nodes"][:b], s["edges"][:b], s["path"][:b], s["ret"][:b],
                         o["mix"], s["rret"][:b])
        G.net_finish(mask, o["c_visit"], o["c_scale"], st, s["wmask"][:b], s["values"][:b],
                     s["nodes"][:b], s["edges"][:b], s["cand"][:b], s["gum"][:b], out,
                     s["policy"][:b])

    def _evaluate(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The evaluator's ``(logits (k, A), values (k,))``, checked: a wrong shape or a
        NaN would silently corrupt every tree it reached."""
        k = obs.shape[0]
        lg, v = self.evaluator(obs, mask)
        lg = np.asarray(lg, np.float64)
        v = np.asarray(v, np.float64).reshape(-1)
        if lg.shape != (k, self.game.num_actions) or v.shape != (k,):
            raise ValueError(f"{self.name}: the evaluator must return logits ({k}, "
                             f"{self.game.num_actions}) and values ({k},); got {lg.shape} "
                             f"and {v.shape}")
        if not (np.isfinite(v).all() and np.isfinite(np.where(mask, lg, 0.0)).all()):
            raise ValueError(f"{self.name}: the evaluator returned a NaN or infinite "
                             "value or legal move's logit")
        return lg, v

    def last_policy(self, rows: int) -> np.ndarray:
        """``(rows, num_actions)``: the improved policy of the last :meth:`act` of
        ``rows`` rows (``softmax(logit + sigma(completed q))`` over the legal moves, 0
        elsewhere; gumbel only): expert iteration's target. A copy."""
        if self.kind != "gumbel":
            raise ValueError(f"{self.name}: only gumbel keeps an improved policy")
        policy = self._scratch.get("policy")
        if policy is None or rows > policy.shape[0]:
            raise ValueError(f"{self.name}: no act of {rows} rows to read a policy from")
        return policy[:rows].copy()

    def report(self) -> dict[str, float]:
        """Decisions, milliseconds per decision (batched) and rollouts per second."""
        return {"decisions": self.decisions,
                "ms_per_decision": 1000 * self.seconds / max(self.decisions, 1),
                "simulations_per_s": self.simulations / max(self.seconds, 1e-9)}
