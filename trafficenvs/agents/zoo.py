"""Agents by name, as the command line spells them.

``random`` (uniform legal moves), ``greedy`` (the game's rule-based player),
``ppo:PATH`` (a MaskablePPO checkpoint playing its most likely legal move) and
``ppo-sample:PATH`` (the same checkpoint sampling from its policy), ``exit:PATH`` (an
expert-iteration network alone, its most likely legal move: ``agents/expert_iteration.py``;
the same weights-only format as the batched trainer's), and the search
agents ``flatmc[:n=64,depth=200,seed=0]`` and ``mcts[:sims=400,c=1.4,depth=100,seed=0]``
(``agents/search.py``).
"""

from __future__ import annotations

from pathlib import Path

from trafficenvs.agents.greedy import make_greedy
from trafficenvs.agents.policy import Policy, RandomPolicy
from trafficenvs.core.game import Game

SPECS = ("random", "greedy", "ppo:PATH", "ppo-sample:PATH", "exit:PATH", "flatmc[:n=64,...]",
         "mcts[:sims=400,...]", "gumbel[:n=64,m=16,...]")


def make_agent(spec: str, game: Game, seed: int | None = None) -> Policy:
    """The agent ``spec`` names, for ``game``'s configuration."""
    spec = spec.strip()
    if spec == "random":
        return RandomPolicy(seed)
    if spec == "greedy":
        return make_greedy(game, seed=seed)
    kind, sep, path = spec.partition(":")
    if kind in ("flatmc", "mcts", "gumbel"):
        from trafficenvs.agents.search import SearchPolicy

        agent = SearchPolicy(game, spec)
        if seed is not None and "seed=" not in spec:
            agent.seed_rows(seed)
        return agent
    if sep and kind in ("ppo", "ppo-sample", "exit") and path:
        from trafficenvs.agents.ppo import PPOPolicy

        agent = PPOPolicy.load(path, name=f"{kind}:{Path(path).stem}",
                               deterministic=kind != "ppo-sample", game=game)
        agent.check_fits(game.obs_dim, game.num_actions)
        return agent
    import difflib

    close = difflib.get_close_matches(kind, ["random", "greedy", "ppo", "ppo-sample", "exit",
                                             "flatmc", "mcts", "gumbel"], n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ValueError(f"unknown agent {spec!r}{hint}; agents are {', '.join(SPECS)}")


def make_agents(specs: list[str], game: Game, seed: int = 0) -> list[Policy]:
    """Agents for ``specs``, with unique names (a repeated name gets ``#2``, ``#3``...)."""
    agents = [make_agent(s, game, seed=seed + 1000 * i) for i, s in enumerate(specs)]
    seen: dict[str, int] = {}
    for a in agents:
        k = seen.get(a.name, 0) + 1
        seen[a.name] = k
        if k > 1:
            a.name = f"{a.name}#{k}"
    return agents


def split_agent_specs(text: str) -> list[str]:
    """``"mcts:sims=400,c=2,greedy"`` -> ``["mcts:sims=400,c=2", "greedy"]``: a piece
    ``key=value`` with no ``:`` is another option of the agent before it."""
    specs: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if not piece:
            continue
        if "=" in piece and ":" not in piece and specs:
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    return specs
