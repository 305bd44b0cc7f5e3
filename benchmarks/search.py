"""The search agents against the greedy players: the tables of docs/search.md.

Each entry is one arena of a search agent against the game's greedy player (seats
rotated; at 3 and 4 players every mix of the two agents over the seats), seed 1, on
one numba thread (the arena's batch of games is the search's batch of decisions)::

    python -m benchmarks.search                       # every entry of TABLE
    python -m benchmarks.search --only traffic_jam    # one game's entries
    python -m benchmarks.search --games 200           # a quicker, noisier run
    python -m benchmarks.search --agent gumbel        # the entries of one search kind

An entry may name another opponent than greedy (the Gumbel search against the best
flat Monte Carlo setting, at equal cost: both agents' milliseconds per decision are
kept, ``opponent_ms_per_decision``).

Results merge into ``benchmarks/results/search.json`` (keyed by game, players and
agent), with the win share and its 95% interval, milliseconds per decision,
simulations per second, games per second and the machine; ``--docs`` rewrites the
tables between ``<!-- search:start -->`` and ``<!-- search:end -->`` in the README
(every entry) and each game's rules page (its entries) from the JSON, and
``notebooks/02_strategies.ipynb`` reads it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = RESULTS.parent.parent
START, END = "<!-- search:start -->", "<!-- search:end -->"

TJ_GUMBEL = "gumbel:n=640,nper=32,m=20,rollout=greedy,bonus=4,c_scale=2,gscale=0"
JT_GUMBEL = ("gumbel:n=28,m=7,depth=200,turns=1,rollout=greedy,beta=3,gscale=0,bonus=8,"
             "c_scale=2")
JK_GUMBEL = "gumbel:n=128,nper=2,m=32,depth=4,rollout=greedy,c_scale=2,gscale=0,bonus=8,beta=1"

#: (game, players, search agent, games[, opponent]): the settings each game's page
#: reports; the opponent is greedy unless named
TABLE: list[tuple[str, int, str, int] | tuple[str, int, str, int, str]] = [
    ("traffic_jam", 2, "flatmc:n=32,rollout=greedy", 1000),
    ("traffic_jam", 2, "flatmc:n=256", 1000),
    ("traffic_jam", 3, "flatmc:n=32,rollout=greedy", 600),
    ("traffic_jam", 4, "flatmc:n=32,rollout=greedy", 600),
    ("jamming_traffic", 2, "flatmc:n=4,depth=200,turns=1,rollout=greedy,top=6", 1000),
    ("jakarta_traffic", 2, "flatmc:n=2,depth=4,rollout=greedy", 1000),
    # the presets of gumbel and mcts (GameSpec.search_presets), and gumbel against the
    # best flat Monte Carlo setting at the same budget
    ("traffic_jam", 2, TJ_GUMBEL, 1000),
    ("traffic_jam", 2, TJ_GUMBEL, 1000, "flatmc:n=32,rollout=greedy"),
    ("traffic_jam", 2, "mcts:sims=200,rollout=greedy", 300),
    ("jamming_traffic", 2, JT_GUMBEL, 1000),
    ("jamming_traffic", 2, JT_GUMBEL, 1000, "flatmc:n=4,depth=200,turns=1,rollout=greedy,top=6"),
    # mcts expands untried moves at random below the root (docs/search.md): its two
    # settings here show what a deeper tree buys in Jamming Traffic
    ("jamming_traffic", 2, "mcts:sims=28,depth=200,turns=1,rollout=greedy,top=6", 300),
    ("jamming_traffic", 2, "mcts:sims=7,depth=200,turns=1,rollout=greedy,top=6", 300),
    ("jakarta_traffic", 2, JK_GUMBEL, 300),
    ("jakarta_traffic", 2, JK_GUMBEL, 300, "flatmc:n=2,depth=4,rollout=greedy"),
    ("jakarta_traffic", 2, "mcts:sims=64,depth=4,rollout=greedy,top=8", 200),
]


def run_entry(game: str, players: int, spec: str, games: int, opponent: str = "greedy"
              ) -> dict[str, Any]:
    """One arena of ``spec`` against ``opponent`` (greedy unless named); its figures."""
    import trafficenvs
    from trafficenvs.agents.arena import run_arena
    from trafficenvs.agents.zoo import make_agents

    g = trafficenvs.make_game(game, num_players=players)
    agents = make_agents([spec, opponent], g, seed=0)
    run_arena(game, agents, players, games=2, seed=99, num_envs=2)  # compile first
    for a in agents:
        if hasattr(a, "simulations"):
            a.simulations, a.seconds, a.decisions = 0, 0.0, 0
    t0 = time.perf_counter()
    res = run_arena(game, agents, players, games=games, seed=1, num_envs=min(games, 100))
    wall = time.perf_counter() - t0
    s = res.stats(agents[0].name)
    extra = ({} if opponent == "greedy" else
             {"opponent_ms_per_decision": round(res.stats(agents[1].name).ms_per_decision, 3)})
    return {"game": game, "players": players, "agent": spec, "opponent": opponent, **extra,
            "games": res.games, "win_share": round(s.win_share, 4),
            "ci": [round(s.win_ci[0], 4), round(s.win_ci[1], 4)],
            "share_if_even": round(s.seats_played / (res.games * players), 4),
            "ms_per_decision": round(s.ms_per_decision, 3),
            "simulations_per_s": round(s.simulations_per_s or 0.0, 1),
            "games_per_s": round(res.games / wall, 2), "seconds": round(wall, 1),
            "mean_length": round(res.mean_length, 1),
            "date": time.strftime("%Y-%m-%d"), "machine": platform.processor() or
            platform.machine(), "cpus": os.cpu_count()}


def entry_key(game: str, players: int, spec: str, games: int = 0, opponent: str = "greedy"
              ) -> tuple[str, int, str, str]:
    """What identifies a TABLE entry (and its row in the JSON)."""
    return game, players, spec, opponent


def row_key(r: dict[str, Any]) -> tuple[str, int, str, str]:
    return r["game"], r["players"], r["agent"], r.get("opponent", "greedy")


def greedy_share(r: dict[str, Any]) -> float:
    """The other agent's seats' win share in entry ``r`` (greedy's, unless the entry
    names another opponent; every game's shares sum to 1)."""
    n, g = r["players"], r["games"]
    seats = r["share_if_even"] * g * n  # the search agent's seats
    return (g - r["win_share"] * seats) / (g * n - seats)


def markdown(rows: list[dict[str, Any]]) -> str:
    """The entries as a markdown table (win shares per seat played; 1/N is even). An
    entry against another search shows both agents' milliseconds per decision."""
    lines = ["| game | players | search agent | against | games | win share of the search "
             "agent | 95% CI | the other's | ms / decision | simulations / s | games / s |",
             "| --- | ---: | --- | --- | ---: | ---: | :---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        opp = r.get("opponent", "greedy")
        ms = f"{r['ms_per_decision']:.1f}"
        if "opponent_ms_per_decision" in r:
            ms += f" (its {r['opponent_ms_per_decision']:.1f})"
        lines.append(f"| {r['game']} | {r['players']} | `{r['agent']}` | "
                     f"{opp if opp == 'greedy' else f'`{opp}`'} | {r['games']} | "
                     f"{r['win_share']:.3f} | [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}] | "
                     f"{greedy_share(r):.3f} | {ms} | {r['simulations_per_s']:,.0f} | "
                     f"{r['games_per_s']:.1f} |")
    return "\n".join(lines)


def write_docs(rows: list[dict[str, Any]]) -> list[Path]:
    """Rewrite the marked tables of the README and the rules pages; the files changed."""
    changed = []
    pages = [(ROOT / "README.md", rows)]
    for game in sorted({r["game"] for r in rows}):
        pages.append((ROOT / "docs" / "rules" / f"{game}.md",
                      [r for r in rows if r["game"] == game]))
    for path, sel in pages:
        text = path.read_text()
        if START not in text or END not in text:
            continue
        head, rest = text.split(START, 1)
        _, tail = rest.split(END, 1)
        new = f"{head}{START}\n{markdown(sel)}\n{END}{tail}"
        if new != text:
            path.write_text(new)
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="*", default=None, help="games to run")
    p.add_argument("--games", type=int, default=None, help="games per entry (default: TABLE's)")
    p.add_argument("--out", default=str(RESULTS / "search.json"),
                   help="the JSON to merge the entries into (two runs side by side: two "
                        "files, merged after)")
    p.add_argument("--players", type=int, default=None, help="only the entries at this many")
    p.add_argument("--agent", default=None,
                   help="only the entries whose search agent's spec contains this")
    p.add_argument("--docs", action="store_true",
                   help="only rewrite the README's and rules pages' tables from the JSON")
    args = p.parse_args(argv)
    if args.docs:
        rows = json.loads((RESULTS / "search.json").read_text())
        for path in write_docs(rows):
            print(f"rewrote {path.relative_to(ROOT)}")
        return 0
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    path = Path(args.out)
    rows = json.loads(path.read_text()) if path.exists() else []
    order = {entry_key(*e): k for k, e in enumerate(TABLE)}
    for entry in TABLE:
        game, players, spec, games = entry[:4]
        opponent = entry[4] if len(entry) > 4 else "greedy"
        if ((args.only and game not in args.only) or (args.agent and args.agent not in spec)
                or (args.players and players != args.players)):
            continue
        row = run_entry(game, players, spec, args.games or games, opponent)
        print(markdown([row]).splitlines()[-1], flush=True)
        key = entry_key(*entry)
        rows = [r for r in rows if row_key(r) != key] + [row]
        rows.sort(key=lambda r: order.get(row_key(r), len(order)))
        path.write_text(json.dumps(rows, indent=2) + "\n")
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
