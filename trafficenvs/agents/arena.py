"""The arena: any agents, any player count, thousands of games played as one batch.

Seats are rotated so no agent profits from a seat: with at least as many agents as
seats, every set of ``N`` distinct agents plays in each of its ``N`` cyclic seat
orders; with fewer agents than seats, every assignment of agents to seats that
mixes at least two agents is used. Games are dealt to these line-ups in turn, and
every batch row plays a fixed quota of games (no bias towards short games).

Reported per agent: **win share** (a win counts 1, a k-way shared win 1/k, a game
cut by the move limit 1/N, from the C2 result) with a 95% Wilson score interval
(:func:`share_ci`, scipy's ``binomtest(...).proportion_ci(method="wilson")``), mean
reward (its interval the same Wilson interval: in the arena the C2 reward is the win
share rescaled, :func:`bounded_mean_ci`), mean score (the game's own count, e.g. joy
points, with a t interval, :func:`mean_ci`), mean game length (moves) and an
openskill rating; plus the head-to-head matrix (share of the games in which the row
agent finished above the column agent, ties half, with its Wilson interval). The
tables round every interval outwards, so a sweep of ``n`` games prints its lower
bound below 1 (``1.000 [0.999, 1.000]``), never ``[1.000, 1.000]``.
The cost of each agent is timed too: milliseconds per decision (an agent's batched
calls' wall time over the decisions it made in them; the batch is the games waiting
for it, so it is the cost in this arena's batching, on this machine's threads), and
for search agents the simulations per second from their own ``report()``.
"""

from __future__ import annotations

import itertools
import json
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from tabulate import tabulate

from trafficenvs.agents.policy import Policy, act_rows
from trafficenvs.agents.ratings import rate_games
from trafficenvs.core.game import Game
from trafficenvs.registry import as_game, make_vec

#: the confidence level of every interval the arena reports
CONFIDENCE = 0.95


def lineups_for(num_agents: int, num_players: int) -> np.ndarray:
    """Seat assignments ``(L, num_players)`` of agent indices (see module docstring)."""
    if num_agents < 1:
        raise ValueError("the arena needs at least one agent")
    if num_agents >= num_players:
        out = []
        for combo in itertools.combinations(range(num_agents), num_players):
            for r in range(num_players):
                out.append(combo[r:] + combo[:r])
        return np.array(out, np.int64)
    if num_agents == 1:
        return np.zeros((1, num_players), np.int64)
    out = [p for p in itertools.product(range(num_agents), repeat=num_players)
           if len(set(p)) > 1]
    return np.array(out, np.int64)


def win_shares(returns: np.ndarray) -> np.ndarray:
    """Per game and seat, the share of the win from the C2 rewards ``(G, N)``."""
    win = returns > 1e-6
    k = win.sum(axis=1, keepdims=True)
    n = returns.shape[1]
    return np.where(k > 0, win / np.maximum(k, 1), 1.0 / n)


