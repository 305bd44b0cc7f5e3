"""Where a model gives up value against a search agent (why a learned player trails).

The model (argmax of a MaskablePPO checkpoint) plays the game's greedy player, seats
rotated. At each of the model's decisions with two or more legal moves, a flat Monte
Carlo search values every legal move (``SearchPolicy``'s per-move means: the result,
or the game's estimate where the rollout is cut off, for the seat to move, on common
determinizations). Reported per phase of the game (the observation's ``phase`` field;
one group for a game without one): the mean value the model's move gives up against
the search's best move, the same for the greedy player's move in the same position,
and how often each picks the search's best::

    python -m benchmarks.search_gap                                   # Jakarta, 15 k
    python -m benchmarks.search_gap --decisions 2000 --out /tmp/x.json

The search's best is measured with the same noisy values it is picked by, so the
figures carry a floor (about 0.025 in two-way decisions with ``n=2``): compare the
model with greedy, not with 0. The values never see hidden information (the search
determinizes every rollout for the seat to move).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = RESULTS.parent.parent


def phase_names(layout: Any) -> list[str] | None:
    """The phase labels of the observation's ``phase`` one-hot, read from its meaning
    (``"phase one-hot (honk, drive, ...)"`` or ``"phase one-hot: set-up, place, ..."``);
    ``None`` for a game without a phase field."""
    try:
        f = layout.field("phase")
    except KeyError:
        return None
    m = re.search(r"\(([^)]*)\)|:\s*(.*)$", f.meaning)
    names = [x.strip() for x in (m.group(1) or m.group(2)).split(",")] if m else []
    return names if len(names) == f.length else [f"phase {k}" for k in range(f.length)]


def measure(game: str, players: int, model: str, search: str, decisions: int,
            seed: int = 0, num_envs: int = 128) -> dict[str, Any]:
    """Play and value ``decisions`` decisions of the model (module docstring)."""
    import trafficenvs
    from trafficenvs.agents.greedy import make_greedy
    from trafficenvs.agents.ppo import PPOPolicy
    from trafficenvs.agents.search import SearchPolicy

    venv = trafficenvs.make_vec(game, num_envs=num_envs, num_players=players)
    g = venv.game
    student = PPOPolicy.load(model)
    student.check_fits(g.obs_dim, g.num_actions)
    greedy = make_greedy(g, seed=seed)
    teacher = SearchPolicy(g, search)
    teacher.seed_rows(seed + 17)
    names = phase_names(g.obs_layout)
    groups = len(names) if names else 1
    given = np.zeros((2, groups))  # model, greedy
    best = np.zeros((2, groups))
    count = np.zeros(groups, np.int64)
    rng = np.random.default_rng(seed)
    learner = rng.integers(0, players, num_envs)
    out = venv.reset(seed=seed)
    t0 = time.perf_counter()
    m = 0
    while m < decisions:
        cur = out.current_player
        mine = cur == learner
        actions = np.zeros(num_envs, np.int64)
        other = np.flatnonzero(~mine)
        if len(other):
            actions[other] = greedy.act(out.observation[other], out.action_mask[other],
                                        cur[other])
        rows = np.flatnonzero(mine)
        if len(rows):
            actions[rows] = student.act(out.observation[rows], out.action_mask[rows],
                                        cur[rows])
            rows = rows[out.action_mask[rows].sum(1) >= 2][:decisions - m]
        if len(rows):
            obs, mask = out.observation[rows], out.action_mask[rows].astype(bool)
            teacher.act(obs, mask, cur[rows], records=venv.records[rows])
            q = np.where(mask, np.nan_to_num(teacher.last_values(len(rows)), nan=-np.inf),
                         -np.inf)
            top = q.max(1)
            picks = (actions[rows], greedy.act(obs, mask, cur[rows]))
            ph = (np.asarray(g.obs_layout.slice(obs, "phase")).argmax(1) if names
                  else np.zeros(len(rows), np.int64))
            idx = np.arange(len(rows))
            for k, a in enumerate(picks):
                np.add.at(given[k], ph, top - q[idx, a])
                np.add.at(best[k], ph, (q[idx, a] >= top).astype(float))
            np.add.at(count, ph, 1)
            m += len(rows)
        out = venv.step(actions)
        ended = np.flatnonzero(out.terminated | out.truncated)
        learner[ended] = rng.integers(0, players, len(ended))
    wall = time.perf_counter() - t0
    table = []
    for p in range(groups):
        if count[p]:
            n = int(count[p])
            table.append({"phase": names[p] if names else "all", "decisions": n,
                          "model_gives_up": round(given[0, p] / n, 4),
                          "greedy_gives_up": round(given[1, p] / n, 4),
                          "model_picks_best": round(best[0, p] / n, 3),
                          "greedy_picks_best": round(best[1, p] / n, 3)})
    return {"game": game, "players": players, "model": model, "search": search,
            "opponent": "greedy", "decisions": int(count.sum()), "seed": seed,
            "seconds": round(wall, 1), "phases": table}


def markdown(res: dict[str, Any]) -> str:
    head = ("| phase | decisions | value the model gives up | greedy gives up | model picks "
            "the best | greedy picks the best |\n| --- | ---: | ---: | ---: | ---: | ---: |")
    rows = [f"| {r['phase']} | {r['decisions']} | {r['model_gives_up']:.3f} | "
            f"{r['greedy_gives_up']:.3f} | {r['model_picks_best']:.2f} | "
            f"{r['greedy_picks_best']:.2f} |" for r in res["phases"]]
    return "\n".join([head, *rows])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="jakarta_traffic")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--model", default=None,
                   help="checkpoint (default: the shipped one of the game and player count)")
    p.add_argument("--search", default="flatmc:n=2,depth=4,rollout=greedy")
    p.add_argument("--decisions", type=int, default=15000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="JSON to write (default: "
                   "benchmarks/results/search_gap_<game>_<n>p.json)")
    a = p.parse_args(argv)
    if a.decisions < 1:
        p.error("--decisions must be at least 1")
    model = a.model or str(ROOT / "agents/checkpoints" / f"{a.game}_{a.players}p.zip")
    res = measure(a.game, a.players, model, a.search, a.decisions, seed=a.seed)
    res["model"] = str(Path(model).resolve().relative_to(ROOT)) if Path(
        model).resolve().is_relative_to(ROOT) else model
    out = Path(a.out) if a.out else RESULTS / f"search_gap_{a.game}_{a.players}p.json"
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(markdown(res))
    print(f"{res['decisions']} decisions in {res['seconds']} s; wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
