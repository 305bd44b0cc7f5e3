"""The expert-iteration networks against greedy and today's best search: the ladder.

For every game's shipped ``agents/checkpoints/<game>_exit_2p.zip``, arenas of (2
players, seats rotated, seed 1, one numba thread):

- the network alone (``exit:PATH``) against greedy, against the game's strongest
  search preset (``search.strongest_preset``: today's best search agent) and against
  the shipped PPO model;
- the network with the search (``gumbel:<its self-play setting>,gscale=0,net=PATH``)
  against greedy, the best search and the shipped PPO model;
- for each setting :data:`MIXED` names, the network inside a search whose leaves are
  valued half by the network and half by greedy rollouts (``mix=0.5``), against the same::

    python -m benchmarks.exit                      # every game, the default games
    python -m benchmarks.exit --only traffic_jam --games 200
    python -m benchmarks.exit --missing            # only the pairs not in the results
    python -m benchmarks.exit --docs               # the README's ladder and the plot

Results merge into ``benchmarks/results/exit.json``; ``--docs`` rewrites the table
between ``<!-- exit:start -->`` and ``<!-- exit:end -->`` in the README and draws
``benchmarks/results/exit.png`` from the runs' curves (the ``history`` of
``agents/checkpoints/<game>_exit_2p.json``: win shares per iteration).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from benchmarks.search import markdown, row_key, run_entry

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = RESULTS.parent.parent
CHECKPOINTS = ROOT / "agents" / "checkpoints"
START, END = "<!-- exit:start -->", "<!-- exit:end -->"
GAMES = ("traffic_jam", "jamming_traffic", "jakarta_traffic")
#: games per pair, in every game (Jakarta Traffic's slowest pair, two searches at 8-10
#: ms per decision, is about 15 minutes of one core: the arena plays 100 games at once)
DEFAULT_GAMES = 1000


#: per game, the network's searches with mixed leaves (network value and greedy
#: rollout, ``mix=0.5``; ``,net=PATH`` is added): the setting that beat the best search
#: in a 300-game check at about its time per decision (Traffic Jam; Jakarta Traffic at
#: 32 simulations, what its self-play affords), and Traffic Jam's with four times the
#: simulations (the strongest measured, at about five times the best search's time)
MIXED = {"traffic_jam": ("gumbel:n=128,m=16,c_scale=0.5,gscale=0,mix=0.5,rollout=greedy",
                         "gumbel:n=512,m=16,c_scale=0.5,gscale=0,mix=0.5,rollout=greedy"),
         "jakarta_traffic": ("gumbel:n=32,m=8,c_scale=0.1,gscale=0,mix=0.5,rollout=greedy,"
                             "depth=4",)}


def checkpoint(game: str) -> Path:
    return CHECKPOINTS / f"{game}_exit_2p.zip"


def search_with(game: str) -> str:
    """The network with its search: the run's self-play setting, no root noise."""
    from trafficenvs.agents.expert_iteration import greedy_search_spec

    summary = json.loads(checkpoint(game).with_suffix(".json").read_text())
    rel = checkpoint(game).relative_to(ROOT)
    return f"{greedy_search_spec(summary['search'])},net={rel}"


def entries(game: str) -> list[tuple[str, str]]:
    """(agent, opponent) pairs of ``game``'s ladder."""
    import trafficenvs
    from trafficenvs.agents.search import strongest_preset

    best = strongest_preset(trafficenvs.make_game(game, num_players=2))
    net = f"exit:{checkpoint(game).relative_to(ROOT)}"
    ppo = f"ppo:{(CHECKPOINTS / f'{game}_2p.zip').relative_to(ROOT)}"
    search = search_with(game)
    pairs = [(net, "greedy"), (net, best), (net, ppo), (search, "greedy"), (search, best),
             (search, ppo)]
    for setting in MIXED.get(game, ()):
        mixed = f"{setting},net={checkpoint(game).relative_to(ROOT)}"
        if set(mixed.split(",")) != set(search.split(",")):  # not the run's own setting
            pairs += [(mixed, "greedy"), (mixed, best), (mixed, ppo)]
    return pairs


def plot(path: Path) -> Path:
    """The runs' curves: each game's win shares per self-play decision."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    fig, axes = plt.subplots(1, len(GAMES), figsize=(5 * len(GAMES), 3.6), squeeze=False)
    for ax, game in zip(axes[0], GAMES):
        summary_path = checkpoint(game).with_suffix(".json")
        ax.set_title(game)
        ax.axhline(0.5, color="grey", lw=0.8, ls=":")
        if not summary_path.exists():
            continue
        rows = [r for r in json.loads(summary_path.read_text())["history"]
                if "net_vs_greedy" in r]
        for key, style in (("net_vs_greedy", "C0-"), ("net_vs_best_search", "C1-"),
                           ("search_vs_greedy", "C0--"), ("search_vs_best_search", "C1--")):
            pts = [(r["decisions"], r[key]) for r in rows if key in r]
            if pts:
                ax.plot(*zip(*pts), style, marker="o", ms=3,
                        label=key.replace("net_", "network ").replace("search_", "network + "
                                                                       "search ")
                        .replace("vs_", "vs ").replace("best_search", "best search"))
        ax.set_xlabel("self-play decisions")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x / 1e3:.0f} k"))
        ax.set_ylim(0, 1)
    axes[0][0].set_ylabel("win share (2 players)")
    axes[0][0].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def ladder_table(rows: list[dict[str, Any]]) -> str:
    """The README's ladder: the search table's columns, headed for any agent."""
    return (markdown(rows).replace("| search agent |", "| agent |")
            .replace("win share of the search agent", "win share of the agent"))


def write_docs(rows: list[dict[str, Any]]) -> list[Path]:
    path = ROOT / "README.md"
    text = path.read_text()
    if START not in text or END not in text:
        return []
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    table = ladder_table(rows)
    new = f"{head}{START}\n{table}\n{END}{tail}"
    if new == text:
        return []
    path.write_text(new)
    return [path]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="*", default=None, help="games to run")
    p.add_argument("--games", type=int, default=None, help="games per pair")
    p.add_argument("--missing", action="store_true",
                   help="only play the pairs that the results do not hold yet")
    p.add_argument("--docs", action="store_true",
                   help="only rewrite the README's ladder and the plot from the results")
    args = p.parse_args(argv)
    out = RESULTS / "exit.json"
    rows = json.loads(out.read_text()) if out.exists() else []
    if args.docs:
        for path in write_docs(rows) + [plot(RESULTS / "exit.png")]:
            print(f"wrote {path.relative_to(ROOT)}")
        return 0
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)  # one core per arena: two processes' torch threads collide
    for game in GAMES:
        if (args.only and game not in args.only) or not checkpoint(game).exists():
            continue
        done = {row_key(r) for r in rows}
        for agent, opponent in entries(game):
            if args.missing and (game, 2, agent, opponent) in done:
                continue
            row = run_entry(game, 2, agent, args.games or DEFAULT_GAMES, opponent)
            print(markdown([row]).splitlines()[-1], flush=True)
            rows = [r for r in rows if row_key(r) != row_key(row)] + [row]
            rows.sort(key=lambda r: (GAMES.index(r["game"]), r["agent"], r["opponent"]))
            out.write_text(json.dumps(rows, indent=2) + "\n")
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