def share_ci(x: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """Mean of shares in ``[0, 1]`` (a win 1, a loss 0, a k-way shared win 1/k, a cut game
    1/N) and its Wilson score interval, from scipy (``scipy.stats.binomtest(k, n)
    .proportion_ci(confidence, method="wilson")``).

    Why Wilson on the tie-split count: a share ``X`` in ``[0, 1]`` with mean ``p`` has
    ``Var X <= p (1 - p)``, the Bernoulli variance, with equality when there are no ties.
    The Wilson interval is the set of ``p`` that a score test with that variance
    does not reject, so with ties (a smaller true variance) it is conservative, never
    too narrow. It stays inside ``[0, 1]`` and is never a point for a finite number of
    games: a sweep of ``n`` gives ``[n / (n + z^2), 1]`` (10 of 10: ``[0.722, 1]``),
    where the normal (Wald) interval collapses to ``[1, 1]`` and a bootstrap
    resamples only ones. scipy's binomtest takes whole counts, so a fractional count
    (shared wins) is bracketed: the lower bound of its floor and the upper bound of
    its ceiling (both bounds grow with the count), at most ``1/n`` wider.
    Empty input gives NaNs.
    """
    from scipy.stats import binomtest

    x = np.asarray(x, np.float64)
    n = len(x)
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    if not np.all((x >= 0) & (x <= 1)):
        raise ValueError("share_ci takes shares in [0, 1]")
    total = float(x.sum())
    k = round(total)
    lo_k, hi_k = (k, k) if abs(total - k) < 1e-9 else (math.floor(total), math.ceil(total))
    lo = binomtest(lo_k, n).proportion_ci(confidence, method="wilson").low
    hi = binomtest(min(hi_k, n), n).proportion_ci(confidence, method="wilson").high
    return total / n, float(lo), float(hi)


def bounded_mean_ci(x: np.ndarray, low: float, high: float,
                    confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """Mean of values known to lie in ``[low, high]`` and its interval: :func:`share_ci`
    of the values rescaled to ``[0, 1]``, mapped back (conservative for the same reason).

    The arena's mean reward: a C2 reward lies in ``[-1/(N-1), 1]`` and rescaled it *is*
    the win share (``((N - 1) r + 1) / N``), so the reward's interval is the win
    share's, mapped, and the two columns never disagree. Values outside the range
    (rewards that are not C2) fall back to the t interval, :func:`mean_ci`.
    """
    x = np.asarray(x, np.float64)
    span = high - low
    if len(x) == 0 or span <= 0 or np.any(x < low - 1e-9) or np.any(x > high + 1e-9):
        return mean_ci(x, confidence)
    u = np.clip((x - low) / span, 0.0, 1.0)
    _, lo, hi = share_ci(u, confidence)
    return float(x.mean()), low + lo * span, low + hi * span


def mean_ci(x: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """Mean and its Student t interval, from scipy (``scipy.stats.t.interval`` with the
    standard error ``scipy.stats.sem``): for means of unbounded counts such as the
    game's score. The bounds are NaN with fewer than two values or no spread at all
    (a t interval needs a variance to estimate; it is not a point)."""
    from scipy import stats

    x = np.asarray(x, np.float64)
    if len(x) == 0:
        return float("nan"), float("nan"), float("nan")
    m = float(np.mean(x))
    if len(x) < 2 or float(np.ptp(x)) == 0.0:
        return m, float("nan"), float("nan")
    lo, hi = stats.t.interval(confidence, len(x) - 1, loc=m, scale=stats.sem(x))
    return m, float(lo), float(hi)


def ci_text(lo: float, hi: float, digits: int = 3, sign: bool = False) -> str:
    """``[lo, hi]`` rounded outwards to ``digits`` decimals (the lower bound down, the
    upper up), so the printed interval contains the computed one: a Wilson lower
    bound of 0.99996 prints as 0.999, not as 1.000."""
    def fmt(v: float, up: bool) -> str:
        if math.isnan(v):
            return "nan"
        q = 10.0**digits
        r = (math.ceil(v * q - 1e-9) if up else math.floor(v * q + 1e-9)) / q
        return f"{r:+.{digits}f}" if sign else f"{r:.{digits}f}"

    return f"[{fmt(lo, False)}, {fmt(hi, True)}]"


@dataclass
class AgentStats:
    name: str
    seats_played: int
    win_share: float
    win_ci: tuple[float, float]
    mean_reward: float
    mean_score: float
    mean_length: float
    rating: dict[str, float]
    #: decisions made, ms per decision (batched), and for search agents simulations/s
    decisions: int = 0
    ms_per_decision: float = float("nan")
    simulations_per_s: float | None = None
    #: 95% intervals of the mean reward (the win share's Wilson interval, rescaled:
    #: :func:`bounded_mean_ci`) and of the mean score (t interval, :func:`mean_ci`)
    reward_ci: tuple[float, float] = (float("nan"), float("nan"))
    score_ci: tuple[float, float] = (float("nan"), float("nan"))


@dataclass
class ArenaResult:
    """What :func:`run_arena` measured (``table()`` for people, ``to_json()`` for files)."""

    env_id: str
    num_players: int
    games: int
    seed: int
    seconds: float
    mean_length: float
    truncated: int
    agents: list[AgentStats]
    #: head_to_head[a][b]: share of shared games where a finished above b (ties 1/2)
    head_to_head: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    #: per game, in the order the games ended: the agent index in each seat ``(G, N)``,
    #: the seats' C2 returns ``(G, N)`` and scores ``(G, N)``, the length in moves
    #: ``(G,)`` and whether the move limit cut it ``(G,)``; for plots and your own
    #: statistics (not written by ``to_json``)
    games_data: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    #: the final record of every game (same order), if ``run_arena(keep_records=True)``
    final_records: np.ndarray | None = field(default=None, repr=False)

    def stats(self, name: str) -> AgentStats:
        for a in self.agents:
            if a.name == name:
                return a
        raise KeyError(name)

    def table(self, tablefmt: str = "pipe") -> str:
        """The results as two tables, per agent (best win share first), then head to
        head (row vs column), under a line saying what was played.

        Rendered by tabulate in ``tablefmt``: ``"pipe"`` (the default) is Markdown
        that GitHub and most viewers render, with the columns aligned in the text too;
        ``"simple"`` or any other tabulate format gives the same cells for a terminal
        or a paper. The cells are formatted here (tabulate does not reformat them), so
        every format shows the same digits and the intervals rounded outwards.
        """
        lines = [
            f"{self.env_id}, {self.num_players} players, {self.games} games "
            f"(seats rotated, seed {self.seed}), {self.seconds:.1f} s; mean game length "
            f"{self.mean_length:.1f} moves; {self.truncated} cut by the move limit",
            "",
        ]
        rows = []
        for a in sorted(self.agents, key=lambda s: -s.win_share):
            sims = "-" if a.simulations_per_s is None else f"{a.simulations_per_s:,.0f}"
            rows.append([
                a.name, f"{a.win_share:.3f}", ci_text(*a.win_ci),
                f"{a.mean_reward:+.3f} {ci_text(*a.reward_ci, sign=True)}",
                f"{a.mean_score:.2f} {ci_text(*a.score_ci, digits=2)}",
                f"{a.rating['mu']:.1f}, {a.rating['sigma']:.2f}",
                f"{a.ms_per_decision:.3f}", sims,
            ])
        lines.append(tabulate(
            rows, headers=["agent", "win share", "95% CI", "mean reward", "mean score",
                           "rating (mu, sigma)", "ms / decision", "simulations / s"],
            tablefmt=tablefmt, disable_numparse=True,
            colalign=("left", "right", "center", "right", "right", "center", "right",
                      "right")))
        names = [a.name for a in self.agents]
        if len(names) > 1:
            rows = []
            for a in names:
                cells = [a]
                for b in names:
                    h = self.head_to_head.get(a, {}).get(b)
                    cells.append(
                        "-" if h is None or a == b
                        else f"{h['share']:.3f} {ci_text(*h['ci'])} n={h['n']}"
                    )
                rows.append(cells)
            lines += ["", tabulate(rows, headers=["row vs column", *names], tablefmt=tablefmt,
                                   disable_numparse=True,
                                   colalign=("left", *["center"] * len(names)))]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The summary (everything but the per-game arrays) as plain data."""
        out = asdict(self)
        out.pop("games_data")
        out.pop("final_records")
        return out

    def to_json(self, path: str | None = None) -> str:
        text = json.dumps(self.to_dict(), indent=2)
        if path:
            with open(path, "w") as f:
                f.write(text + "\n")
        return text


def _simulations(agent: Policy) -> int | None:
    """The rollouts a search agent has played so far (None for other agents)."""
    n = getattr(agent, "simulations", None)
    return int(n) if n is not None else None


def run_arena(
    game: Game | str,
    agents: Sequence[Policy],
    num_players: int | None = None,
    games: int = 1000,
    seed: int = 0,
    num_envs: int | None = None,
    max_cycles: int | None = None,
    keep_records: bool = False,
    **options: Any,
) -> ArenaResult:
    """Play ``games`` games among ``agents`` (seats rotated) and measure them.

    ``keep_records`` also returns every game's final record (the whole end position,
    for questions the summary does not answer, e.g. what the winners scored with).

    ``game`` is a :class:`~trafficenvs.core.game.Game` (the one the agents were made
    for: its options hold) or an env id, made with ``num_players`` and ``options``.
    """
    game = as_game(game, num_players, **options)
    num_players = game.num_players
    if getattr(game, "shaping", False):
        raise ValueError("the arena judges by the C2 result: play it without shaping")
    if games < 1:
        raise ValueError("games must be at least 1")
    names = [a.name for a in agents]
    if len(set(names)) != len(names):
        raise ValueError(f"agent names must be unique, got {names}")
    t0 = time.perf_counter()
    lineups = lineups_for(len(agents), num_players)
    b = min(games, num_envs or 4096)
    venv = make_vec(game, num_envs=b, max_cycles=max_cycles)
    game = venv.game
    out = venv.reset(seed=seed)
    quota = np.full(b, games // b, np.int64)
    quota[: games % b] += 1
    played = np.zeros(b, np.int64)
    rows = np.arange(b)
    # the g-th game overall (row i's k-th game is number i + k*b) takes line-up g % L
    lineup_of = lineups[rows % len(lineups)].copy()
    ret = np.zeros((b, num_players), np.float64)
    act_s = np.zeros(len(agents))
    act_n = np.zeros(len(agents), np.int64)
    sims0 = [_simulations(a) for a in agents]
    res_lineup, res_ret, res_score, res_len, res_trunc, res_rec = [], [], [], [], [], []
    active = quota > 0
    while active.any():
        seat_agent = lineup_of[rows, out.current_player]
        actions = np.zeros(b, np.int64)
        for a, agent in enumerate(agents):
            sel = np.flatnonzero(active & (seat_agent == a))
            if len(sel):
                t_act = time.perf_counter()
                actions[sel] = act_rows(agent, venv, out, sel)
                act_s[a] += time.perf_counter() - t_act
                act_n[a] += len(sel)
        out = venv.step(actions, active=active)
        ret += out.rewards
        ended = np.flatnonzero((out.terminated | out.truncated) & active)
        for i in ended:
            rec = out.final_records[i]
            res_lineup.append(lineup_of[i].copy())
            res_ret.append(ret[i].copy())
            res_score.append(np.asarray(game.scores(rec), np.float64)[:num_players])
            res_len.append(int(rec["moves"]))
            res_trunc.append(bool(out.truncated[i]))
            if keep_records:
                res_rec.append(rec.copy())
            ret[i] = 0.0
            played[i] += 1
            lineup_of[i] = lineups[(i + played[i] * b) % len(lineups)]
        active = played < quota
    lu = np.array(res_lineup)
    rt = np.array(res_ret)
    sc = np.array(res_score)
    ln = np.array(res_len, np.float64)
    share = win_shares(rt)
    ratings = rate_games(names, lu, rt)
    stats = []
    low_reward = -1.0 / (num_players - 1) if num_players > 1 else -1.0  # C2's range
    for a, name in enumerate(names):
        g_idx, s_idx = np.nonzero(lu == a)
        m, lo, hi = share_ci(share[g_idx, s_idx])
        mr, r_lo, r_hi = bounded_mean_ci(rt[g_idx, s_idx], low_reward, 1.0)
        ms, s_lo, s_hi = mean_ci(sc[g_idx, s_idx])
        stats.append(AgentStats(
            name=name, seats_played=len(g_idx), win_share=m, win_ci=(lo, hi),
            mean_reward=mr, mean_score=ms, reward_ci=(r_lo, r_hi), score_ci=(s_lo, s_hi),
            mean_length=float(ln[g_idx].mean()) if len(g_idx) else float("nan"),
            rating=ratings[name],
            decisions=int(act_n[a]),
            ms_per_decision=1000 * act_s[a] / max(act_n[a], 1),
            simulations_per_s=(None if sims0[a] is None
                               else (_simulations(agents[a]) - sims0[a]) / max(act_s[a], 1e-9)),
        ))
    h2h: dict[str, dict[str, dict[str, float]]] = {}
    for a, b_ in itertools.permutations(range(len(names)), 2):
        vals = []
        for s1 in range(num_players):
            for s2 in range(num_players):
                if s1 == s2:
                    continue
                g = (lu[:, s1] == a) & (lu[:, s2] == b_)
                if g.any():
                    d = rt[g, s1] - rt[g, s2]
                    vals.append(np.where(d > 1e-6, 1.0, np.where(d < -1e-6, 0.0, 0.5)))
        if vals:
            v = np.concatenate(vals)
            m, lo, hi = share_ci(v)
            h2h.setdefault(names[a], {})[names[b_]] = {"share": m, "ci": (lo, hi), "n": len(v)}
    return ArenaResult(
        env_id=game.env_id(), num_players=num_players, games=len(lu), seed=seed,
        seconds=time.perf_counter() - t0, mean_length=float(ln.mean()),
        truncated=int(np.sum(res_trunc)), agents=stats, head_to_head=h2h,
        games_data={"lineup": lu, "returns": rt, "scores": sc, "length": ln,
                    "truncated": np.array(res_trunc, bool)},
        final_records=np.array(res_rec, dtype=game.record_dtype) if keep_records else None,
    )
